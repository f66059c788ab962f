// meshwork-cli run: executes the sharded model of a layout (core/engine), every rank in this
// process (--launcher local) or one rank per MPI process (--launcher mpi, under mpirun/srun).
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "profiler/collect/cupti_collector.h"
#include "core/common/error.h"
#include "core/engine/cuda_plugin.h"
#include "core/engine/engine_run.h"
#include "core/engine/memory_estimate.h"
#include "core/engine/precision.h"
#include "core/engine/stop.h"
#include "app/cli/exit_codes.h"
#include "core/layout/layout_validate.h"
#include "app/cli/layout_flags.h"
#include "profiler/store/trace_writer.h"
#include "app/cli/verb.h"
#ifdef MESHWORK_HAVE_MPI
#include "core/engine/comm/mpi_communicator.h"
#endif

namespace meshwork::cli {

namespace {

struct RunFlags {
    std::string backend = "cpu";
    std::string launcher = "local";
    std::string profile;
    std::string tokens;
    std::string memory_limit;
    int steps = 3;
    long long seed = 1234;
    bool check = false;
    double tolerance = -1;  // < 0: the defaults of the layout's precision (engine/precision.h)
    double comm_timeout_s = 60;
    bool json = false;
    std::string inject_fault;  // RANK:STEP[:hang], for fault-handling tests
};

// Which signal stopped the run: SIGINT (Ctrl-C) or SIGTERM (a launcher or scheduler ending
// the job; mpirun sends it to every other rank when one rank fails).
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int signal) {
    g_stop_signal = signal;
    engine::request_stop();
}

// Installs on_stop_signal for SIGINT and SIGTERM for the lifetime of the run.
class StopSignals {
public:
    StopSignals()
        : int_(std::signal(SIGINT, on_stop_signal)), term_(std::signal(SIGTERM, on_stop_signal)) {}
    ~StopSignals() { restore(); }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;
    void restore() {
        std::signal(SIGINT, int_);
        std::signal(SIGTERM, term_);
    }

private:
    void (*int_)(int);
    void (*term_)(int);
};

// "8GiB", "512MiB", "1e9", "2G": bytes.
std::size_t parse_bytes(const std::string& text) {
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    const std::string unit = text.substr(used);
    double scale = 0;
    if (unit.empty() || unit == "B") scale = 1;
    if (unit == "K" || unit == "KiB") scale = 1024.0;
    if (unit == "M" || unit == "MiB") scale = 1024.0 * 1024;
    if (unit == "G" || unit == "GiB") scale = 1024.0 * 1024 * 1024;
    if (unit == "KB") scale = 1e3;
    if (unit == "MB") scale = 1e6;
    if (unit == "GB") scale = 1e9;
    if (used == 0 || scale == 0 || v <= 0) {
        throw InputError("<flags>", "--memory-limit",
                         "'" + text + "' is not a size (bytes, or with K/M/G, KiB/MiB/GiB, KB/MB/GB)");
    }
    return static_cast<std::size_t>(v * scale);
}

std::string gib(std::size_t bytes) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(3) << static_cast<double>(bytes) / (1024.0 * 1024 * 1024) << " GiB";
    return o.str();
}

void refuse_over_limit(const std::vector<engine::RankMemory>& mem, std::size_t limit) {
    for (const auto& m : mem) {
        if (m.peak_bytes <= limit) continue;
        throw InputError("<flags>", "--memory-limit",
                         "rank " + std::to_string(m.rank) + " is predicted to need " +
                             std::to_string(m.peak_bytes) + " bytes (" + gib(m.peak_bytes) +
                             ": params " + std::to_string(m.params_bytes) + ", grads " +
                             std::to_string(m.grads_bytes) + ", optimizer " +
                             std::to_string(m.optimizer_bytes) + ", activations " +
                             std::to_string(m.activations_bytes) + "), over the limit of " +
                             std::to_string(limit) + " bytes");
    }
}

