// The timeline's questions that are not window queries, answered from a TraceReader: the
// order its lanes show the tracks in, totals over a box selection, and "find next". One
// owner for each, shared by the local timeline (gui/timeline/trace_reader_source) and the
// remote one's server (profiler/remote/trace_server), so both give the same answers.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "profiler/store/trace_reader.h"

namespace meshwork::profiler {

// Track ids in lane order: by rank, then compute, communication, host, memory, then index.
std::vector<int> timeline_track_order(const std::vector<TrackRecord>& tracks);

// The events of one name in a selection (the timeline's selection statistics, Perfetto's
// and Nsight Systems' most used table): how many, and their whole durations.
struct NameTotals {
    std::string name;
    std::int64_t count = 0;
    std::int64_t total_ns = 0;
    std::int64_t min_ns = 0;
    std::int64_t max_ns = 0;
};

// Events overlapping [t0_ns, t1_ns) on `tracks`, and their time inside it by EventKind;
// `names`, one entry per event name in order of first appearance, counts the same events
// with their whole durations.
struct RangeTotals {
    std::int64_t events = 0;
    std::array<std::int64_t, 6> busy_ns{};
    std::vector<NameTotals> names;
};

// Adds an event of `name` lasting `duration_ns` to `names`, through `index` (name → position).
void add_name_total(std::vector<NameTotals>& names, std::unordered_map<std::string, std::size_t>& index,
                    const std::string& name, std::int64_t duration_ns);
RangeTotals range_totals(const TraceReader& reader, const std::vector<int>& tracks, std::int64_t t0_ns,
                         std::int64_t t1_ns);

// The first event starting after `after_ns` on any of `tracks` whose name contains `text`
// (ASCII case-insensitive); ties go to the earlier track in the list. -1 when none.
std::int64_t find_next_event(const TraceReader& reader, const std::vector<int>& tracks, const std::string& text,
                             std::int64_t after_ns);

// Every event on `tracks` whose name contains `text` (ASCII case-insensitive): how many,
// and the ids of the first `limit` of them in start order (the timeline's list of matches).
struct EventMatches {
    std::vector<std::int64_t> events;
    std::int64_t total = 0;
};
EventMatches find_all_events(const TraceReader& reader, const std::vector<int>& tracks, const std::string& text,
                             std::size_t limit);

}  // namespace meshwork::profiler
