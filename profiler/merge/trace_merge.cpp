#include "profiler/merge/trace_merge.h"

#include <algorithm>
#include <optional>
#include <set>

#include "profiler/analysis/trace_stats.h"
#include "core/common/error.h"
#include "profiler/store/trace_reader.h"

namespace meshwork::profiler {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// End of the earliest-starting barrier event.
std::optional<std::int64_t> first_barrier_end(const TraceReader& r, const std::string& needle) {
    std::optional<std::pair<std::int64_t, std::int64_t>> best;  // start, end
    const std::string key = lower(needle);
    r.for_each_event([&](const TraceEvent& e) {
        if (e.kind != EventKind::Marker && e.kind != EventKind::Communication) return;
        if (lower(e.name).find(key) == std::string::npos) return;
        if (!best || e.start_ns < best->first) best = {e.start_ns, e.end_ns};
    });
    if (!best) return std::nullopt;
    return best->second;
}

// End of the first communication event of `collective` (None = of any collective; the one
// found is returned through `collective`).
std::optional<std::int64_t> first_collective_end(const TraceReader& r, Collective& collective) {
    std::optional<std::pair<std::int64_t, std::int64_t>> best;
    Collective best_collective = Collective::None;
    r.for_each_event([&](const TraceEvent& e) {
        if (e.kind != EventKind::Communication) return;
        const Collective c = e.collective;
        if (c == Collective::None || (collective != Collective::None && c != collective)) return;
        if (!best || e.start_ns < best->first) {
            best = {e.start_ns, e.end_ns};
            best_collective = c;
        }
    });
    if (!best) return std::nullopt;
    collective = best_collective;
    return best->second;
}

bool imported(const TraceReader& r) { return r.run_info().source == "kineto" || r.run_info().source == "nsys"; }

void check_same_run(const TraceReader& ref, const TraceReader& other) {
    const auto& a = ref.run_info();
    const auto& b = other.run_info();
    auto refuse = [&](const std::string& field, const std::string& what) {
        throw InputError(other.path(), field,
                         "from a different run than " + ref.path() + " (" + what +
                             "); pass --allow-mixed to merge anyway");
    };
    auto ra = a.extra.find("run_id"), rb = b.extra.find("run_id");
    if (ra != a.extra.end() && rb != b.extra.end() && ra->second != rb->second) {
        refuse("meta.extra.run_id", "run id " + rb->second + " vs " + ra->second);
    }
    if (!a.layout_json.empty() && !b.layout_json.empty() && a.layout_json != b.layout_json) {
        refuse("meta.layout_json", "the layouts differ");
    }
    if (a.world_size && b.world_size && a.world_size != b.world_size) {
        refuse("meta.world_size", "world size " + std::to_string(b.world_size) + " vs " + std::to_string(a.world_size));
    }
    if (a.source != b.source) refuse("meta.source", "source " + b.source + " vs " + a.source);
}

}  // namespace

