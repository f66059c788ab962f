#include "profiler/analysis/timeline_queries.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace meshwork::profiler {

std::vector<int> timeline_track_order(const std::vector<TrackRecord>& tracks) {
    std::vector<const TrackRecord*> sorted;
    sorted.reserve(tracks.size());
    for (const auto& t : tracks) sorted.push_back(&t);
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
        if (a->info.rank != b->info.rank) return a->info.rank < b->info.rank;
        if (a->info.kind != b->info.kind) return a->info.kind < b->info.kind;
        return a->info.index < b->info.index;
    });
    std::vector<int> ids;
    ids.reserve(sorted.size());
    for (const auto* t : sorted) ids.push_back(t->id);
    return ids;
}

RangeTotals range_totals(const TraceReader& reader, const std::vector<int>& tracks, std::int64_t t0_ns,
                         std::int64_t t1_ns) {
    RangeTotals totals;
    for (const int track : tracks) {
        if (!reader.track(track)) continue;
        reader.for_each_event_of_track(track, [&](const TraceEvent& e) {
            if (e.end_ns <= t0_ns || e.start_ns >= t1_ns) return;
            ++totals.events;
            const auto k = static_cast<std::size_t>(e.kind);
            if (k < totals.busy_ns.size()) totals.busy_ns[k] += std::min(e.end_ns, t1_ns) - std::max(e.start_ns, t0_ns);
        });
    }
    return totals;
}

std::int64_t find_next_event(const TraceReader& reader, const std::vector<int>& tracks, const std::string& text,
                             std::int64_t after_ns) {
    auto lower = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return s;
    };
    const std::string needle = lower(text);
    // Whether each name contains the text, decided once per name (-1: not yet).
    std::vector<std::int8_t> matches(static_cast<std::size_t>(reader.string_count()) + 1, -1);
    auto name_matches = [&](std::int64_t name_id) {
        auto& m = matches[static_cast<std::size_t>(name_id)];
        if (m < 0) m = lower(reader.string(name_id)).find(needle) != std::string::npos ? 1 : 0;
        return m == 1;
    };
    std::int64_t best = -1;
    std::int64_t best_start = std::numeric_limits<std::int64_t>::max();
    // A window wide enough in "pixels" not to merge gives every event with its id; past a
    // million events after `after_ns` on one track, merged runs are skipped.
    constexpr std::size_t kUnmerged = 1'000'000;
    for (const int track : tracks) {
        if (!reader.track(track)) continue;
        const auto items = reader.window(track, after_ns + 1, std::min(best_start, reader.end_ns() + 1), kUnmerged);
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

}  // namespace meshwork::profiler
