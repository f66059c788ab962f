#include "gui/timeline/trace_reader_source.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "core/common/error.h"
#include "profiler/analysis/trace_layout.h"

namespace meshwork::gui {

TraceReaderSource::TraceReaderSource(profiler::TraceReader reader) : reader_(std::move(reader)) {
    std::vector<const profiler::TrackRecord*> tracks;
    for (const auto& t : reader_.tracks()) tracks.push_back(&t);
    std::stable_sort(tracks.begin(), tracks.end(), [](const auto* a, const auto* b) {
        if (a->info.rank != b->info.rank) return a->info.rank < b->info.rank;
        if (a->info.kind != b->info.kind) return a->info.kind < b->info.kind;
        return a->info.index < b->info.index;
    });
    for (const auto* t : tracks) {
        lane_of_track_[t->id] = static_cast<int>(lanes_.size());
        track_of_lane_.push_back(t->id);
        lanes_.push_back({t->info.rank, t->info.kind, t->info.name.empty() ? to_string(t->info.kind) : t->info.name});
    }
    // A trace whose layout does not parse still opens: its lanes stay in rank order and the
    // timeline says why they are not grouped.
    try {
        if (const auto layout = profiler::trace_layout(reader_)) mesh_ = layout->mesh();
    } catch (const InputError& e) {
        layout_error_ = e.what();
    }
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
    TimelineRangeStats stats;
    for (int l = std::max(0, lane_first); l <= std::min(lane_last, lane_count() - 1); ++l) {
        reader_.for_each_event_of_track(track_of_lane_[static_cast<std::size_t>(l)], [&](const TraceEvent& e) {
            if (e.end_ns <= t0 || e.start_ns >= t1) return;
            ++stats.events;
            const auto k = static_cast<std::size_t>(e.kind);
            if (k < 6) stats.busy_ns[k] += std::min(e.end_ns, t1) - std::max(e.start_ns, t0);
        });
    }
    return stats;
}

std::int64_t TraceReaderSource::find_next(const std::string& text, std::int64_t after_ns) const {
    auto lower = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return s;
    };
    const std::string needle = lower(text);
    // Whether each name contains the text, decided once per name (-1: not yet).
    std::vector<std::int8_t> matches(static_cast<std::size_t>(reader_.string_count()) + 1, -1);
    auto name_matches = [&](std::int64_t name_id) {
        auto& m = matches[static_cast<std::size_t>(name_id)];
        if (m < 0) m = lower(reader_.string(name_id)).find(needle) != std::string::npos ? 1 : 0;
        return m == 1;
    };
    std::int64_t best = -1;
    std::int64_t best_start = std::numeric_limits<std::int64_t>::max();
    // A window wide enough in "pixels" not to merge gives every event with its id; past a
    // million events after `after_ns` on one track, merged runs are skipped.
    constexpr std::size_t kUnmerged = 1'000'000;
    for (int l = 0; l < lane_count(); ++l) {
        const auto items = reader_.window(track_of_lane_[static_cast<std::size_t>(l)], after_ns + 1,
                                          std::min(best_start, reader_.end_ns() + 1), kUnmerged);
        for (const auto& d : items) {
            if (d.count != 1 || d.start_ns <= after_ns) continue;
            if (d.start_ns >= best_start) break;
            if (name_matches(d.name_id)) {
                best_start = d.start_ns;
                best = d.event_id;
                break;
            }
        }
    }
    return best;
}

}  // namespace meshwork::gui
