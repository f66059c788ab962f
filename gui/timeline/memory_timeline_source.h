// A TimelineSource over events held in memory: per lane, events sorted by start and not
// overlapping (a stream runs one thing at a time), so both starts and ends are sorted and
// every window lookup is a binary search. Used for traces built in the process (tests,
// benchmarks) and as the reference the TraceReader adapter is compared against.
#pragma once

#include <optional>
#include <unordered_map>

#include "gui/timeline/timeline_source.h"

namespace meshwork::gui {

class MemoryTimelineSource : public TimelineSource {
public:
    int add_lane(TimelineLane lane);
    // Events must be added in start order per lane and must not overlap within a lane.
    void add_event(int lane, const TraceEvent& event);
    void reserve(int lane, std::size_t events);
    // The mesh the ranks were laid out on (tests and benchmarks of grouped lanes).
    void set_mesh(DeviceMesh mesh) { mesh_ = std::move(mesh); }
    [[nodiscard]] const DeviceMesh* mesh() const override { return mesh_ ? &*mesh_ : nullptr; }

    [[nodiscard]] int lane_count() const override { return static_cast<int>(lanes_.size()); }
    [[nodiscard]] const TimelineLane& lane(int index) const override;
    [[nodiscard]] std::int64_t begin_ns() const override { return begin_ns_; }
    [[nodiscard]] std::int64_t end_ns() const override { return end_ns_; }
    [[nodiscard]] std::int64_t event_count() const override { return count_; }
    [[nodiscard]] const std::string& name(std::uint32_t name_id) const override;
    void query(int lane, std::int64_t t0, std::int64_t t1, std::size_t pixels,
               std::vector<TimelineItem>& out) const override;
    // Folding width in pixels: events narrower than this merge with their neighbours.
    static constexpr double kMergePx = 2.0;
    [[nodiscard]] TimelineEventDetails details(std::int64_t event) const override;
    [[nodiscard]] TimelineRangeStats range_stats(int lane_first, int lane_last, std::int64_t t0,
                                                 std::int64_t t1) const override;
    [[nodiscard]] std::int64_t find_next(const std::string& text, std::int64_t after_ns) const override;

private:
    // Per event, what folding reads in dense arrays and the rest apart. A whole-trace frame
    // folds tens of thousands of runs, each found by a search whose loads depend on each
    // other: it is bound by memory latency, so everything one run needs (its boundaries,
    // the busy time before it, its kind) lies in the lines the search already brought in
    // or in arrays small enough to stay in cache.
    struct Span {
        std::int64_t start_ns;
        std::int64_t end_ns;
        std::int64_t busy_before_ns;  // summed duration of the lane's earlier events
    };
    struct Stored {  // 24 bytes; with the span, 48 bytes an event (10M events: 480 MB)
        std::int64_t bytes;
        float flops;
        std::uint32_t name_id;
        std::int16_t layer;
        std::int16_t micro_batch;
        std::int16_t step;
        EventKind kind;
    };
    struct Lane {
        TimelineLane info;
        std::vector<Span> spans;
        std::vector<EventKind> kinds;  // one byte an event
        std::vector<Stored> events;
        std::int64_t busy_ns = 0;      // summed duration of all its events
    };
    std::uint32_t intern(const std::string& name);
    // Event ids pack the lane in the high bits.
    static std::int64_t event_id(int lane, std::size_t index) {
        return (static_cast<std::int64_t>(lane) << 40) | static_cast<std::int64_t>(index);
    }

    std::vector<Lane> lanes_;
    std::vector<std::string> names_;
    std::unordered_map<std::string, std::uint32_t> name_ids_;
    std::int64_t begin_ns_ = 0;
    std::int64_t end_ns_ = 0;
    std::int64_t count_ = 0;
    std::optional<DeviceMesh> mesh_;
};

}  // namespace meshwork::gui