// Without --memory-limit, the limit is the memory of this machine: a layout whose tensors
// cannot fit (a hostile or mistyped file declaring gigabyte-sized dimensions) is refused
// with the predicted figures instead of failing in the allocator or waking the OOM killer.
// The ranks of --launcher local share this process; under MPI each process holds one rank
// (ranks may share a host, which this check cannot see). --check adds an unsharded copy,
// on the host whatever the backend; on the CUDA backend the ranks' tensors are on the GPUs
// and only that copy counts here.
void refuse_beyond_host_memory(const std::vector<engine::RankMemory>& mem, bool all_in_process,
                               bool on_gpu, bool check, const std::string& source) {
    const double host = engine::host_memory_bytes();
    if (host <= 0) return;
    double largest = 0, total = 0, model = 0;
    for (const auto& m : mem) {
        largest = std::max(largest, static_cast<double>(m.peak_bytes));
        total += static_cast<double>(m.peak_bytes);
        model += static_cast<double>(m.params_bytes + m.grads_bytes + m.optimizer_bytes);
    }
    const double ranks = on_gpu ? 0.0 : all_in_process ? total : largest;
    const double need = ranks + (check ? model : 0.0);
    if (need <= host) return;
    std::ostringstream what;
    what << "the layout is predicted to need " << std::fixed << std::setprecision(1)
         << need / (1024.0 * 1024 * 1024) << " GiB of host memory in this process"
         << (on_gpu ? " (the --check reference)" : all_in_process ? " (all ranks)" : " (one rank)")
         << (check && !on_gpu ? " with --check" : "")
         << ", more than the " << host / (1024.0 * 1024 * 1024)
         << " GiB of memory of this machine; check the model's dimensions, or set --memory-limit";
    throw InputError(source.empty() ? "<flags>" : source, "model", what.str());
}

engine::EngineOptions engine_options(const RunFlags& f) {
    engine::EngineOptions o;
    o.backend = f.backend;
    o.steps = f.steps;
    o.seed = static_cast<std::uint64_t>(f.seed);
    o.tokens_file = f.tokens;
    o.comm_timeout_s = f.comm_timeout_s;
    if (!f.inject_fault.empty()) {
        char kind[8] = "throw";
        if (std::sscanf(f.inject_fault.c_str(), "%d:%d:%7s", &o.fault_rank, &o.fault_step, kind) < 2) {
            throw InputError("<flags>", "--inject-fault", "expected RANK:STEP or RANK:STEP:hang");
        }
        o.fault_kind = kind;
    }
    return o;
}

// Processes of this job on this node, from the launcher's environment (Open MPI, Slurm,
// MPICH/Hydra); 1 when none says.
int local_ranks_on_this_node() {
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE", "MPI_LOCALNRANKS"}) {
        if (const char* v = std::getenv(name)) {
            const int n = std::atoi(v);
            if (n > 0) return n;
        }
    }
    return 1;
}

std::string profile_path(const std::string& path, int rank, int world, bool per_rank) {
    if (!per_rank || world == 1) return path;
    const auto dot = path.rfind('.');
    const std::string suffix = ".rank" + std::to_string(rank);
    return dot == std::string::npos ? path + suffix : path.substr(0, dot) + suffix + path.substr(dot);
}

// The CUPTI collector of a CUDA run, started: one per process (CUPTI is process-wide). With
// --launcher local the ranks are threads of this process and rank r runs on device r; under
// MPI every device this process uses belongs to its own rank, and so does its profile file.
std::unique_ptr<profiler::CuptiCollector> make_gpu_profile(TraceSink& sink, const Layout& layout, int world_rank,
                                                           bool mpi) {
    profiler::CuptiOptions options;
    if (!mpi) {
        for (int r = 0; r < layout.gpus; ++r) options.rank_of_device.push_back(r);
    }
    auto collector = std::make_unique<profiler::CuptiCollector>(sink, world_rank, options);
    collector->start();
    return collector;
}

