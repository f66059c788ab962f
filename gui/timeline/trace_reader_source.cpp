#include "gui/timeline/trace_reader_source.h"

#include <algorithm>

#include "profiler/analysis/timeline_queries.h"

#include "profiler/analysis/trace_layout.h"

namespace meshwork::gui {

std::vector<TimelineLane> trace_lanes(const std::vector<profiler::TrackRecord>& tracks, std::vector<int>& track_of_lane) {
    std::unordered_map<int, const profiler::TrackRecord*> by_id;
    for (const auto& t : tracks) by_id[t.id] = &t;
    std::vector<TimelineLane> lanes;
    track_of_lane = profiler::timeline_track_order(tracks);
    for (const int id : track_of_lane) {
        const auto& t = *by_id.at(id);
        lanes.push_back({t.info.rank, t.info.kind, t.info.name.empty() ? to_string(t.info.kind) : t.info.name});
    }
    return lanes;
}

TraceReaderSource::TraceReaderSource(profiler::TraceReader reader) : reader_(std::move(reader)) {
    lanes_ = trace_lanes(reader_.tracks(), track_of_lane_);
    for (std::size_t l = 0; l < track_of_lane_.size(); ++l) lane_of_track_[track_of_lane_[l]] = static_cast<int>(l);
    // A trace whose layout does not parse still opens: its lanes stay in rank order and the
    // timeline says why they are not grouped.
    mesh_ = profiler::trace_mesh(reader_.path(), reader_.run_info());
}

const TimelineLane& TraceReaderSource::lane(int index) const { return lanes_[static_cast<std::size_t>(index)]; }

int TraceReaderSource::lane_of_track(int track) const {
    const auto it = lane_of_track_.find(track);
    return it == lane_of_track_.end() ? 0 : it->second;
}

const std::string& TraceReaderSource::name(std::uint32_t name_id) const {
    static const std::string unknown = "?";
    return name_id >= 1 && name_id <= reader_.string_count() ? reader_.string(name_id) : unknown;
}

void TraceReaderSource::query(int lane, std::int64_t t0, std::int64_t t1, std::size_t pixels,
                              std::vector<TimelineItem>& out) const {
    out.clear();
    if (lane < 0 || lane >= lane_count()) return;
    const auto items = reader_.window(track_of_lane_[static_cast<std::size_t>(lane)], t0, t1, pixels);
    out.reserve(items.size());
    for (const auto& d : items) {
        out.push_back({d.start_ns, d.end_ns, d.count == 1 ? d.event_id : -1,
                       static_cast<std::uint32_t>(d.count), static_cast<std::uint32_t>(d.name_id), d.busy_ns, d.kind,
                       -1});
    }
}

TimelineEventDetails TraceReaderSource::details(std::int64_t event) const {
    TimelineEventDetails d;
    if (const auto e = reader_.event(event)) {
        d.event = *e;
        d.lane = lane_of_track(e->track);
    }
    return d;
}

TimelineRangeStats TraceReaderSource::range_stats(int lane_first, int lane_last, std::int64_t t0,
                                                  std::int64_t t1) const {
    std::vector<int> tracks;
    for (int l = std::max(0, lane_first); l <= std::min(lane_last, lane_count() - 1); ++l) {
        tracks.push_back(track_of_lane_[static_cast<std::size_t>(l)]);
    }
    const auto totals = profiler::range_totals(reader_, tracks, t0, t1);
    TimelineRangeStats stats;
    stats.events = totals.events;
    std::copy(totals.busy_ns.begin(), totals.busy_ns.end(), stats.busy_ns);
    return stats;
}

std::int64_t TraceReaderSource::find_next(const std::string& text, std::int64_t after_ns) const {
    return profiler::find_next_event(reader_, track_of_lane_, text, after_ns);
}

}  // namespace meshwork::gui
