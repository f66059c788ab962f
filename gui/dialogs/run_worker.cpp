#include "gui/dialogs/run_worker.h"

#include <QMetaObject>

#include <algorithm>
#include <exception>

#include "core/engine/stop.h"
#include "profiler/collect/run_profile.h"

namespace meshwork::gui {

RunWorker::RunWorker(QObject* parent) : QObject(parent) {}

RunWorker::~RunWorker() {
    if (worker_.joinable()) {
        worker_.request_stop();
        worker_.join();
    }
}

bool RunWorker::start(engine::RunRequest request) {
    if (running_) return false;
    if (worker_.joinable()) worker_.join();
    running_ = true;
    // As in SearchRunner: the destructor joins first, so `this` outlives the calls posted.
    worker_ = std::jthread([this, request = std::move(request)](std::stop_token stop) mutable {
        auto post = [this](auto fn) { QMetaObject::invokeMethod(this, std::move(fn), Qt::QueuedConnection); };
        RunOutcome outcome;
        engine::RunEvents events;
        events.on_phase = [&](engine::RunPhase p) {
            if (p == engine::RunPhase::Reference) {
                post([this] { emit phase(tr("Running the unsharded reference…")); });
            } else {
                post([this, n = request.layout.gpus] { emit phase(tr("Running %n rank(s)…", "", n)); });
            }
        };
        events.on_step = [&](const engine::StepResult& r) {
            outcome.steps_done = r.step;
            post([this, r] { emit step_done(r.step, r.loss, r.step_time_s, r.tokens_per_s); });
        };
        const QString profile = QString::fromStdString(request.profile_path);
        try {
            engine::RunSession session(request, profiler::open_run_profile);
            const engine::RunReport report = session.run(stop, events);
            for (auto b : report.result.peak_bytes) outcome.peak_bytes = std::max(outcome.peak_bytes, static_cast<double>(b));
            outcome.check_ran = report.check != engine::CheckStatus::NotRun;
            outcome.check_passed = report.check == engine::CheckStatus::Passed;
            if (report.result.mismatch) outcome.check_text = QString::fromStdString(report.result.mismatch->to_string());
            outcome.profile_path = profile;
        } catch (const engine::StopRequested&) {
            outcome.cancelled = true;
            outcome.profile_path = profile;  // closed by the session
        } catch (const std::exception& e) {
            post([this, message = QString::fromUtf8(e.what())] {
                running_ = false;
                emit failed(message);
            });
            return;
        }
        post([this, outcome] {
            running_ = false;
            emit finished(outcome);
        });
    });
    return true;
}

void RunWorker::cancel() {
    if (running_) worker_.request_stop();
}

}  // namespace meshwork::gui