int run_verb(const LayoutFlags& layout_flags, const RunFlags& f) {
    if (f.backend != "cpu" && f.backend != "cuda") {
        throw InputError("<flags>", "--backend", "unknown backend '" + f.backend + "' (cpu, cuda)");
    }
    if (f.launcher != "local" && f.launcher != "mpi") {
        throw InputError("<flags>", "--launcher", "unknown launcher '" + f.launcher + "' (local, mpi)");
    }
    if (f.steps < 1) throw InputError("<flags>", "--steps", "must be at least 1");
    const Layout layout = layout_flags.build();
    const auto validation = validate_layout(layout, layout_flags.source());
    if (!validation.valid()) throw InputError(validation.errors);
    const engine::EngineOptions options = engine_options(f);
    // No CUDA plugin, a library it needs, no driver, an old driver or too few GPUs: refused
    // before anything is allocated; this is where the plugin is loaded (only for --backend
    // cuda). Local: every rank's GPU in this process. Under MPI each process takes one GPU
    // of its node, so a node's processes must not outnumber its GPUs (checked in each).
    if (f.backend == "cuda") {
        const int gpus_here = f.launcher == "mpi" ? local_ranks_on_this_node() : layout.gpus;
        if (const std::string why = engine::cuda_backend_unavailable(gpus_here); !why.empty()) {
            throw InputError("<flags>", "--backend", why);
        }
    }
    // Everything that can be refused is refused before any rank starts.
    const auto memory = engine::estimate_memory(layout, options);
    if (!f.memory_limit.empty()) {
        refuse_over_limit(memory, parse_bytes(f.memory_limit));
    } else {
        refuse_beyond_host_memory(memory, f.launcher == "local", f.backend == "cuda", f.check,
                                  layout_flags.source());
    }
    (void)engine::make_token_stream(layout, options);

    int world_rank = 0;
#ifdef MESHWORK_HAVE_MPI
    std::unique_ptr<engine::MpiSession> mpi;
    std::unique_ptr<engine::Communicator> mpi_world;
#endif
    if (f.launcher == "mpi") {
#ifdef MESHWORK_HAVE_MPI
        if (!engine::MpiSession::launched_by_mpi()) {
            throw InputError("<flags>", "--launcher",
                             "mpi: start one process per rank, e.g. mpirun -np " +
                                 std::to_string(layout.gpus) + " meshwork-cli run ... --launcher mpi");
        }
        mpi = std::make_unique<engine::MpiSession>(nullptr, nullptr);
        if (mpi->world_size() != layout.gpus) {
            throw InputError("<flags>", "--launcher",
                             "mpi: the job has " + std::to_string(mpi->world_size()) +
                                 " processes but the layout has " + std::to_string(layout.gpus) + " ranks");
        }
        world_rank = mpi->world_rank();
        mpi_world = mpi->world(options.comm_timeout_s);
#else
        throw InputError("<flags>", "--launcher", "this build has no MPI (configure with MESHWORK_MPI=ON)");
#endif
    }
    const bool root = world_rank == 0;

    std::unique_ptr<profiler::TraceWriter> writer;
    if (!f.profile.empty()) {
        writer = profiler::TraceWriter::create(profile_path(f.profile, world_rank, layout.gpus, f.launcher == "mpi"));
        writer->set_run_info(engine::run_trace_info(layout, options));
    }
    // On the CUDA backend the profile also holds CUPTI's record of the GPUs (kernels, NCCL
    // kernels as communication, copies, sets, NVTX ranges), beside the engine's host events.
    std::unique_ptr<profiler::CuptiCollector> gpu_profile;
    if (writer && f.backend == "cuda") {
        try {
            gpu_profile = make_gpu_profile(*writer, layout, world_rank, f.launcher == "mpi");
        } catch (...) {
            // Nothing has run: leave no trace file behind.
            writer->close();
            std::error_code ec;
            std::filesystem::remove(profile_path(f.profile, world_rank, layout.gpus, f.launcher == "mpi"), ec);
            throw;
        }
    }
    // GPU records go into the trace before it closes, after a failure or Ctrl-C too.
    auto close_profile = [&] {
        if (gpu_profile) {
            try {
                gpu_profile->stop();
            } catch (const std::exception& e) {
                std::cerr << "warning: GPU profile incomplete: " << e.what() << "\n";
            }
            gpu_profile.reset();
        }
        if (writer) writer->close();
    };

    engine::ReferenceState reference;
    if (f.check) {
        if (root) std::cerr << "running the unsharded reference (" << f.steps << " steps)\n";
        reference = engine::run_reference(layout, options);
    }
    engine::RunHooks hooks;
    hooks.sink = writer.get();
    hooks.reference = f.check ? &reference : nullptr;
    // --tolerance sets both; by default each has the value of the layout's precision.
    const engine::CheckTolerance defaults = engine::default_check_tolerance(engine::precision_of(layout));
    const double tolerance = f.tolerance >= 0 ? f.tolerance : defaults.weights;
    const double loss_tolerance = f.tolerance >= 0 ? f.tolerance : defaults.loss;
    hooks.tolerance = tolerance;
    hooks.loss_tolerance = loss_tolerance;
    nlohmann::json steps = nlohmann::json::array();
    hooks.on_step = [&](const engine::StepResult& r) {
        steps.push_back({{"step", r.step}, {"loss", r.loss}, {"step_time_s", r.step_time_s},
                         {"tokens_per_s", r.tokens_per_s}});
        std::ostream& out = f.json ? std::cerr : std::cout;
        out << "step " << r.step << "/" << f.steps << "  loss " << std::fixed << std::setprecision(6)
            << r.loss << "  step " << std::setprecision(3) << r.step_time_s << " s  "
            << std::setprecision(0) << r.tokens_per_s << " tokens/s" << std::defaultfloat << std::endl;
    };

    StopSignals stop_signals;
    engine::RunResult result;
    try {
        if (f.launcher == "mpi") {
#ifdef MESHWORK_HAVE_MPI
            try {
                result = engine::run_rank(layout, options, hooks, *mpi_world);
            } catch (const engine::StopRequested&) {
                throw;
            } catch (const std::exception& e) {
                close_profile();
                engine::MpiSession::abort_job("rank " + std::to_string(world_rank) + ": " + e.what(), kExitRuntimeFailure);
            }
#endif
        } else {
            result = engine::run_in_process(layout, options, hooks);
        }
    } catch (const engine::StopRequested&) {
        stop_signals.restore();
        close_profile();
        if (g_stop_signal == SIGTERM && f.launcher == "mpi") {
            // mpirun is ending the job because another rank failed; that rank or mpirun
            // reports why. Close the profile and leave without a message of our own and
            // without MPI teardown, which would wait for the rank that is gone.
            std::_Exit(kExitRuntimeFailure);
        }
        throw RuntimeError(std::string(g_stop_signal == SIGTERM ? "terminated (SIGTERM)" : "interrupted (Ctrl-C)") +
                           " after " + std::to_string(steps.size()) + " steps" +
                           (writer ? "; profile closed" : ""));
    } catch (...) {
        stop_signals.restore();
        close_profile();
        throw;
    }
    stop_signals.restore();
    close_profile();

    if (root) {
        if (f.json) {
            nlohmann::json out{{"steps", steps}, {"backend", f.backend}, {"launcher", f.launcher},
                               {"world_size", layout.gpus}};
            nlohmann::json mem = nlohmann::json::array();
            for (std::size_t r = 0; r < memory.size(); ++r) {
                nlohmann::json m{{"rank", memory[r].rank}, {"predicted_peak_bytes", memory[r].peak_bytes}};
                if (r < result.peak_bytes.size()) m["measured_peak_bytes"] = result.peak_bytes[r];
                mem.push_back(m);
            }
            out["memory"] = mem;
            if (f.check) {
                out["check"] = result.mismatch
                                   ? nlohmann::json{{"passed", false}, {"tensor", result.mismatch->tensor},
                                                    {"rank", result.mismatch->rank},
                                                    {"rel_error", result.mismatch->rel_error},
                                                    {"tolerance", tolerance}, {"loss_tolerance", loss_tolerance}}
                                   : nlohmann::json{{"passed", true}, {"tolerance", tolerance},
                                                    {"loss_tolerance", loss_tolerance}};
            }
            std::cout << out.dump(2) << "\n";
        } else if (f.check && !result.mismatch) {
            std::cout << "check passed: losses and updated weights match the unsharded reference within ";
            if (loss_tolerance == tolerance) {
                std::cout << tolerance << " relative\n";
            } else {
                std::cout << loss_tolerance << " (losses) and " << tolerance << " (weights) relative\n";
            }
        }
    }
    if (f.check && result.mismatch) {
        // Under MPI the rank that found the first mismatch prints it.
        if (!result.mismatch->tensor.starts_with("(reported")) {
            std::cerr << "check failed: " << result.mismatch->to_string() << " (tolerance "
                      << (result.mismatch->tensor == "loss" ? loss_tolerance : tolerance) << ")\n";
        }
        return kExitCheckFailed;
    }
    return kExitOk;
}

}  // namespace

