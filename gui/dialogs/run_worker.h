// Runs the open layout for real (core/engine) on a worker thread for the run dialog: every
// rank a thread of this process, optionally the unsharded reference first (--check), a
// profile written through the profiler's TraceWriter. Steps arrive on the GUI thread as
// they finish; cancel() stops every rank at its next op (the profile is still closed).
#pragma once

#include <QObject>
#include <QString>

#include <thread>

#include "core/engine/engine_options.h"
#include "core/layout/layout.h"

namespace meshwork::gui {

struct RunRequest {
    Layout layout;
    engine::EngineOptions options;
    bool check = false;
    double tolerance = 1e-4;
    QString profile_path;  // empty: no profile
};

struct RunOutcome {
    bool cancelled = false;
    bool check_ran = false;
    bool check_passed = false;
    QString check_text;    // the mismatch, when the check failed
    QString profile_path;  // the closed trace, when one was asked for
    double peak_bytes = 0; // measured, largest rank
    int steps_done = 0;
};

// Host bytes the in-process run of `request` is predicted to hold at its peak (every CPU
// rank, plus the reference when checking): the dialog refuses a run the machine cannot hold.
double predicted_run_bytes(const RunRequest& request);

class RunWorker : public QObject {
    Q_OBJECT
public:
    explicit RunWorker(QObject* parent = nullptr);
    ~RunWorker() override;  // stops and joins a running run

    bool start(RunRequest request);
    void cancel();
    [[nodiscard]] bool running() const { return running_; }

signals:
    void phase(const QString& text);  // "Running the unsharded reference…"
    void step_done(int step, double loss, double step_time_s, double tokens_per_s);
    void finished(const meshwork::gui::RunOutcome& outcome);
    void failed(const QString& message);

private:
    std::jthread worker_;
    bool running_ = false;
};

}  // namespace meshwork::gui
