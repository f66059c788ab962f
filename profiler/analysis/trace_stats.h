// Metrics of a trace, the same whatever produced it (docs/profiler.md): per rank compute,
// communication and idle time and their overlap (HTA's temporal breakdown), pipeline bubble,
// top kernels, and per collective the achieved algbw and busbw (nccl-tests' definitions).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/analysis/warmup_steps.h"
#include "profiler/store/trace_reader.h"

namespace meshwork::profiler {

struct RankStats {
    int rank = 0;
    double span_s = 0;            // first device event start to last end ("kernel time")
    double compute_s = 0;         // |union(compute)|
    double comm_s = 0;            // |union(communication)|
    double memcpy_s = 0;          // |union(memcpy, memset)|
    double idle_s = 0;            // span - |union(all device events)|
    double exposed_comm_s = 0;    // communication not hidden under compute
    double overlap_fraction = 0;  // |compute ∩ comm| / |comm|
    double bubble_fraction = 0;   // idle time inside steps / step time (see docs/profiler.md)
    std::int64_t events = 0;
    // One training step, for comparing a trace of several steps with a prediction of one:
    // means over the steps after the warm-up ones (warmup_steps.h: by default the first,
    // with its allocations, first-touch page faults, lazy initialisation; one step is
    // always kept), else over the one step
    // (or the whole trace when no event carries a step). Each step's extent runs from its
    // first device event to its last; time between steps does not count.
    int steps = 0;              // distinct step numbers among device events
    int steps_averaged = 0;     // steps behind the per-step means (0: the whole trace)
    double step_s = 0;          // mean extent of a step
    double step_compute_s = 0;  // |union(compute)| inside a step
    double step_comm_s = 0;     // |union(communication)| inside a step
    double step_exposed_comm_s = 0;
    double step_idle_s = 0;  // step extent - |union(all device events)| inside it
    // Device work of a rank with steps that belongs to none: launched before the profiler
    // started (its launch is not in the trace; HTA's iteration -1) or outside every step
    // window. Counted in the whole-trace figures above, in no step's.
    std::int64_t outside_steps_events = 0;
    double outside_steps_s = 0;  // |union| of that work
};

struct KernelStats {
    std::string name;
    EventKind kind = EventKind::Compute;
    std::int64_t count = 0;
    double total_s = 0;
    double mean_s = 0;
    double max_s = 0;
    double flops = 0;
};

struct CollectiveStats {
    Collective collective = Collective::None;  // None: communication of no known collective
    std::int64_t bytes = 0;  // per call (nccl-tests' S)
    int group_size = 0;      // 0 when unknown (busbw then equals algbw)
    std::int64_t count = 0;
    double mean_s = 0;
    double algbw_gbps = 0;   // S / t, GB/s (1e9)
    double busbw_gbps = 0;   // algbw x bus factor for n ranks
};

struct TraceStats {
    std::vector<RankStats> ranks;
    std::vector<KernelStats> kernels;  // by total time, largest first
    std::vector<CollectiveStats> collectives;
};

// How the report names a collective: its name, "other" for a communication event of no
// known collective.
std::string_view collective_label(Collective c);

TraceStats compute_stats(const TraceReader& trace, std::size_t top_kernels = 20,
                         int warmup_steps = kDefaultWarmupSteps);
nlohmann::json stats_to_json(const TraceStats& stats);
// What `meshwork-cli stats --json` prints (and serve-trace's stats answer): stats_to_json of
// compute_stats plus the trace's path, source, completeness and event count.
// With memory[]: measured memory per rank and device (memory_stats.h), empty without.
nlohmann::json stats_report_json(const TraceReader& trace, std::size_t top_kernels);

}  // namespace meshwork::profiler
