#include "gui/timeline/trace_reader_source.h"

#include <algorithm>
#include <limits>
#include <map>

#include "profiler/analysis/timeline_queries.h"

#include "profiler/analysis/trace_layout.h"

namespace meshwork::gui {

TraceReaderSource::TraceReaderSource(profiler::TraceReader reader)
    : reader_(std::move(reader)), lanes_(reader_.tracks()) {
    // A trace whose layout does not parse still opens: its lanes stay in rank order and the
    // timeline says why they are not grouped.
    mesh_ = profiler::trace_mesh(reader_.path(), reader_.run_info());
    steps_ = first_rank_steps(reader_);
}

std::vector<TimelineStep> first_rank_steps(const profiler::TraceReader& reader) {
    int first_rank = std::numeric_limits<int>::max();
    for (const auto& t : reader.tracks()) first_rank = std::min(first_rank, t.info.rank);
    std::map<int, TimelineStep> by_step;
    for (const auto& t : reader.tracks()) {
        if (t.info.rank != first_rank) continue;
        reader.for_each_event_of_track(t.id, [&by_step](const TraceEvent& e) {
            if (e.step < 0) return;
            auto [it, inserted] = by_step.try_emplace(e.step, TimelineStep{e.step, e.start_ns, e.end_ns});
            if (inserted) return;
            it->second.start_ns = std::min(it->second.start_ns, e.start_ns);
            it->second.end_ns = std::max(it->second.end_ns, e.end_ns);
        });
    }
    std::vector<TimelineStep> steps;
    steps.reserve(by_step.size());
    for (const auto& [step, span] : by_step) steps.push_back(span);
    std::sort(steps.begin(), steps.end(),
              [](const TimelineStep& a, const TimelineStep& b) { return a.start_ns < b.start_ns; });
    return steps;
}


bool TraceReaderSource::guarded(const std::function<void()>& ask) const {
    try {
        ask();
        return true;
    } catch (const std::exception& e) {
        if (!reported_) {
            reported_ = true;
            if (on_error_) on_error_(QString::fromStdString(e.what()));
        }
        return false;
    }
}

const std::string& TraceReaderSource::name(std::uint32_t name_id) const {
    static const std::string unknown = "?";
    return name_id >= 1 && name_id <= reader_.string_count() ? reader_.string(name_id) : unknown;
}

void TraceReaderSource::query(int lane, std::int64_t t0, std::int64_t t1, std::size_t pixels,
                              std::vector<TimelineItem>& out) const {
    out.clear();
    if (lane < 0 || lane >= lane_count()) return;
    std::vector<profiler::DrawItem> items;
    if (!guarded([&] { items = reader_.window(lanes_.track_of(lane), t0, t1, pixels); })) return;
    out.reserve(items.size());
    for (const auto& d : items) {
        out.push_back({d.start_ns, d.end_ns, d.count == 1 ? d.event_id : -1,
                       static_cast<std::uint32_t>(d.count), static_cast<std::uint32_t>(d.name_id), d.busy_ns, d.kind,
                       -1});
    }
}

TimelineEventDetails TraceReaderSource::details(std::int64_t event) const {
    TimelineEventDetails d;
    guarded([&] {
        if (const auto e = reader_.event(event)) {
            d.event = *e;
            d.lane = lanes_.lane_of_track(e->track);
        }
    });
    return d;
}

TimelineRangeStats TraceReaderSource::range_stats(int lane_first, int lane_last, std::int64_t t0,
                                                  std::int64_t t1) const {
    TimelineRangeStats stats;
    profiler::RangeTotals totals;
    if (!guarded([&] { totals = profiler::range_totals(reader_, lanes_.tracks_of(lane_first, lane_last), t0, t1); })) {
        return stats;
    }
    stats.events = totals.events;
    std::copy(totals.busy_ns.begin(), totals.busy_ns.end(), stats.busy_ns);
    stats.names = totals.names;
    return stats;
}

std::int64_t TraceReaderSource::find_next(const std::string& text, std::int64_t after_ns) const {
    std::int64_t found = -1;
    guarded([&] { found = profiler::find_next_event(reader_, lanes_.tracks(), text, after_ns); });
    return found;
}

profiler::EventMatches TraceReaderSource::find_all(const std::string& text, std::size_t limit) const {
    return profiler::find_all_events(reader_, lanes_.tracks(), text, limit);
}

}  // namespace meshwork::gui
