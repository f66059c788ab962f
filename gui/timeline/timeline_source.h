// What the timeline view reads: lanes (one per rank × stream) and, for a time window,
// at most a bounded number of drawable items per lane, runs of events narrower than the
// merge width folded into one item with a count (Tracy's "folded zones"). The profiler's
// TraceReader answers the same questions from SQLite; an adapter to it is one small file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/mesh/device_mesh.h"
#include "core/trace/trace_event.h"
#include "profiler/analysis/timeline_queries.h"

namespace meshwork::gui {

struct TimelineLane {
    int rank = 0;
    TrackKind kind = TrackKind::ComputeStream;
    std::string name;  // "compute", "comm:tp", "host"
};

// One thing to draw: a single event (count 1) or a folded run of `count` events.
struct TimelineItem {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t event = -1;  // id of the event when count == 1, for details()
    std::uint32_t count = 1;
    std::uint32_t name_id = 0;  // the source's id, into name(); when folded, one event's or 0 (folded runs draw no name)
    std::int64_t busy_ns = 0;   // summed duration of the events folded
    EventKind kind = EventKind::Compute;  // when folded, the kind that took the most time
    int layer = -1;
};

struct TimelineEventDetails {
    TraceEvent event;
    int lane = 0;
};

// Totals over a time range of some lanes (box selection); `names`: the events per name with
// their whole durations (the selection statistics table), empty where the source cannot
// say (a remote trace).
struct TimelineRangeStats {
    std::int64_t events = 0;
    std::int64_t busy_ns[6] = {0, 0, 0, 0, 0, 0};  // by EventKind
    std::vector<profiler::NameTotals> names;
};

// One training step as the timeline marks it (a row under the time ruler, a tick at its
// start): the span of the events that carry its number on the first rank.
struct TimelineStep {
    int step = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

class TimelineSource {
public:
    virtual ~TimelineSource() = default;
    [[nodiscard]] virtual int lane_count() const = 0;
    [[nodiscard]] virtual const TimelineLane& lane(int index) const = 0;
    [[nodiscard]] virtual std::int64_t begin_ns() const = 0;
    [[nodiscard]] virtual std::int64_t end_ns() const = 0;
    [[nodiscard]] virtual std::int64_t event_count() const = 0;
    [[nodiscard]] virtual const std::string& name(std::uint32_t name_id) const = 0;
    // The steps to mark, in time order; empty when the events carry no step numbers.
    [[nodiscard]] virtual const std::vector<TimelineStep>& steps() const {
        static const std::vector<TimelineStep> none;
        return none;
    }
    // The mesh of the layout the trace carries, when it carries one: lanes group by its
    // pipeline stages and data-parallel replicas (lane_groups.h). Null: rank order.
    [[nodiscard]] virtual const DeviceMesh* mesh() const { return nullptr; }

    // Items of `lane` overlapping [t0, t1) drawn `pixels` wide, in time order: runs of
    // events narrower than a pixel or two fold into one item. Fills `out` (cleared first)
    // with at most `pixels` items whatever the number of events.
    virtual void query(int lane, std::int64_t t0, std::int64_t t1, std::size_t pixels,
                       std::vector<TimelineItem>& out) const = 0;
    [[nodiscard]] virtual TimelineEventDetails details(std::int64_t event) const = 0;
    [[nodiscard]] virtual TimelineRangeStats range_stats(int lane_first, int lane_last, std::int64_t t0,
                                                         std::int64_t t1) const = 0;
    // The first event starting after `after_ns` (any lane) whose name contains `text`
    // (case-insensitive); -1 when none.
    [[nodiscard]] virtual std::int64_t find_next(const std::string& text, std::int64_t after_ns) const = 0;
    // Every event whose name contains `text`: how many, and the first `limit` in start
    // order (the find bar's list). By default find_next() repeatedly, which stops at `limit`
    // and then counts no further (total is then `limit`).
    [[nodiscard]] virtual profiler::EventMatches find_all(const std::string& text, std::size_t limit) const {
        profiler::EventMatches out;
        for (std::int64_t after = begin_ns() - 1; out.events.size() < limit;) {
            const std::int64_t e = find_next(text, after);
            if (e < 0) break;
            out.events.push_back(e);
            after = details(e).event.start_ns;
        }
        out.total = static_cast<std::int64_t>(out.events.size());
        return out;
    }
};

}  // namespace meshwork::gui
