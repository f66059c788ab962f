#include "gui/dialogs/run_worker.h"

#include <algorithm>

#include "core/engine/stop.h"
#include "profiler/collect/run_profile.h"

namespace meshwork::gui {

RunWorker::RunWorker(QObject* parent) : QObject(parent) {}

bool RunWorker::start(engine::RunRequest request) {
    if (running()) return false;
    jobs_.start(
        [this, request = std::move(request)](const JobControl& job) mutable {
            RunOutcome outcome;
            engine::RunEvents events;
            events.on_phase = [&](engine::RunPhase p) {
                if (p == engine::RunPhase::Reference) {
                    job.post([this] { emit phase(tr("Running the unsharded reference…")); });
                } else {
                    job.post([this, n = request.layout.gpus] { emit phase(tr("Running %n rank(s)…", "", n)); });
                }
            };
            events.on_step = [&](const engine::StepResult& r) {
                outcome.steps_done = r.step;
                job.post([this, r] { emit step_done(r.step, r.loss, r.step_time_s, r.tokens_per_s); });
            };
            const QString profile = QString::fromStdString(request.profile_path);
            try {
                engine::RunSession session(request, profiler::open_run_profile);
                const engine::RunReport report = session.run(job.stop_token(), events);
                for (auto b : report.result.peak_bytes) outcome.peak_bytes = std::max(outcome.peak_bytes, static_cast<double>(b));
                outcome.check_ran = report.check != engine::CheckStatus::NotRun;
                outcome.check_passed = report.check == engine::CheckStatus::Passed;
                if (report.result.mismatch) outcome.check_text = QString::fromStdString(report.result.mismatch->to_string());
                outcome.profile_path = profile;
            } catch (const engine::StopRequested&) {
                outcome.cancelled = true;
                outcome.profile_path = profile;  // closed by the session
            }
            return outcome;  // any other exception reaches failed() with its message
        },
        [this](const RunOutcome& outcome) { emit finished(outcome); },
        [this](const QString& message) { emit failed(message); });
    return true;
}

void RunWorker::cancel() { jobs_.cancel(); }

}  // namespace meshwork::gui
