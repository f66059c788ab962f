// The rank × step matrix (rank_steps.h) is dense: ranks × steps cells of 56 bytes, whatever
// the trace holds. A small crafted or damaged trace (5,000 ranks each with events in its own
// step: 540 KB) would make it 25 M cells, 1.4 GB. Its callers (stats --stragglers, the Ranks
// view, serve-trace's rank_steps) go through this bound first: the matrix may have at most
// max(kMinRankStepCells, kCellsPerEvent × events) cells, so its memory follows the input's
// size. A real profile has at least one event in every cell it fills, so a trace that fills a
// quarter of its matrix or more always passes.
#pragma once

#include <cstdint>

#include "profiler/analysis/rank_steps.h"
#include "profiler/store/trace_reader.h"

namespace meshwork::profiler {

inline constexpr std::int64_t kMinRankStepCells = std::int64_t{1} << 22;  // 4 M cells, 235 MB
inline constexpr std::int64_t kCellsPerEvent = 4;
// And never more than this, whatever the event count: 64 M cells, 3.6 GB. A real profile
// fills a cell with at least one event, so this needs 64 M events, six times the largest
// trace the project's benches write (bench_trace_store: 10 M events). It bounds what a
// remote client accepts from a server whose hello claims any event count (trace_client.cpp).
inline constexpr std::int64_t kMaxRankStepCells = std::int64_t{1} << 26;

// The most cells a matrix of a trace of `events` events may have:
// min(kMaxRankStepCells, max(kMinRankStepCells, kCellsPerEvent × events)). The local bound
// (check_rank_step_bound) and the remote client's (a rank_steps answer) are both this.
std::int64_t rank_step_cell_bound(std::int64_t events);

// Throws InputError naming the trace when its matrix would exceed the bound.
void check_rank_step_bound(const TraceReader& trace);

// check_rank_step_bound, then compute_rank_steps.
RankStepMatrix compute_rank_steps_bounded(const TraceReader& trace);

}  // namespace meshwork::profiler
