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
    std::unordered_map<std::string, std::size_t> index;
    for (const int track : tracks) {
        if (!reader.track(track)) continue;
        reader.for_each_event_of_track(track, [&](const TraceEvent& e) {
            if (e.end_ns <= t0_ns || e.start_ns >= t1_ns) return;
            ++totals.events;
            const auto k = static_cast<std::size_t>(e.kind);
            if (k < totals.busy_ns.size()) totals.busy_ns[k] += std::min(e.end_ns, t1_ns) - std::max(e.start_ns, t0_ns);
            add_name_total(totals.names, index, e.name, e.end_ns - e.start_ns);
        });
    }
    return totals;
}

void add_name_total(std::vector<NameTotals>& names, std::unordered_map<std::string, std::size_t>& index,
                    const std::string& name, std::int64_t duration_ns) {
    auto [it, inserted] = index.try_emplace(name, names.size());
    if (inserted) names.push_back({name, 0, 0, duration_ns, duration_ns});
    auto& n = names[it->second];
    ++n.count;
    n.total_ns += duration_ns;
    n.min_ns = std::min(n.min_ns, duration_ns);
    n.max_ns = std::max(n.max_ns, duration_ns);
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

EventMatches find_all_events(const TraceReader& reader, const std::vector<int>& tracks, const std::string& text,
                             std::size_t limit) {
    auto lower = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return s;
    };
    const std::string needle = lower(text);
    std::vector<std::int8_t> matches(static_cast<std::size_t>(reader.string_count()) + 1, -1);
    auto name_matches = [&](std::int64_t name_id) {
        auto& m = matches[static_cast<std::size_t>(name_id)];
        if (m < 0) m = lower(reader.string(name_id)).find(needle) != std::string::npos ? 1 : 0;
        return m == 1;
    };
    // As find_next_event: a window this wide gives every event with its id (past a million
    // events on one track, merged runs are not listed).
    constexpr std::size_t kUnmerged = 1'000'000;
    std::vector<std::pair<std::int64_t, std::int64_t>> found;  // (start, id)
    EventMatches out;
    for (const int track : tracks) {
        if (!reader.track(track)) continue;
        for (const auto& d : reader.window(track, reader.start_ns(), reader.end_ns() + 1, kUnmerged)) {
            if (d.count != 1 || !name_matches(d.name_id)) continue;
            ++out.total;
            found.emplace_back(d.start_ns, d.event_id);
        }
    }
    std::sort(found.begin(), found.end());
    if (found.size() > limit) found.resize(limit);
    out.events.reserve(found.size());
    for (const auto& [start, id] : found) out.events.push_back(id);
    return out;
}

}  // namespace meshwork::profiler
