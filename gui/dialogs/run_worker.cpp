#include "gui/dialogs/run_worker.h"

#include <QMetaObject>

#include <algorithm>
#include <exception>
#include <memory>

#include "core/engine/engine_run.h"
#include "core/engine/memory_estimate.h"
#include "core/engine/precision.h"
#include "core/engine/stop.h"
#include "profiler/collect/cupti_collector.h"
#include "profiler/store/trace_writer.h"

namespace meshwork::gui {

double predicted_run_bytes(const RunRequest& request) {
    double total = 0;
    double largest = 0;
    for (const auto& m : engine::estimate_memory(request.layout, request.options)) {
        total += static_cast<double>(m.peak_bytes);
        largest = std::max(largest, static_cast<double>(m.params_bytes + m.grads_bytes + m.optimizer_bytes));
    }
    // The reference holds the whole model on one rank: about the sum of the shards' state.
    // On the CUDA backend the ranks live in GPU memory (the backend reports an
    // out-of-memory with the figures); only the reference, on the CPU, needs this machine's.
    const double ranks = request.options.backend == "cuda" ? 0.0 : total;
    const double reference = request.check ? std::max(total, largest) : 0.0;
    return ranks + reference;
}

RunWorker::RunWorker(QObject* parent) : QObject(parent) {}

RunWorker::~RunWorker() {
    if (worker_.joinable()) {
        engine::request_stop();
        worker_.join();
        engine::clear_stop();
    }
}

bool RunWorker::start(RunRequest request) {
    if (running_) return false;
    if (worker_.joinable()) worker_.join();
    running_ = true;
    engine::clear_stop();
    // As in SearchRunner: the destructor joins first, so `this` outlives the calls posted.
    worker_ = std::jthread([this, request = std::move(request)] {
        auto post = [this](auto fn) { QMetaObject::invokeMethod(this, std::move(fn), Qt::QueuedConnection); };
        RunOutcome outcome;
        std::unique_ptr<profiler::TraceWriter> writer;
        std::unique_ptr<profiler::CuptiCollector> gpu_profile;
        // GPU records go into the trace before it closes (CUPTI writes them at stop()).
        auto close_profile = [&] {
            if (gpu_profile) {
                try {
                    gpu_profile->stop();
                } catch (const std::exception&) {
                    // The host events are still worth keeping; the run's own error is reported.
                }
                gpu_profile.reset();
            }
            if (writer) writer->close();
        };
        try {
            if (!request.profile_path.isEmpty()) {
                writer = profiler::TraceWriter::create(request.profile_path.toStdString());
                writer->set_run_info(engine::run_trace_info(request.layout, request.options));
                if (request.options.backend == "cuda") {
                    // Every rank is a thread of this process, rank r on device r.
                    profiler::CuptiOptions gpu;
                    for (int r = 0; r < request.layout.gpus; ++r) gpu.rank_of_device.push_back(r);
                    gpu_profile = std::make_unique<profiler::CuptiCollector>(*writer, 0, gpu);
                    gpu_profile->start();
                }
            }
            engine::ReferenceState reference;
            if (request.check) {
                post([this] { emit phase(tr("Running the unsharded reference…")); });
                reference = engine::run_reference(request.layout, request.options);
            }
            post([this, n = request.layout.gpus] { emit phase(tr("Running %n rank(s)…", "", n)); });
            engine::RunHooks hooks;
            hooks.sink = writer.get();
            hooks.reference = request.check ? &reference : nullptr;
            hooks.tolerance = request.tolerance;
            // The default weights tolerance of a bf16 layout comes with its tighter loss one.
            const engine::CheckTolerance defaults = engine::default_check_tolerance(engine::precision_of(request.layout));
            if (request.tolerance == defaults.weights) hooks.loss_tolerance = defaults.loss;
            hooks.on_step = [&](const engine::StepResult& r) {
                outcome.steps_done = r.step;
                post([this, r] { emit step_done(r.step, r.loss, r.step_time_s, r.tokens_per_s); });
            };
            const engine::RunResult result = engine::run_in_process(request.layout, request.options, hooks);
            for (auto b : result.peak_bytes) outcome.peak_bytes = std::max(outcome.peak_bytes, static_cast<double>(b));
            outcome.check_ran = request.check;
            outcome.check_passed = request.check && !result.mismatch;
            if (result.mismatch) outcome.check_text = QString::fromStdString(result.mismatch->to_string());
        } catch (const engine::StopRequested&) {
            outcome.cancelled = true;
        } catch (const std::exception& e) {
            close_profile();
            post([this, message = QString::fromUtf8(e.what())] {
                running_ = false;
                emit failed(message);
            });
            return;
        }
        if (writer) {
            close_profile();
            outcome.profile_path = request.profile_path;
        }
        post([this, outcome] {
            running_ = false;
            emit finished(outcome);
        });
    });
    return true;
}

void RunWorker::cancel() {
    if (running_) engine::request_stop();
}

}  // namespace meshwork::gui
