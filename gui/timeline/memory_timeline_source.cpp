#include "gui/timeline/memory_timeline_source.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace meshwork::gui {

int MemoryTimelineSource::add_lane(TimelineLane lane) {
    lanes_.push_back({std::move(lane), {}, {}, {}});
    return static_cast<int>(lanes_.size()) - 1;
}

void MemoryTimelineSource::reserve(int lane, std::size_t events) {
    lanes_[static_cast<std::size_t>(lane)].events.reserve(events);
    lanes_[static_cast<std::size_t>(lane)].spans.reserve(events);
    lanes_[static_cast<std::size_t>(lane)].kinds.reserve(events);
}

std::uint32_t MemoryTimelineSource::intern(const std::string& name) {
    const auto it = name_ids_.find(name);
    if (it != name_ids_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(names_.size());
    names_.push_back(name);
    name_ids_.emplace(name, id);
    return id;
}

void MemoryTimelineSource::add_event(int lane, const TraceEvent& e) {
    auto& l = lanes_[static_cast<std::size_t>(lane)];
    const Span span{e.start_ns, std::max(e.end_ns, e.start_ns), l.busy_ns};
    l.spans.push_back(span);
    l.kinds.push_back(e.kind);
    l.busy_ns += span.end_ns - span.start_ns;
    l.events.push_back({e.bytes, static_cast<float>(e.flops), intern(e.name), static_cast<std::int16_t>(e.layer),
                        static_cast<std::int16_t>(e.micro_batch), static_cast<std::int16_t>(e.step), e.kind});
    if (count_ == 0 || e.start_ns < begin_ns_) begin_ns_ = e.start_ns;
    if (count_ == 0 || e.end_ns > end_ns_) end_ns_ = e.end_ns;
    ++count_;
}

const TimelineLane& MemoryTimelineSource::lane(int index) const {
    return lanes_[static_cast<std::size_t>(index)].info;
}

const std::string& MemoryTimelineSource::name(std::uint32_t name_id) const {
    static const std::string unknown = "?";
    return name_id < names_.size() ? names_[name_id] : unknown;
}

void MemoryTimelineSource::query(int lane, std::int64_t t0, std::int64_t t1, std::size_t pixels,
                                 std::vector<TimelineItem>& out) const {
    out.clear();
    if (lane < 0 || lane >= lane_count() || t1 <= t0 || pixels == 0) return;
    const auto& l = lanes_[static_cast<std::size_t>(lane)];
    const Span* sp = l.spans.data();
    const std::size_t n = l.spans.size();
    const std::size_t max_items = pixels;
    // Items are at most two per merge width (a long one, or a run and the gap after it), so
    // a merge width of two pixels keeps them within `pixels`.
    const auto merge_ns = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(std::ceil(kMergePx * static_cast<double>(t1 - t0) / static_cast<double>(pixels))));
    // Galloping search: the next boundary is usually a few events ahead, so probing 1, 2,
    // 4, … events forward stays in cache where a full binary search would not.
    auto first_starting_at_or_after = [sp, n](std::size_t from, std::int64_t t) {
        std::size_t step = 1, lo = from;
        while (from + step < n && sp[from + step].start_ns < t) {
            lo = from + step;
            step *= 2;
        }
        const std::size_t hi = std::min(n, from + step + 1);
        if (lo < n && sp[lo].start_ns >= t) return lo;
        return static_cast<std::size_t>(
            std::partition_point(sp + lo, sp + hi, [t](const Span& s) { return s.start_ns < t; }) - sp);
    };
    // Ends are sorted too (no overlap), so the first visible event is a binary search away.
    std::size_t i = static_cast<std::size_t>(
        std::partition_point(sp, sp + n, [t0](const Span& s) { return s.end_ns <= t0; }) - sp);
    auto single = [&](std::size_t k) {
        const Stored& s = l.events[k];
        out.push_back({sp[k].start_ns, sp[k].end_ns, event_id(lane, k), 1, s.name_id, sp[k].end_ns - sp[k].start_ns,
                       s.kind, s.layer});
    };
    while (i < n && sp[i].start_ns < t1 && out.size() < max_items) {
        if (sp[i].end_ns - sp[i].start_ns >= merge_ns) {
            single(i++);
            continue;
        }
        // Fold the run of small events that follow with gaps under merge_ns, until the run
        // spans merge_ns: a dense stretch becomes a row of cells a couple of pixels wide,
        // each with its count and busy time, rather than one grey bar. Every event strictly
        // inside [run_end, run_end + merge_ns) is small; only the last one found can be
        // long, and a long one ends the run. Each item consumes at least merge_ns of the
        // window (its own span or the gap after it), so items stay within `pixels`.
        const std::int64_t run_start = sp[i].start_ns;
        std::size_t j = i + 1;
        std::int64_t run_end = sp[i].end_ns;
        while (j < n && run_end - run_start < merge_ns) {
            const std::size_t limit = first_starting_at_or_after(j, std::min(run_end + merge_ns, run_start + merge_ns));
            if (limit == j) break;
            if (sp[limit - 1].end_ns - sp[limit - 1].start_ns >= merge_ns) {
                if (limit - 1 > j) run_end = sp[limit - 2].end_ns;
                j = limit - 1;
                break;
            }
            run_end = sp[limit - 1].end_ns;
            j = limit;
        }
        if (j == i + 1) {
            single(i);
        } else {
            // Folded runs are drawn by kind alone: no name or layer (reading them would cost a
            // cache miss per run on the records kept apart).
            const std::int64_t busy_after = j < n ? sp[j].busy_before_ns : l.busy_ns;
            out.push_back({run_start, run_end, -1, static_cast<std::uint32_t>(j - i), 0, busy_after - sp[i].busy_before_ns,
                           l.kinds[i], -1});
        }
        i = j;
    }
}

