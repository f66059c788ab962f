#include "core/engine/engine_run.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <thread>

#include "core/common/error.h"
#include "core/engine/backend_registry.h"
#include "core/engine/comm/inproc_world.h"
#include "core/engine/cpu/cpu_backend.h"
#include "core/engine/memory_estimate.h"
#include "core/engine/precision.h"
#include "core/engine/stop.h"
#include "core/engine/thread_sched.h"
#include "core/layout/layout_run_info.h"

#include "core/engine/cuda_plugin.h"

namespace meshwork::engine {

TraceRunInfo run_trace_info(const Layout& layout, const EngineOptions& options) {
    TraceRunInfo info = layout_run_info(layout, "meshwork-" + to_string(options.backend), "steady");
    // The cores this process may run on: the CPU engine's rank threads share them, and
    // beyond them take turns (calibrate fits the cores a run actually got from this,
    // core/cost/host_sharing.h).
    if (options.backend == BackendKind::Cpu) {
        info.extra["host_cores"] = std::to_string(usable_cores());
        // The machine's logical CPUs beside the affinity mask, and whether each rank thread's
        // scheduler statistics are recorded per step (RankContext::end_step_sched).
        info.extra["host_logical_cpus"] = std::to_string(std::max(1u, std::thread::hardware_concurrency()));
        info.extra["thread_schedstat"] = read_thread_sched().available ? "1" : "0";
    }
    return info;
}

TokenStream make_token_stream(const Layout& layout, const EngineOptions& options) {
    const int vocab = static_cast<int>(layout.model.vocab_size);
    if (options.tokens_file.empty()) return TokenStream::synthetic(options.seed, vocab);
    return TokenStream::from_file(options.tokens_file, vocab,
                                  static_cast<std::size_t>(layout.training.seq_length) + 1);
}

namespace {

// One rank's whole run on an existing backend and world communicator.
// `whole_job_here`: every rank is a thread of this process (in-process runs), so the
// process's CPU time is the job's and one rank records it beside the host's.
RunResult run_on(const Layout& layout, const EngineOptions& options, const RunHooks& hooks,
                 Backend& be, Communicator& world, const TokenStream& tokens, bool whole_job_here = false) {
    RunResult out;
    be.set_precision(precision_of(layout));  // the layout's dtype: fp32, or bf16 emulated
    // A profiled run records its allocations with their kinds (memory_recorder.h); declared
    // before the trainer, so the trainer's frees at the end are recorded too.
    std::optional<MemoryRecorder> memory;
    if (hooks.sink) memory.emplace(*hooks.sink, world.world_rank(), be.device_index());
    struct Detach {
        Backend& be;
        ~Detach() { be.set_memory_recorder(nullptr); }
    } detach{be};
    if (memory) be.set_memory_recorder(&*memory);
    RankContext ctx(layout, be, world, hooks.sink, hooks.stop,
                    /*host_compute=*/options.backend == BackendKind::Cpu);
    ctx.records_host = whole_job_here && world.world_rank() == 0 && options.backend == BackendKind::Cpu;
    if (world.world_rank() == options.slow_rank) {
        ctx.compute_slowdown = {options.slow_factor, options.backend == BackendKind::Cpu};
    }
    RankTrainer trainer(layout, options, ctx, tokens);
    std::vector<double> losses;
    for (int s = 1; s <= options.steps; ++s) {
        StepResult r = trainer.step(s);
        losses.push_back(r.loss);
        if (world.world_rank() == 0 && hooks.on_step) hooks.on_step(r);
        out.steps.push_back(r);
    }
    out.peak_bytes.push_back(be.peak_bytes_in_use());
    if (hooks.keep_params) out.params = download_params(be, trainer.params());
    if (hooks.reference) {
        auto m = compare_losses(losses, *hooks.reference,
                                hooks.loss_tolerance < 0 ? hooks.tolerance : hooks.loss_tolerance);
        if (!m) m = compare_params(be, trainer.params(), *hooks.reference, world.world_rank(), hooks.tolerance);
        // The lowest rank with a mismatch reports it: every rank learns which one.
        Floats flag(be, 1);
        const float mine = m ? static_cast<float>(-world.world_rank()) : -1e9f;
        be.copy_to_device(flag.data(), &mine, sizeof(float), be.compute_stream());
        world.all_reduce(flag.data(), flag.data(), 1, ReduceOp::Max, be.compute_stream());
        float first = 0;
        be.copy_to_host(&first, flag.data(), sizeof(float), be.compute_stream());
        if (m && static_cast<int>(-first) == world.world_rank()) out.mismatch = m;
        if (!m && first > -1e8f) {
            Mismatch elsewhere;
            elsewhere.rank = static_cast<int>(-first);
            elsewhere.on_other_rank = true;
            out.mismatch = elsewhere;
        }
    }
    return out;
}

}  // namespace

RunResult run_rank(const Layout& layout, const EngineOptions& options, const RunHooks& hooks,
                   Communicator& world) {
    make_dims(layout, options);  // refuses what the engine does not run, before any work
    const TokenStream tokens = make_token_stream(layout, options);
    if (options.backend == BackendKind::Cuda) {
        // One GPU per process: the process's index on its node picks the GPU, and the ranks
        // talk over NCCL, bootstrapped through MPI (rank 0's ncclUniqueId); `world` (MPI)
        // is only the launcher's here.
        const CudaPlugin& plugin = require_cuda_plugin();
        CudaBackendOptions cuda = plugin.options_from_env();
        cuda.predicted_peak_bytes = estimate_memory(layout, options).at(static_cast<std::size_t>(world.world_rank())).peak_bytes;
        cuda.stop = hooks.stop;
        auto be = plugin.make_backend(plugin.mpi_node_local_rank(), cuda);
        auto comm = plugin.make_nccl_mpi_world(*be, options.comm_timeout_s);
        RunResult result = run_on(layout, options, hooks, *be, *comm, tokens);
        comm.reset();  // the communicator goes before the backend it runs on
        return result;
    }
    CpuBackend be(world.world_rank());
    CpuBackend::set_blas_threads(1);
    return run_on(layout, options, hooks, be, world, tokens);
}

namespace {
// One GPU per rank thread, NCCL between them: the same rank body as the CPU path.
RunResult run_in_process_cuda(const Layout& layout, const EngineOptions& options,
                              const RunHooks& hooks, const TokenStream& tokens) {
    const int n = layout.gpus;
    require_backend(BackendKind::Cuda, n);
    const CudaPlugin& plugin = require_cuda_plugin();
    auto world = plugin.make_nccl_inproc_world(n, options.comm_timeout_s);
    const std::vector<RankMemory> predicted = estimate_memory(layout, options);
    std::vector<RunResult> results(static_cast<std::size_t>(n));
    std::mutex mu;
    std::string first_error;
    bool interrupted = false;
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
        threads.emplace_back([&, r] {
            std::unique_ptr<Backend> be;
            std::unique_ptr<Communicator> comm;
            try {
                CudaBackendOptions cuda = plugin.options_from_env();
                cuda.predicted_peak_bytes = predicted.at(static_cast<std::size_t>(r)).peak_bytes;
                cuda.stop = hooks.stop;
                be = plugin.make_backend(r, cuda);
                comm = world->communicator(r, *be);
                results[static_cast<std::size_t>(r)] = run_on(layout, options, hooks, *be, *comm, tokens);
            } catch (const StopRequested&) {
                if (comm) comm->abort("interrupted");
                std::lock_guard lk(mu);
                interrupted = true;
            } catch (const std::exception& e) {
                const std::string msg = "rank " + std::to_string(r) + ": " + e.what();
                if (comm) comm->abort(msg);
                std::lock_guard lk(mu);
                if (first_error.empty()) first_error = msg;
            }
            comm.reset();  // the communicator goes before the backend it runs on
            be.reset();
        });
    }
    for (auto& t : threads) t.join();
    if (interrupted) throw StopRequested();
    if (!first_error.empty()) throw RuntimeError(first_error);
    RunResult out = std::move(results[0]);
    for (int r = 1; r < n; ++r) {
        auto& rr = results[static_cast<std::size_t>(r)];
        out.peak_bytes.insert(out.peak_bytes.end(), rr.peak_bytes.begin(), rr.peak_bytes.end());
        if (!out.mismatch && rr.mismatch) out.mismatch = rr.mismatch;
    }
    return out;
}
}  // namespace

