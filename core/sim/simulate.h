// The simulator: one training step of a layout as a discrete-event simulation
// (pipeline_sim.h) over the pipeline schedule, with the per-block costs of the cost model,
// the end-of-step gradient reduction and optimizer, and the predicted timeline written to a
// TraceSink in the profiler's event model.
#pragma once

#include <cstdint>

#include "core/cost/estimate.h"
#include "core/layout/layout.h"
#include "core/trace/trace_event.h"

namespace meshwork {

struct SimulationResult {
    // The metrics of CLI.md from the simulated timeline; memory per stage from the cost
    // model with the schedule's in-flight counts.
    Estimate estimate;
    int simulated_ranks = 0;        // one representative rank per pipeline stage
    int trace_ranks = 0;            // ranks written to the sink (0 without one)
    std::int64_t sim_events = 0;    // events the discrete-event simulation processed
    std::int64_t trace_events = 0;  // events written to the sink
    std::size_t memory_bytes = 0;   // memory the simulation state took
    // Ranks sharing a host's cores (ClusterSpec::host_cores): the mean time a rank's compute
    // (passes and optimizer) waited for a core in the step, runnable but not running — what
    // a CPU run's trace shows as compute spans' wall time beyond their CPU time. 0 otherwise.
    double host_core_wait_s = 0;
};

struct SimulationOptions {
    // Write every rank of the job, not only one representative rank per pipeline stage:
    // the ranks of a stage (same pp coordinate) replay its representative's timeline, so
    // the simulation costs the same and the writing grows with the world size.
    bool all_ranks = false;
};

// Validates the layout (InputError when invalid), simulates one step and, when `sink` is
// not null, writes the predicted timeline of every representative rank (or every rank) to
// it, with each rank's device (the sink is not closed: the caller owns it).
SimulationResult simulate_layout(const Layout& layout, TraceSink* sink = nullptr,
                                 const SimulationOptions& options = {});

}  // namespace meshwork
