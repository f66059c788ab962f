// meshwork-cli run: executes the sharded model of a layout (core/engine), every rank in this
// process (--launcher local) or one rank per MPI process (--launcher mpi, under mpirun/srun).
// The flags become an engine::RunRequest here; engine::RunSession (shared with the GUI)
// checks and runs it.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>

#include "app/cli/exit_codes.h"
#include "app/cli/layout_flags.h"
#include "app/cli/stop_signals.h"
#include "app/cli/verb.h"
#include "core/common/error.h"
#include "core/engine/run_session.h"
#include "core/engine/stop.h"
#include "profiler/collect/run_profile.h"

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
    std::string slow_rank;     // RANK:FACTOR, for tests and demos of the straggler report
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

engine::EngineOptions engine_options(const RunFlags& f) {
    engine::EngineOptions o;
    const auto backend = engine::parse_backend(f.backend);
    if (!backend) throw InputError("<flags>", "--backend", "unknown backend '" + f.backend + "' (cpu, cuda)");
    o.backend = *backend;
    o.steps = f.steps;
    o.seed = static_cast<std::uint64_t>(f.seed);
    o.tokens_file = f.tokens;
    o.comm_timeout_s = f.comm_timeout_s;
    if (!f.inject_fault.empty()) {
        char kind[8] = "throw";
        const int fields = std::sscanf(f.inject_fault.c_str(), "%d:%d:%7s", &o.fault_rank, &o.fault_step, kind);
        const auto fault_kind = engine::parse_fault_kind(kind);
        if (fields < 2 || !fault_kind) {
            throw InputError("<flags>", "--inject-fault", "expected RANK:STEP or RANK:STEP:hang");
        }
        o.fault_kind = *fault_kind;
    }
    if (!f.slow_rank.empty()) {
        // RANK:FACTOR, nothing after; the ranges are the session's to check (preflight).
        int used = 0;
        const int fields = std::sscanf(f.slow_rank.c_str(), "%d:%lf%n", &o.slow_rank, &o.slow_factor, &used);
        if (fields != 2 || static_cast<std::size_t>(used) != f.slow_rank.size() || o.slow_rank < 0) {
            throw InputError("<flags>", "--slow-rank", "expected RANK:FACTOR (e.g. 5:2.0), got '" + f.slow_rank + "'");
        }
    }
    return o;
}

// The flags, parsed once: names become the engine's types.
engine::RunRequest run_request(const LayoutFlags& layout_flags, const RunFlags& f) {
    engine::RunRequest r;
    r.options = engine_options(f);
    const auto launcher = engine::parse_launcher(f.launcher);
    if (!launcher) throw InputError("<flags>", "--launcher", "unknown launcher '" + f.launcher + "' (local, mpi)");
    r.launcher = *launcher;
    r.layout = layout_flags.build();
    r.source = layout_flags.source();
    r.check = f.check;
    if (f.tolerance >= 0) r.tolerance = f.tolerance;  // --tolerance sets both
    if (!f.memory_limit.empty()) r.memory_limit_bytes = parse_bytes(f.memory_limit);
    r.profile_path = f.profile;
    r.mpi_abort_exit_code = kExitRuntimeFailure;
    return r;
}

engine::RunEvents print_events(const RunFlags& f, nlohmann::json& steps) {
    engine::RunEvents events;
    events.on_phase = [&f](engine::RunPhase phase) {
        if (phase == engine::RunPhase::Reference) {
            std::cerr << "running the unsharded reference (" << f.steps << " steps)\n";
        }
    };
    events.on_step = [&f, &steps](const engine::StepResult& r) {
        steps.push_back({{"step", r.step}, {"loss", r.loss}, {"step_time_s", r.step_time_s},
                         {"tokens_per_s", r.tokens_per_s}});
        std::ostream& out = f.json ? std::cerr : std::cout;
        out << "step " << r.step << "/" << f.steps << "  loss " << std::fixed << std::setprecision(6)
            << r.loss << "  step " << std::setprecision(3) << r.step_time_s << " s  "
            << std::setprecision(0) << r.tokens_per_s << " tokens/s" << std::defaultfloat << std::endl;
    };
    events.on_warning = [](const std::string& warning) { std::cerr << "warning: " << warning << "\n"; };
    return events;
}