Verb add_run_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand("run", "Execute the sharded model of a layout for real (CPU ranks, or GPUs through the CUDA plugin)");
    auto flags = std::make_shared<LayoutFlags>(cmd);
    auto f = std::make_shared<RunFlags>();
    cmd->add_option("--backend", f->backend, "Compute backend: cpu (one emulated device per rank) or cuda (loads libmeshwork_cuda.so; exit 2 naming "
                    "what is missing: the plugin, a CUDA library, the driver or GPUs)")->capture_default_str();
    cmd->add_option("--launcher", f->launcher,
                    "local: every rank a thread of this process; mpi: one process per rank under mpirun/srun")
        ->capture_default_str();
    cmd->add_option("--steps", f->steps, "Training steps")->capture_default_str();
    cmd->add_option("--seed", f->seed, "Seed of the weights and of the synthetic token stream")->capture_default_str();
    cmd->add_option("--tokens", f->tokens,
                    "Token file: whitespace-separated token ids in [0, vocab) instead of the synthetic stream");
    cmd->add_flag("--check", f->check,
                  "Also run the unsharded reference and compare losses and updated weights (exit 3 on a mismatch)");
    cmd->add_option("--tolerance", f->tolerance,
                    "Relative tolerance of --check, losses and weights (default: 1e-4 for an fp32 layout; for bf16 "
                    "1e-3 for losses and 2e-2 for weights; docs/engine.md)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--profile", f->profile,
                    "Write op and collective events of every rank to this trace (OUT.sqlite; under mpi one file per rank, "
                    "OUT.rankN.sqlite); with --backend cuda also the GPUs' kernels, copies and NVTX ranges (CUPTI)");
    cmd->add_option("--memory-limit", f->memory_limit,
                    "Refuse the run when a rank's predicted memory exceeds this (e.g. 2GiB)");
    cmd->add_option("--comm-timeout", f->comm_timeout_s,
                    "Seconds a collective may wait for the other ranks before the run fails")->capture_default_str();
    cmd->add_option("--inject-fault", f->inject_fault, "Testing: RANK:STEP[:hang] makes a rank fail")
        ->group("");
    cmd->add_flag("--json", f->json, "Print JSON: steps[] (step, loss, step_time_s, tokens_per_s), memory[], check");
    cmd->footer("Exit codes: 0 success, 1 runtime failure (a rank failed, timed out or was interrupted), "
                "2 bad input (invalid layout, token file, memory limit), 3 --check found a mismatch.");
    return {cmd, [flags, f]() { return run_verb(*flags, *f); }};
}

namespace {
Verb make_run_verb(CLI::App& app) { return add_run_verb(app); }
}  // namespace
MESHWORK_REGISTER_VERB(60, make_run_verb);

}  // namespace meshwork::cli
