// Per rank and per step metrics of a trace: the rank overview's heatmap (gui/ranks) and the
// straggler report (stragglers.h) both read them, whatever produced the trace.
#pragma once

#include <cstddef>
#include <vector>

#include "profiler/store/trace_reader.h"

namespace meshwork::profiler {

struct RankStepCell {
    bool present = false;          // the rank has device events in this step
    double step_s = 0;             // first device event start to last end of the step
    double compute_s = 0;          // |union(compute)| inside the step
    // CPU time of the rank's thread inside compute ops in the step: the CPU engine's
    // thread.compute_on_cpu_s counter (docs/trace-format.md "Scheduler counters"); -1 when
    // the trace does not record it. Where ranks share a host's cores, compute_s also holds
    // the time a rank waited for a core, which says nothing about the rank.
    double compute_on_cpu_s = -1;
    double exposed_comm_s = 0;     // communication not hidden under compute
    double collective_wait_s = 0;  // time spent in collectives waiting for the last rank to arrive
    int waited_for_rank = -1;      // the rank this one waited for longest in the step; -1: none
};

struct RankStepMatrix {
    std::vector<int> ranks;  // ascending
    std::vector<int> steps;  // ascending; empty when no event carries a step
    std::vector<RankStepCell> cells;  // ranks.size() × steps.size(), row r holds rank ranks[r]

    [[nodiscard]] const RankStepCell& at(std::size_t rank_index, std::size_t step_index) const {
        return cells[rank_index * steps.size() + step_index];
    }
};

RankStepMatrix compute_rank_steps(const TraceReader& trace);

}  // namespace meshwork::profiler
