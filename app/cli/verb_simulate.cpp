// meshwork-cli simulate: discrete-event simulation of one training step; writes the
// predicted timeline as a Meshwork trace (SQLite) with --trace.
#include <iostream>

#include "core/cost/estimate_json.h"
#include "core/cost/estimate_report.h"
#include "app/cli/exit_codes.h"
#include "core/layout/layout_validate.h"
#include "app/cli/layout_flags.h"
#include "core/sim/simulate.h"
#include "core/common/error.h"
#include "profiler/store/trace_output.h"
#include "app/cli/verb.h"

namespace meshwork::cli {

namespace {

Verb make_simulate_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "simulate", "Simulate one training step of a layout and write its predicted timeline");
    auto flags = std::make_shared<LayoutFlags>(cmd);
    auto json = std::make_shared<bool>(false);
    auto trace = std::make_shared<std::string>();
    auto all_ranks = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "Print JSON: the keys of estimate, plus simulation{}");
    cmd->add_option("--trace", *trace, "Write the predicted timeline to OUT.sqlite (Meshwork trace)");
    cmd->add_flag("--all-ranks", *all_ranks,
                  "With --trace: write every rank of the job (each rank of a pipeline stage replays "
                  "its stage's timeline), not one representative rank per stage");
    cmd->footer("One representative rank per pipeline stage is simulated (the others do the same "
                "work at the same time); --all-ranks writes their replicas too, so the trace lists "
                "every rank with its device (the mesh coordinates come from the layout it carries).\n"
                "Exit codes: 0 success, 1 the trace could not be written, 2 bad input (including "
                "--all-ranks without --trace).");
    return {cmd, [flags, json, trace, all_ranks]() {
                if (*all_ranks && trace->empty()) {
                    throw InputError("<flags>", "--all-ranks", "writes the trace's ranks: give --trace OUT too");
                }
                const Layout layout = flags->build();
                const auto result = validate_layout(layout, flags->source());
                for (const auto& w : result.warnings) std::cerr << "warning: " << w.to_string() << "\n";
                if (!result.valid()) throw InputError(result.errors);
                std::unique_ptr<profiler::TraceOutput> output;
                if (!trace->empty()) output = std::make_unique<profiler::TraceOutput>(*trace);
                SimulationOptions options;
                options.all_ranks = *all_ranks;
                const SimulationResult sim =
                    simulate_layout(layout, output ? &output->writer() : nullptr, options);
                if (output) output->commit();
                if (*json) {
                    auto j = estimate_to_json(sim.estimate);
                    j["simulation"] = {{"simulated_ranks", sim.simulated_ranks},
                                       {"trace_ranks", sim.trace_ranks},
                                       {"events", sim.sim_events},
                                       {"trace_events", sim.trace_events},
                                       {"memory_bytes", sim.memory_bytes}};
                    if (!trace->empty()) j["trace"] = *trace;
                    std::cout << j.dump(2) << "\n";
                } else {
                    std::cout << format_estimate_report(sim.estimate,
                                                        static_cast<double>(layout.cluster.gpu.hbm_bytes));
                    std::cout << "\nSimulated " << sim.simulated_ranks << " representative ranks ("
                              << sim.sim_events << " events)";
                    if (!trace->empty()) {
                        std::cout << "; timeline: " << *trace << " (" << sim.trace_ranks << " ranks, "
                                  << sim.trace_events << " events)";
                    }
                    std::cout << "\n";
                }
                return kExitOk;
            }};
}

}  // namespace

MESHWORK_REGISTER_VERB(50, make_simulate_verb);

}  // namespace meshwork::cli
