// Tools → Run Layout: executes the open layout on this machine (CPU ranks, or CUDA GPUs in
// a CUDA build with GPUs present) with a progress bar, the live loss and Stop; optionally
// checks the result against the unsharded reference and profiles the run, whose trace is
// offered to the timeline when the run ends (profile_ready).
#pragma once

#include <map>

#include <QDialog>

#include "gui/app/background_jobs.h"
#include "gui/dialogs/run_worker.h"
#include "core/layout/layout.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace meshwork::gui {

class LossPlot;

class RunDialog : public QDialog {
    Q_OBJECT
public:
    explicit RunDialog(const Layout& layout, QWidget* parent = nullptr);

    // Starts the run from the fields; false (and the reason in status_text()) when refused.
    bool start_run();
    void stop_run();
    [[nodiscard]] bool running() const { return worker_->running(); }
    [[nodiscard]] QString status_text() const;
    [[nodiscard]] LossPlot* loss_plot() const { return loss_; }
    [[nodiscard]] QProgressBar* progress_bar() const { return progress_; }
    void set_steps(int steps);
    void set_check(bool check);
    void set_profile_path(const QString& path);  // empty: no profile
    [[nodiscard]] const RunOutcome& outcome() const { return outcome_; }
    // Whether every backend has been probed (on a worker thread as the dialog opens).
    [[nodiscard]] bool backends_probed() const { return probed_; }
    [[nodiscard]] QComboBox* backend_box() const { return backend_; }

signals:
    void profile_ready(const QString& path);
    void run_done(bool ok);

protected:
    void reject() override;  // Esc stops a running run before closing

private:
    QFormLayout* build_form();
    QHBoxLayout* build_run_row();
    void connect_worker();
    void show_outcome(const RunOutcome& outcome);
    [[nodiscard]] engine::RunRequest build_request() const;
    [[nodiscard]] engine::BackendKind selected_backend() const;
    void update_memory_note();
    // Probes every backend but the CPU's off the UI thread (CUDA loads its plugin and asks
    // the driver), then marks the entries that cannot run here with the reason.
    void probe_backends();
    void mark_backend(engine::BackendKind kind);
    void show_memory_note(const QString& text, const QColor& colour);
    void set_running(bool running);
    void show_status(const QString& text, const QColor& colour);

    Layout layout_;
    RunWorker* worker_ = nullptr;
    QComboBox* backend_ = nullptr;
    QSpinBox* steps_ = nullptr;
    QSpinBox* seed_ = nullptr;
    QCheckBox* check_ = nullptr;
    QDoubleSpinBox* tolerance_ = nullptr;
    QCheckBox* profile_ = nullptr;
    QLineEdit* profile_path_ = nullptr;
    QLabel* memory_ = nullptr;
    QPushButton* run_ = nullptr;
    QPushButton* stop_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* status_ = nullptr;
    LossPlot* loss_ = nullptr;
    RunOutcome outcome_;
    bool fits_ = true;
    // Why a backend cannot run here (empty: it can); probed as the dialog opens.
    std::map<engine::BackendKind, QString> backend_reasons_;
    bool probed_ = false;
    BackgroundJobs probes_;  // last: cancelled and waited for before the members above go
};

}  // namespace meshwork::gui
