// Runs the open layout for real on a worker thread for the run dialog, through the engine's
// RunSession (the same as meshwork-cli run): every rank a thread of this process,
// optionally the unsharded reference first (a check), a profile written through the
// profiler's TraceWriter. A job of the GUI's BackgroundJobs: steps arrive on the GUI thread
// as they finish; cancel() requests a stop on the job's stop token, and every rank stops at
// its next op (the profile is still closed).
#pragma once

#include <QObject>
#include <QString>

#include "core/engine/run_session.h"
#include "gui/app/background_jobs.h"

namespace meshwork::gui {

struct RunOutcome {
    bool cancelled = false;
    bool check_ran = false;
    bool check_passed = false;
    QString check_text;    // the mismatch, when the check failed
    QString profile_path;  // the closed trace, when one was asked for
    double peak_bytes = 0; // measured, largest rank
    int steps_done = 0;
};

class RunWorker : public QObject {
    Q_OBJECT
public:
    explicit RunWorker(QObject* parent = nullptr);

    bool start(engine::RunRequest request);
    void cancel();
    [[nodiscard]] bool running() const { return jobs_.running(); }

signals:
    void phase(const QString& text);  // "Running the unsharded reference…"
    void step_done(int step, double loss, double step_time_s, double tokens_per_s);
    void finished(const meshwork::gui::RunOutcome& outcome);
    void failed(const QString& message);

private:
    BackgroundJobs jobs_;  // its stop token is the run's: cancel() and the destructor request it
};

}  // namespace meshwork::gui
