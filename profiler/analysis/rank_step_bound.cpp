#include "profiler/analysis/rank_step_bound.h"

#include <algorithm>
#include <set>

#include "core/common/error.h"

namespace meshwork::profiler {

std::int64_t rank_step_cell_bound(std::int64_t events) {
    if (events >= kMaxRankStepCells / kCellsPerEvent) return kMaxRankStepCells;  // no overflow
    return std::min(kMaxRankStepCells, std::max(kMinRankStepCells, kCellsPerEvent * std::max<std::int64_t>(events, 0)));
}

void check_rank_step_bound(const TraceReader& trace) {
    std::set<int> ranks;
    for (const auto& t : trace.tracks()) ranks.insert(t.info.rank);
    const std::int64_t steps = trace.distinct_step_count();
    const auto rank_count = static_cast<std::int64_t>(ranks.size());
    const std::int64_t allowed = rank_step_cell_bound(trace.event_count());
    // ranks ≤ 2^24 and steps ≤ 2^31 (trace_content_check): the product fits in 64 bits.
    if (rank_count * steps > allowed) {
        throw InputError(trace.path(), "events.step",
                         "up to " + std::to_string(rank_count) + " ranks x " + std::to_string(steps) +
                             " steps: a rank x step table of " + std::to_string(rank_count * steps) +
                             " cells for " + std::to_string(trace.event_count()) +
                             " events, more than the " + std::to_string(allowed) +
                             " allowed (at most 4 cells per event, or 4 M, and never 64 M); a trace this sparse is "
                             "damaged or was not written by one job");
    }
}

RankStepMatrix compute_rank_steps_bounded(const TraceReader& trace) {
    check_rank_step_bound(trace);
    return compute_rank_steps(trace);
}

}  // namespace meshwork::profiler