RunResult run_in_process(const Layout& layout, const EngineOptions& options, const RunHooks& hooks) {
    make_dims(layout, options);
    const TokenStream tokens = make_token_stream(layout, options);
    if (options.backend == BackendKind::Cuda) return run_in_process_cuda(layout, options, hooks, tokens);
    const int n = layout.gpus;
    // One emulated device per rank thread: OpenBLAS's own threads would oversubscribe.
    CpuBackend::set_blas_threads(1);
    InProcessWorld world(n, options.comm_timeout_s);
    std::vector<RunResult> results(static_cast<std::size_t>(n));
    std::mutex mu;
    std::string first_error;
    bool interrupted = false;
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
        threads.emplace_back([&, r] {
            try {
                CpuBackend be(r);
                auto comm = world.communicator(r);
                results[static_cast<std::size_t>(r)] = run_on(layout, options, hooks, be, *comm, tokens, true);
            } catch (const StopRequested&) {
                world.abort("interrupted");
                std::lock_guard lk(mu);
                interrupted = true;
            } catch (const CommError& e) {
                // Either the original failure (a timeout, a mismatch of collectives) or the
                // echo of another rank's abort; the first abort reason wins.
                world.abort(e.what());
            } catch (const std::exception& e) {
                const std::string msg = "rank " + std::to_string(r) + ": " + e.what();
                world.abort(msg);
                std::lock_guard lk(mu);
                if (first_error.empty()) first_error = msg;
            }
        });
    }
    for (auto& t : threads) t.join();
    if (interrupted || (world.aborted() && world.abort_reason() == "interrupted")) throw StopRequested();
    if (!first_error.empty()) throw RuntimeError(first_error);
    if (world.aborted()) throw RuntimeError(world.abort_reason());
    RunResult out = std::move(results[0]);
    for (int r = 1; r < n; ++r) {
        auto& rr = results[static_cast<std::size_t>(r)];
        out.peak_bytes.insert(out.peak_bytes.end(), rr.peak_bytes.begin(), rr.peak_bytes.end());
        if (!out.mismatch || out.mismatch->on_other_rank) {
            if (rr.mismatch && !rr.mismatch->on_other_rank) out.mismatch = rr.mismatch;
        }
    }
    return out;
}

ReferenceState run_reference(const Layout& layout, const EngineOptions& options, std::stop_token stop) {
    RunHooks hooks;
    hooks.keep_params = true;
    hooks.stop = std::move(stop);
    EngineOptions on_cpu = options;  // the reference always runs on the CPU backend
    on_cpu.backend = BackendKind::Cpu;
    on_cpu.slow_rank = -1;  // an injected slowdown is of the sharded run's rank, not the reference
    RunResult r = run_in_process(reference_layout(layout), on_cpu, hooks);
    ReferenceState ref;
    for (const auto& s : r.steps) ref.losses.push_back(s.loss);
    ref.params = std::move(r.params);
    return ref;
}

}  // namespace meshwork::engine