TimelineEventDetails MemoryTimelineSource::details(std::int64_t event) const {
    TimelineEventDetails d;
    const int lane = static_cast<int>(event >> 40);
    const auto index = static_cast<std::size_t>(event & ((std::int64_t{1} << 40) - 1));
    if (lane < 0 || lane >= lane_count() || index >= lanes_[static_cast<std::size_t>(lane)].events.size()) return d;
    const Stored& s = lanes_[static_cast<std::size_t>(lane)].events[index];
    const Span& span = lanes_[static_cast<std::size_t>(lane)].spans[index];
    d.lane = lane;
    d.event.rank = lanes_[static_cast<std::size_t>(lane)].info.rank;
    d.event.track = lane;
    d.event.kind = s.kind;
    d.event.name = names_[s.name_id];
    d.event.start_ns = span.start_ns;
    d.event.end_ns = span.end_ns;
    d.event.bytes = s.bytes;
    d.event.flops = s.flops;
    d.event.step = s.step;
    d.event.micro_batch = s.micro_batch;
    d.event.layer = s.layer;
    return d;
}

TimelineRangeStats MemoryTimelineSource::range_stats(int lane_first, int lane_last, std::int64_t t0,
                                                     std::int64_t t1) const {
    TimelineRangeStats stats;
    std::unordered_map<std::string, std::size_t> index;
    lane_first = std::max(lane_first, 0);
    lane_last = std::min(lane_last, lane_count() - 1);
    for (int l = lane_first; l <= lane_last; ++l) {
        const auto& lane = lanes_[static_cast<std::size_t>(l)];
        const auto& sp = lane.spans;
        auto i = static_cast<std::size_t>(
            std::partition_point(sp.begin(), sp.end(), [t0](const Span& s) { return s.end_ns <= t0; }) - sp.begin());
        for (; i < sp.size() && sp[i].start_ns < t1; ++i) {
            ++stats.events;
            const auto k = static_cast<std::size_t>(lane.events[i].kind);
            if (k < 6) stats.busy_ns[k] += std::min(sp[i].end_ns, t1) - std::max(sp[i].start_ns, t0);
            profiler::add_name_total(stats.names, index, names_[lane.events[i].name_id], sp[i].end_ns - sp[i].start_ns);
        }
    }
    return stats;
}

std::int64_t MemoryTimelineSource::find_next(const std::string& text, std::int64_t after_ns) const {
    auto lower = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return s;
    };
    const std::string needle = lower(text);
    std::vector<char> matches(names_.size(), 0);
    bool any = false;
    for (std::size_t i = 0; i < names_.size(); ++i) {
        matches[i] = lower(names_[i]).find(needle) != std::string::npos;
        any |= matches[i] != 0;
    }
    if (!any) return -1;
    std::int64_t best = -1;
    std::int64_t best_start = std::numeric_limits<std::int64_t>::max();
    for (int l = 0; l < lane_count(); ++l) {
        const auto& lane = lanes_[static_cast<std::size_t>(l)];
        const auto& sp = lane.spans;
        auto i = static_cast<std::size_t>(
            std::partition_point(sp.begin(), sp.end(), [after_ns](const Span& s) { return s.start_ns <= after_ns; }) -
            sp.begin());
        for (; i < sp.size() && sp[i].start_ns < best_start; ++i) {
            if (matches[lane.events[i].name_id]) {
                best_start = sp[i].start_ns;
                best = event_id(l, i);
                break;
            }
        }
    }
    return best;
}

}  // namespace meshwork::gui
