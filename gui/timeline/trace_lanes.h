// The timeline's lanes of a trace's tracks (profiler::timeline_track_order) and the mapping
// between lanes and tracks both ways: the local and the remote source show the same lanes
// and answer lane ↔ track questions alike.
#pragma once

#include <unordered_map>
#include <vector>

#include "gui/timeline/timeline_source.h"
#include "profiler/store/trace_reader.h"

namespace meshwork::gui {

class TraceLanes {
public:
    explicit TraceLanes(const std::vector<profiler::TrackRecord>& tracks);

    [[nodiscard]] int count() const { return static_cast<int>(lanes_.size()); }
    [[nodiscard]] const TimelineLane& lane(int index) const { return lanes_[static_cast<std::size_t>(index)]; }
    [[nodiscard]] int track_of(int lane) const { return track_of_lane_[static_cast<std::size_t>(lane)]; }
    // Every lane's track, in lane order.
    [[nodiscard]] const std::vector<int>& tracks() const { return track_of_lane_; }
    // The lane of `track`; 0 when the trace has no such track.
    [[nodiscard]] int lane_of_track(int track) const;
    // The tracks of lanes lane_first..lane_last, clamped to the lanes there are.
    [[nodiscard]] std::vector<int> tracks_of(int lane_first, int lane_last) const;

private:
    std::vector<TimelineLane> lanes_;
    std::vector<int> track_of_lane_;
    std::unordered_map<int, int> lane_of_track_;
};

}  // namespace meshwork::gui