MergeResult merge_traces(const std::vector<std::string>& inputs, TraceWriter& out, const MergeOptions& options) {
    if (inputs.empty()) throw InputError("<flags>", "inputs", "no traces to merge");
    std::vector<TraceReader> readers;
    for (const auto& p : inputs) readers.push_back(TraceReader::open(p));
    MergeResult result;
    std::map<int, std::string> owner;  // rank -> file
    auto override_of = [&](std::size_t i) {
        return i < options.rank_override.size() ? options.rank_override[i] : -1;
    };
    for (std::size_t i = 0; i < readers.size(); ++i) {
        if (i > 0 && !options.allow_mixed) check_same_run(readers[0], readers[i]);
        MergeInputReport rep;
        rep.file = inputs[i];
        rep.complete = readers[i].complete();
        std::set<int> ranks;
        for (const auto& t : readers[i].tracks()) ranks.insert(t.info.rank);
        if (override_of(i) >= 0) {
            if (ranks.size() > 1) {
                throw InputError(inputs[i], "tracks.rank", "holds several ranks; a rank cannot be given to it");
            }
            ranks = {override_of(i)};
        }
        for (int r : ranks) {
            auto [it, fresh] = owner.emplace(r, inputs[i]);
            if (!fresh) {
                throw InputError(inputs[i], "tracks.rank",
                                 "rank " + std::to_string(r) + " is also in " + it->second +
                                     "; each rank must come from one file");
            }
            rep.ranks.push_back(r);
        }
        result.inputs.push_back(rep);
    }

    bool all_imported = true, all_starts = true;
    for (const auto& r : readers) {
        all_imported = all_imported && imported(r);
        all_starts = all_starts && r.run_info().start_time_unix_ns != 0;
    }
    // Offsets. Meshwork runs: barrier ends made equal to the first file's, else wall-clock
    // start times. Imported profiles: absolute start times, else the first common collective.
    std::vector<std::optional<std::int64_t>> anchor(readers.size());
    std::string anchor_kind = "none";
    if (all_imported && all_starts) {
        anchor_kind = "start-time";
    } else if (all_imported) {
        Collective collective = Collective::None;
        bool all = true;
        for (std::size_t i = 0; i < readers.size() && all; ++i) {
            anchor[i] = first_collective_end(readers[i], collective);
            all = anchor[i].has_value();
        }
        anchor_kind = all ? "collective" : "none";
    } else {
        bool all = true;
        for (std::size_t i = 0; i < readers.size() && all; ++i) {
            anchor[i] = first_barrier_end(readers[i], options.barrier_name);
            all = anchor[i].has_value();
        }
        anchor_kind = all ? "barrier" : all_starts ? "start-time" : "none";
    }
    for (std::size_t i = 0; i < readers.size(); ++i) {
        auto& rep = result.inputs[i];
        if (i == 0) {
            rep.alignment = "reference";
        } else if (anchor_kind == "barrier" || anchor_kind == "collective") {
            rep.offset_ns = *anchor[0] - *anchor[i];
            rep.alignment = anchor_kind;
        } else if (anchor_kind == "start-time") {
            rep.offset_ns = readers[i].run_info().start_time_unix_ns - readers[0].run_info().start_time_unix_ns;
            rep.alignment = "start-time";
        } else {
            rep.alignment = "none";
        }
    }
    // Imported files start at their own first event; with absolute starts, the merged trace
    // starts at the earliest of them.
    if (anchor_kind == "start-time") {
        std::int64_t earliest = 0;
        for (const auto& rep : result.inputs) earliest = std::min(earliest, rep.offset_ns);
        for (auto& rep : result.inputs) rep.offset_ns -= earliest;
    }

    TraceRunInfo info = readers[0].run_info();
    if (anchor_kind == "start-time") {
        for (const auto& r : readers) info.start_time_unix_ns = std::min(info.start_time_unix_ns, r.run_info().start_time_unix_ns);
    }
    int world = info.world_size;
    for (const auto& [rank, file] : owner) world = std::max(world, rank + 1);
    info.world_size = world;
    info.extra["merged_from_files"] = std::to_string(inputs.size());
    out.set_run_info(info);
    result.world_size = world;

    for (std::size_t i = 0; i < readers.size(); ++i) {
        const auto& r = readers[i];
        const std::int64_t off = result.inputs[i].offset_ns;
        const int forced = override_of(i);
        auto rank_of = [&](int rank) { return forced >= 0 ? forced : rank; };
        std::map<int, int> track_map;
        for (const auto& t : r.tracks()) {
            TrackInfo ti = t.info;
            ti.rank = rank_of(ti.rank);
            track_map[t.id] = out.add_track(ti);
        }
        for (const auto& rk : r.ranks()) out.set_rank_info(rank_of(rk.rank), rk.device, rk.clock_offset_ns + off);
        r.for_each_event([&](const TraceEvent& e) {
            TraceEvent c = e;
            c.rank = rank_of(e.rank);
            c.track = track_map.at(e.track);
            c.start_ns += off;
            c.end_ns += off;
            out.add_event(c);
            ++result.inputs[i].events;
        });
        r.for_each_counter([&](const CounterSample& s) {
            auto it = track_map.find(s.track);
            if (it == track_map.end()) return;
            const TrackRecord* t = r.track(s.track);
            out.add_counter(rank_of(t ? t->info.rank : 0), it->second, s.name, s.time_ns + off, s.value);
        });
        result.events += result.inputs[i].events;
    }
    return result;
}

}  // namespace meshwork::profiler
