// The timeline's questions that are not window queries, answered from a TraceReader: the
// order its lanes show the tracks in, totals over a box selection, and "find next". One
// owner for each, shared by the local timeline (gui/timeline/trace_reader_source) and the
// remote one's server (profiler/remote/trace_server), so both give the same answers.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "profiler/store/trace_reader.h"

namespace meshwork::profiler {

// Track ids in lane order: by rank, then compute, communication, host, memory, then index.
std::vector<int> timeline_track_order(const std::vector<TrackRecord>& tracks);

// Events overlapping [t0_ns, t1_ns) on `tracks`, and their time inside it by EventKind.
struct RangeTotals {
    std::int64_t events = 0;
    std::array<std::int64_t, 6> busy_ns{};
};
RangeTotals range_totals(const TraceReader& reader, const std::vector<int>& tracks, std::int64_t t0_ns,
                         std::int64_t t1_ns);

// The first event starting after `after_ns` on any of `tracks` whose name contains `text`
// (ASCII case-insensitive); ties go to the earlier track in the list. -1 when none.
std::int64_t find_next_event(const TraceReader& reader, const std::vector<int>& tracks, const std::string& text,
                             std::int64_t after_ns);

}  // namespace meshwork::profiler
