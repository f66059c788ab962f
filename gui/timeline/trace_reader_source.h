// The timeline over a Meshwork trace file: a thin adapter from profiler::TraceReader (its
// level-of-detail window queries do the merging) to TimelineSource. Lanes are the trace's
// tracks sorted by rank, then compute, communication, host, memory. Items carry the store's
// own string ids as their name ids (a store never holds 2^32 names).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <QString>
#include <unordered_map>

#include "profiler/store/trace_reader.h"
#include "gui/timeline/timeline_source.h"
#include "gui/timeline/trace_lanes.h"
#include "profiler/analysis/trace_layout.h"

namespace meshwork::gui {

// The steps of a trace as the timeline marks them: per step number, the span of the events
// of the lowest rank that carry it, in time order (one pass over that rank's tracks).
std::vector<TimelineStep> first_rank_steps(const profiler::TraceReader& reader);

class TraceReaderSource : public TimelineSource {
public:
    explicit TraceReaderSource(profiler::TraceReader reader);

    [[nodiscard]] const profiler::TraceReader& reader() const { return reader_; }
    [[nodiscard]] int lane_count() const override { return lanes_.count(); }
    [[nodiscard]] const TimelineLane& lane(int index) const override { return lanes_.lane(index); }
    [[nodiscard]] std::int64_t begin_ns() const override { return reader_.start_ns(); }
    [[nodiscard]] std::int64_t end_ns() const override { return reader_.end_ns(); }
    [[nodiscard]] std::int64_t event_count() const override { return reader_.event_count(); }
    [[nodiscard]] const std::string& name(std::uint32_t name_id) const override;
    [[nodiscard]] const DeviceMesh* mesh() const override { return mesh_.get(); }
    // From the events of the first rank's tracks (read once, when the source is made: one
    // rank's share of the file, on the opener's worker thread).
    [[nodiscard]] const std::vector<TimelineStep>& steps() const override { return steps_; }
    // Why the layout the trace carries could not be read (its lanes are then in rank
    // order); empty when it was read or there is none.
    [[nodiscard]] const std::string& layout_error() const { return mesh_.error; }
    void query(int lane, std::int64_t t0, std::int64_t t1, std::size_t pixels,
               std::vector<TimelineItem>& out) const override;
    [[nodiscard]] TimelineEventDetails details(std::int64_t event) const override;
    [[nodiscard]] TimelineRangeStats range_stats(int lane_first, int lane_last, std::int64_t t0,
                                                 std::int64_t t1) const override;
    [[nodiscard]] std::int64_t find_next(const std::string& text, std::int64_t after_ns) const override;
    [[nodiscard]] profiler::EventMatches find_all(const std::string& text, std::size_t limit) const override;

    // Told once when a query fails on the file (a chunk the open-time checks could not
    // see): the view is painting then, so the query answers with nothing instead of
    // throwing through Qt, and the callback shows why.
    void on_error(std::function<void(const QString&)> callback) const { on_error_ = std::move(callback); }

private:
    // Runs `ask`; an exception from the reader is reported once and makes it return false.
    bool guarded(const std::function<void()>& ask) const;

    profiler::TraceReader reader_;
    mutable std::function<void(const QString&)> on_error_;
    mutable bool reported_ = false;
    TraceLanes lanes_;
    profiler::TraceMesh mesh_;
    std::vector<TimelineStep> steps_;
};

}  // namespace meshwork::gui
