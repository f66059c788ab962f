// Running a layout: every rank in this process (threads + the in-process communicator), or
// this process's rank of an MPI job. Entry points for meshwork-cli run, the GUI and tests.
#pragma once

#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/engine/communicator.h"
#include "core/engine/engine_options.h"
#include "core/engine/reference_check.h"
#include "core/engine/trainer.h"
#include "core/trace/trace_event.h"

namespace meshwork::engine {

struct RunHooks {
    TraceSink* sink = nullptr;                              // op and collective events
    std::function<void(const StepResult&)> on_step;         // called on rank 0 per step
    const ReferenceState* reference = nullptr;              // compare after the last step
    double tolerance = 1e-4;                                // updated weights (relative)
    double loss_tolerance = -1;                             // losses; < 0: `tolerance`
    bool keep_params = false;                               // download full params (1 rank)
    // Checked at every op and wait; a stop ends the run with StopRequested on every rank.
    std::stop_token stop;
};

struct RunResult {
    std::vector<StepResult> steps;
    std::vector<std::size_t> peak_bytes;       // per rank of this process (measured)
    std::optional<Mismatch> mismatch;          // the first one (lowest rank), when checked
    std::map<std::string, std::vector<float>> params;  // with keep_params on a 1-rank run
};

// What a profile of this run records about it (tool version, source "meshwork-<backend>",
// the layout, cluster, clock domain and world size): one definition for meshwork-cli run
// and the GUI's run dialog.
TraceRunInfo run_trace_info(const Layout& layout, const EngineOptions& options);

// The token stream of the options (synthetic or --tokens FILE).
TokenStream make_token_stream(const Layout& layout, const EngineOptions& options);

// Every rank as a thread of this process. The first failure on any rank stops every rank
// (CommError on the others) and is rethrown as RuntimeError "rank R: ..."; a stop request
// (hooks.stop) rethrows StopRequested.
RunResult run_in_process(const Layout& layout, const EngineOptions& options, const RunHooks& hooks);

// This process's rank, with `world` spanning the job (MPI). Failures propagate to the
// caller, which aborts the job.
RunResult run_rank(const Layout& layout, const EngineOptions& options, const RunHooks& hooks,
                   Communicator& world);

// The unsharded reference: one rank, same model, seed, batches and steps.
ReferenceState run_reference(const Layout& layout, const EngineOptions& options, std::stop_token stop = {});

}  // namespace meshwork::engine