// A stop by a signal: mpirun ends the job with SIGTERM because another rank failed, and that
// rank or mpirun reports why; leave without a message of our own and without MPI teardown,
// which would wait for the rank that is gone. Otherwise say what stopped the run.
[[noreturn]] void stopped_by(int signal, const engine::RunSession& session, std::size_t steps_done) {
    if (signal == SIGTERM && session.request().launcher == engine::Launcher::Mpi) std::_Exit(kExitRuntimeFailure);
    throw RuntimeError(std::string(signal == SIGTERM ? "terminated (SIGTERM)" : "interrupted (Ctrl-C)") +
                       " after " + std::to_string(steps_done) + " steps" +
                       (session.request().profile_path.empty() ? "" : "; profile closed"));
}

void print_json(const engine::RunSession& session, const engine::RunReport& report, nlohmann::json steps) {
    const engine::RunRequest& r = session.request();
    nlohmann::json out{{"steps", std::move(steps)}, {"backend", engine::to_string(r.options.backend)},
                       {"launcher", engine::to_string(r.launcher)}, {"world_size", r.layout.gpus}};
    nlohmann::json mem = nlohmann::json::array();
    const auto& predicted = session.predicted_memory();
    for (std::size_t i = 0; i < predicted.size(); ++i) {
        nlohmann::json m{{"rank", predicted[i].rank}, {"predicted_peak_bytes", predicted[i].peak_bytes}};
        if (i < report.result.peak_bytes.size()) m["measured_peak_bytes"] = report.result.peak_bytes[i];
        mem.push_back(m);
    }
    out["memory"] = mem;
    if (r.check) {
        const auto& m = report.result.mismatch;
        out["check"] = m ? nlohmann::json{{"passed", false}, {"tensor", m->tensor}, {"rank", m->rank},
                                          {"rel_error", m->rel_error}}
                         : nlohmann::json{{"passed", true}};
        out["check"]["tolerance"] = report.tolerance.weights;
        out["check"]["loss_tolerance"] = report.tolerance.loss;
    }
    std::cout << out.dump(2) << "\n";
}

void print_check(const engine::RunReport& report) {
    const engine::CheckTolerance& t = report.tolerance;
    if (report.check == engine::CheckStatus::Passed) {
        std::cout << "check passed: losses and updated weights match the unsharded reference within ";
        if (t.loss == t.weights) {
            std::cout << t.weights << " relative\n";
        } else {
            std::cout << t.loss << " (losses) and " << t.weights << " (weights) relative\n";
        }
    }
}

int run_verb(const LayoutFlags& layout_flags, const RunFlags& f) {
    engine::RunSession session(run_request(layout_flags, f), profiler::open_run_profile);
    nlohmann::json steps = nlohmann::json::array();
    const engine::RunEvents events = print_events(f, steps);
    std::stop_source stop;
    engine::RunReport report;
    {
        const StopSignals signals(stop);
        try {
            report = session.run(stop.get_token(), events);
        } catch (const engine::StopRequested&) {
            stopped_by(signals.signal(), session, steps.size());
        }
    }
    if (session.root()) {
        if (f.json) {
            print_json(session, report, steps);
        } else {
            print_check(report);
        }
    }
    if (report.check != engine::CheckStatus::Failed) return kExitOk;
    // Under MPI the rank that found the first mismatch prints it.
    const engine::Mismatch& m = *report.result.mismatch;
    if (!m.on_other_rank) {
        std::cerr << "check failed: " << m.to_string() << " (tolerance "
                  << (m.tensor == "loss" ? report.tolerance.loss : report.tolerance.weights) << ")\n";
    }
    return kExitCheckFailed;
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
    cmd->add_option("--slow-rank", f->slow_rank,
                    "Testing aid: RANK:FACTOR makes every compute op of that rank take FACTOR times as long "
                    "(1 to 100; e.g. 5:2.0), to try the straggler report (stats --stragglers) on a run with a "
                    "known straggler");
    cmd->add_flag("--json", f->json, "Print JSON: steps[] (step, loss, step_time_s, tokens_per_s), memory[], check");
    cmd->footer("Exit codes: 0 success, 1 runtime failure (a rank failed, timed out or was interrupted), "
                "2 bad input (invalid layout, token file, memory limit, --slow-rank), 3 --check found a mismatch.");
    return {cmd, [flags, f]() { return run_verb(*flags, *f); }};
}

namespace {
Verb make_run_verb(CLI::App& app) { return add_run_verb(app); }
}  // namespace
MESHWORK_REGISTER_VERB(60, make_run_verb);

}  // namespace meshwork::cli
