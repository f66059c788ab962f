// The File menu's trace entries beyond Open Trace: Open Trace for Comparison (predicted
// beside measured), Import (Nsight Systems SQLite, PyTorch profiler trace) and Open Remote
// Trace (host:path: served through ssh, or copied with scp when the host cannot serve it). Imports and fetches run off the UI thread with a progress
// dialog and a cancel button, write into the trace cache and then open in the timeline;
// failures are shown in a dialog that does not block.
#pragma once

#include <QObject>
#include <QPointer>
#include <QProgressDialog>

#include <functional>
#include <memory>

#include "profiler/analysis/warmup_steps.h"

class QAction;
class QMainWindow;
class QMenu;

namespace meshwork::gui {

class ComparisonLoader;
struct ComparisonData;
class RemoteFetch;
class TimelinePanel;
class TraceImportJob;

class TraceMenu : public QObject {
    Q_OBJECT
public:
    // What it needs of the window: its timeline, how it opens a trace file there (on a
    // worker thread) and how it brings the timeline to the front.
    struct WindowHooks {
        QMainWindow* window = nullptr;
        TimelinePanel* timeline = nullptr;
        std::function<void(const QString&)> open_trace;
        std::function<void()> show_timeline;
    };
    // Adds the entries to `file` (at its end), with their shortcuts.
    TraceMenu(WindowHooks hooks, QMenu* file);

    // Compares two trace files as given: the first drawn on top as the prediction (Swap,
    // the warm-up box).
    void compare(const QString& predicted_path, const QString& measured_path,
                 int warmup_steps = profiler::kDefaultWarmupSteps);
    // Compares two trace files whose roles come from the traces: a simulated one is the
    // prediction whichever is given first (trace_roles.h); otherwise the first is on top.
    void compare_by_role(const QString& first_path, const QString& second_path);
    // Compares the trace open in the timeline with `path` (roles from the traces); an error
    // when none is open.
    void compare_with_current(const QString& path);
    // Calibrates on the measured trace, predicts the layout that ran again and shows that
    // comparison (the compare view's "Calibrate & Re-predict"); the new prediction and the
    // calibrated cluster JSON go to the trace cache's "calibrated" folder.
    void calibrate(const QString& predicted_path, const QString& measured_path,
                   int warmup_steps = profiler::kDefaultWarmupSteps);
    // Imports an nsys SQLite export or a Kineto JSON trace (from the cache when it was
    // imported before) and opens the result.
    void import_trace(const QString& path);
    // Several files of one job (one per rank) merged into one trace and opened: the ranks of
    // one view (from the cache when merged before).
    void import_traces(const QStringList& paths);
    // Opens "host:path" in the window: served from that host through ssh (serve-trace),
    // or, when the host cannot serve it, copied (fetch_remote).
    void open_remote(const QString& spec);
    // Fetches "host:path" with scp into the cache and opens it (importing it first when
    // it is an nsys or PyTorch trace). `why_not_served`, when given, is told with a failure.
    void fetch_remote(const QString& spec, const QString& why_not_served = {});

    // The latest error shown (empty when none): for tests and --screenshot.
    [[nodiscard]] QString last_error() const { return last_error_; }
    [[nodiscard]] QProgressDialog* progress_dialog() const { return progress_; }
    [[nodiscard]] RemoteFetch* remote_fetch() const { return fetch_; }
    [[nodiscard]] TraceImportJob* import_job() const { return import_; }

signals:
    void comparison_shown();
    void import_finished(const QString& trace_path);
    void remote_fetched(const QString& local_path);
    // Any of the above that failed or was cancelled, with what was shown to the user.
    void failed(const QString& message);

private:
    void choose_comparison();
    void choose_import(const QString& title, const QString& filter);
    void choose_remote();
    void open_fetched(const QString& local_path);
    void show_progress(const QString& text, const std::function<void()>& on_cancel);
    void hide_progress();
    void show_error(const QString& title, const QString& text);
    [[nodiscard]] QString current_trace_path() const;

    WindowHooks hooks_;
    QMainWindow* window_;
    ComparisonLoader* loader_ = nullptr;
    TraceImportJob* import_ = nullptr;
    RemoteFetch* fetch_ = nullptr;
    QPointer<QProgressDialog> progress_;
    QString importing_;  // the input being imported, for messages
    QString fetching_;   // the host:path being fetched
    QString not_served_;  // why it is fetched rather than served (empty when asked to copy)
    QString last_error_;
};

}  // namespace meshwork::gui
