#include "gui/timeline/trace_lanes.h"

#include <algorithm>

#include "profiler/analysis/timeline_queries.h"

namespace meshwork::gui {

TraceLanes::TraceLanes(const std::vector<profiler::TrackRecord>& tracks)
    : track_of_lane_(profiler::timeline_track_order(tracks)) {
    std::unordered_map<int, const profiler::TrackRecord*> by_id;
    for (const auto& t : tracks) by_id[t.id] = &t;
    lanes_.reserve(track_of_lane_.size());
    for (std::size_t l = 0; l < track_of_lane_.size(); ++l) {
        const auto& t = *by_id.at(track_of_lane_[l]);
        lanes_.push_back({t.info.rank, t.info.kind, t.info.name.empty() ? to_string(t.info.kind) : t.info.name});
        lane_of_track_[t.id] = static_cast<int>(l);
    }
}

int TraceLanes::lane_of_track(int track) const {
    const auto it = lane_of_track_.find(track);
    return it == lane_of_track_.end() ? 0 : it->second;
}

std::vector<int> TraceLanes::tracks_of(int lane_first, int lane_last) const {
    std::vector<int> tracks;
    for (int l = std::max(0, lane_first); l <= std::min(lane_last, count() - 1); ++l) tracks.push_back(track_of(l));
    return tracks;
}

}  // namespace meshwork::gui
