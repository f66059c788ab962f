#include "profiler/remote/trace_protocol.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <set>

#include "core/common/error.h"
#include "profiler/remote/peer_json.h"
#include "profiler/store/varint.h"

namespace meshwork::profiler::remote {

namespace {

using nlohmann::json;

constexpr std::int64_t kIntMin = std::numeric_limits<int>::min();
constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();

// Two's-complement sums: a peer's deltas may be anything, and signed overflow is undefined.
std::int64_t wrapping_add(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
std::int64_t wrapping_sub(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}

}  // namespace

json summary_to_json(const TraceReader& reader) {
    const auto& info = reader.run_info();
    json tracks = json::array();
    for (const auto& t : reader.tracks()) {
        tracks.push_back({{"id", t.id},
                          {"rank", t.info.rank},
                          {"kind", static_cast<int>(t.info.kind)},
                          {"index", t.info.index},
                          {"name", t.info.name},
                          {"event_count", t.event_count},
                          {"start_ns", t.start_ns},
                          {"end_ns", t.end_ns}});
    }
    json ranks = json::array();
    for (const auto& r : reader.ranks()) {
        ranks.push_back({{"rank", r.rank}, {"device", r.device}, {"clock_offset_ns", r.clock_offset_ns}});
    }
    return {{"path", reader.path()},
            {"format_version", reader.format_version()},
            {"complete", reader.complete()},
            {"event_count", reader.event_count()},
            {"dropped_events", reader.dropped_events()},
            {"start_ns", reader.start_ns()},
            {"end_ns", reader.end_ns()},
            {"string_count", reader.string_count()},
            {"run_info",
             {{"tool_version", info.tool_version},
              {"source", info.source},
              {"layout_json", info.layout_json},
              {"cluster", info.cluster},
              {"start_time_unix_ns", info.start_time_unix_ns},
              {"clock_domain", info.clock_domain},
              {"world_size", info.world_size},
              {"extra", info.extra}}},
            {"tracks", tracks},
            {"ranks", ranks}};
}

TraceSummary summary_from_json(const json& j, const std::string& where) {
    const PeerObject t(j, where, "trace");
    TraceSummary s;
    s.path = t.text("path");
    s.format_version = static_cast<int>(t.integer("format_version", 0, kIntMax));
    s.complete = t.boolean("complete");
    s.event_count = t.integer("event_count", 0, kI64Max);
    s.dropped_events = t.integer("dropped_events", 0, kI64Max);
    s.start_ns = t.integer("start_ns", kI64Min, kI64Max);
    s.end_ns = t.integer("end_ns", kI64Min, kI64Max);
    s.string_count = t.integer("string_count", 0, kMaxStringCount);
    const PeerObject info = t.object("run_info");
    s.run_info.tool_version = info.text("tool_version");
    s.run_info.source = info.text("source");
    s.run_info.layout_json = info.text("layout_json");
    s.run_info.cluster = info.text("cluster");
    s.run_info.start_time_unix_ns = info.integer("start_time_unix_ns", kI64Min, kI64Max);
    s.run_info.clock_domain = info.text("clock_domain");
    s.run_info.world_size = static_cast<int>(info.integer("world_size", 0, kIntMax));
    const PeerObject extra = info.object("extra");
    for (const auto& [key, value] : extra.whole().items()) s.run_info.extra[key] = extra.text(key.c_str());
    const json& tracks = t.array("tracks");
    std::set<int> ids;
    for (std::size_t i = 0; i < tracks.size(); ++i) {
        const PeerObject tr(tracks[i], where, "trace.tracks[" + std::to_string(i) + "]");
        TrackRecord r;
        r.id = static_cast<int>(tr.integer("id", 0, kIntMax));
        if (!ids.insert(r.id).second) tr.wrong("id", "a track id not used by an earlier track");
        r.info.rank = static_cast<int>(tr.integer("rank", kIntMin, kIntMax));
        r.info.kind = static_cast<TrackKind>(tr.integer("kind", 0, static_cast<int>(TrackKind::Memory)));
        r.info.index = static_cast<int>(tr.integer("index", kIntMin, kIntMax));
        r.info.name = tr.text("name");
        r.event_count = tr.integer("event_count", 0, kI64Max);
        r.start_ns = tr.integer("start_ns", kI64Min, kI64Max);
        r.end_ns = tr.integer("end_ns", kI64Min, kI64Max);
        s.tracks.push_back(std::move(r));
    }
    const json& ranks = t.array("ranks");
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const PeerObject r(ranks[i], where, "trace.ranks[" + std::to_string(i) + "]");
        s.ranks.push_back({static_cast<int>(r.integer("rank", kIntMin, kIntMax)), r.text("device"),
                           r.integer("clock_offset_ns", kI64Min, kI64Max)});
    }
    return s;
}

// Per item: zigzag(start - previous start), zigzag(end - start), count, kind, name id, then
// zigzag(event id - previous event id) for a single event, and zigzag(busy - duration).
// Differences wrap (two's complement), so that any int64 times round-trip.
std::string encode_window(const std::vector<DrawItem>& items, std::int64_t base_ns) {
    std::string out;
    out.reserve(items.size() * 8);
    std::int64_t prev_start = base_ns, prev_event = 0;
    for (const auto& d : items) {
        const std::int64_t duration = wrapping_sub(d.end_ns, d.start_ns);
        put_varint(out, zigzag(wrapping_sub(d.start_ns, prev_start)));
        put_varint(out, zigzag(duration));
        put_varint(out, static_cast<std::uint64_t>(d.count));
        put_varint(out, static_cast<std::uint64_t>(d.kind));
        put_varint(out, static_cast<std::uint64_t>(d.name_id));
        if (d.count == 1) {
            put_varint(out, zigzag(wrapping_sub(d.event_id, prev_event)));
            prev_event = d.event_id;
        }
        put_varint(out, zigzag(wrapping_sub(d.busy_ns, duration)));
        prev_start = d.start_ns;
    }
    return out;
}

std::vector<DrawItem> decode_window(std::string_view bytes, std::size_t count, std::int64_t base_ns,
                                    std::int64_t string_count) {
    const std::string where = "the server's window answer";
    if (count > kMaxWindowItems) {
        throw PeerError(where + ": " + std::to_string(count) + " items, over the protocol's limit of " +
                        std::to_string(kMaxWindowItems));
    }
    if (bytes.size() > count * kMaxPackedItemBytes) {
        throw PeerError(where + ": " + std::to_string(bytes.size()) + " bytes for " + std::to_string(count) +
                        " items (at most " + std::to_string(kMaxPackedItemBytes) + " an item)");
    }
    std::vector<DrawItem> items;
    items.reserve(count);
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    const auto* end = p + bytes.size();
    std::int64_t prev_start = base_ns, prev_event = 0;
    auto next = [&] {
        std::uint64_t v = 0;
        if (!get_varint(p, end, v)) throw PeerError(where + ": the packed items end early or hold a bad varint");
        return v;
    };
    for (std::size_t i = 0; i < count; ++i) {
        DrawItem d;
        d.start_ns = wrapping_add(prev_start, unzigzag(next()));
        const std::int64_t duration = unzigzag(next());
        d.end_ns = wrapping_add(d.start_ns, duration);
        const auto merged = next();
        if (merged < 1 || merged > std::numeric_limits<std::uint32_t>::max()) {
            throw PeerError(where + ": item " + std::to_string(i) + " merges " + std::to_string(merged) + " events");
        }
        d.count = static_cast<std::int64_t>(merged);
        const auto kind = next();
        if (kind > static_cast<std::uint64_t>(EventKind::Idle)) {
            throw PeerError(where + ": item " + std::to_string(i) + " has an event kind of " + std::to_string(kind));
        }
        d.kind = static_cast<EventKind>(kind);
        const auto name = next();
        if (name > static_cast<std::uint64_t>(string_count)) {
            throw PeerError(where + ": item " + std::to_string(i) + " names string " + std::to_string(name) +
                            ", outside the hello's 0.." + std::to_string(string_count));
        }
        d.name_id = static_cast<std::int64_t>(name);
        if (d.count == 1) {
            d.event_id = wrapping_add(prev_event, unzigzag(next()));
            prev_event = d.event_id;
        }
        d.busy_ns = wrapping_add(duration, unzigzag(next()));
        prev_start = d.start_ns;
        items.push_back(d);
    }
    if (p != end) throw PeerError(where + ": the packed items are followed by stray bytes");
    return items;
}

namespace {

void put_double(std::string& out, double v) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    for (int k = 0; k < 8; ++k) out.push_back(static_cast<char>((bits >> (8 * k)) & 0xff));
}

bool is_default(const RankStepCell& c) {
    const RankStepCell d;
    return c.step_s == d.step_s && c.compute_s == d.compute_s && c.compute_on_cpu_s == d.compute_on_cpu_s &&
           c.exposed_comm_s == d.exposed_comm_s && c.collective_wait_s == d.collective_wait_s &&
           c.waited_for_rank == d.waited_for_rank;
}

}  // namespace

std::string encode_rank_steps(const RankStepMatrix& m) {
    std::string out;
    out.reserve((m.ranks.size() + m.steps.size()) * 2 + m.cells.size() * 16);
    for (const auto* list : {&m.ranks, &m.steps}) {
        std::int64_t prev = 0;
        for (const int v : *list) {
            put_varint(out, zigzag(wrapping_sub(v, prev)));
            prev = v;
        }
    }
    for (const auto& c : m.cells) {
        if (!c.present && is_default(c)) {
            out.push_back(0);
            continue;
        }
        out.push_back(c.present ? 1 : 2);
        for (const double v : {c.step_s, c.compute_s, c.compute_on_cpu_s, c.exposed_comm_s, c.collective_wait_s}) {
            put_double(out, v);
        }
        put_varint(out, zigzag(c.waited_for_rank));
    }
    return out;
}

std::size_t max_rank_steps_bytes(std::int64_t cells) {
    // Ranks and steps each at most `cells` (a matrix with no step has no cell but its ranks,
    // and every rank has an event: rank_step_cell_bound covers them too), 10 bytes a varint.
    const auto n = static_cast<std::size_t>(std::max<std::int64_t>(cells, 0));
    return n * (2 * 10 + kMaxPackedCellBytes);
}

RankStepMatrix decode_rank_steps(std::string_view bytes, std::int64_t ranks, std::int64_t steps, std::int64_t max_cells) {
    const std::string where = "the server's rank_steps answer";
    // Checked one at a time, so that the product cannot overflow.
    if (ranks < 0 || steps < 0 || ranks > max_cells || steps > max_cells || (steps > 0 && ranks > max_cells / steps)) {
        throw PeerError(where + ": " + std::to_string(ranks) + " ranks × " + std::to_string(steps) +
                        " steps, over the " + std::to_string(max_cells) +
                        " cells a trace of the hello's event count may have (rank_step_cell_bound)");
    }
    if (bytes.size() > max_rank_steps_bytes(ranks * steps + ranks + steps)) {
        throw PeerError(where + ": " + std::to_string(bytes.size()) + " bytes for " + std::to_string(ranks) + " × " +
                        std::to_string(steps) + " cells");
    }
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    const auto* end = p + bytes.size();
    auto next = [&] {
        std::uint64_t v = 0;
        if (!get_varint(p, end, v)) throw PeerError(where + ": the packed matrix ends early or holds a bad varint");
        return v;
    };
    RankStepMatrix m;
    for (auto [list, count, name] : {std::tuple{&m.ranks, ranks, "rank"}, std::tuple{&m.steps, steps, "step"}}) {
        list->reserve(static_cast<std::size_t>(count));
        std::int64_t prev = 0;
        for (std::int64_t i = 0; i < count; ++i) {
            const std::int64_t v = wrapping_add(prev, unzigzag(next()));
            // Ascending, as compute_rank_steps makes them (the overview looks rows up by rank).
            if (v < kIntMin || v > kIntMax || (i > 0 && v <= prev)) {
                throw PeerError(where + ": " + name + " " + std::to_string(i) + " is " + std::to_string(v) +
                                ", not an int above the previous one (they ascend without repeats)");
            }
            list->push_back(static_cast<int>(v));
            prev = v;
        }
    }
    const auto cells = static_cast<std::size_t>(ranks * steps);
    // Every cell takes a byte at least: a count the bytes cannot hold is refused before the
    // cells are allocated.
    if (static_cast<std::size_t>(end - p) < cells) {
        throw PeerError(where + ": " + std::to_string(end - p) + " bytes cannot hold " + std::to_string(cells) + " cells");
    }
    m.cells.reserve(cells);
    for (std::size_t i = 0; i < cells; ++i) {
        if (p >= end) throw PeerError(where + ": the packed matrix ends at cell " + std::to_string(i));
        const unsigned char flag = *p++;
        RankStepCell c;
        if (flag > 2) throw PeerError(where + ": cell " + std::to_string(i) + " has flag " + std::to_string(flag) + " (0, 1 or 2)");
        if (flag != 0) {
            c.present = flag == 1;
            for (double* v : {&c.step_s, &c.compute_s, &c.compute_on_cpu_s, &c.exposed_comm_s, &c.collective_wait_s}) {
                if (end - p < 8) throw PeerError(where + ": the packed matrix ends in cell " + std::to_string(i));
                std::uint64_t bits = 0;
                for (int k = 0; k < 8; ++k) bits |= static_cast<std::uint64_t>(*p++) << (8 * k);
                std::memcpy(v, &bits, sizeof bits);
                if (!std::isfinite(*v)) throw PeerError(where + ": cell " + std::to_string(i) + " holds a value that is not finite");
            }
            const std::int64_t waited = unzigzag(next());
            if (waited < -1 || waited > kIntMax) {
                throw PeerError(where + ": cell " + std::to_string(i) + " waited for rank " + std::to_string(waited) +
                                " (-1 or a rank)");
            }
            c.waited_for_rank = static_cast<int>(waited);
        }
        m.cells.push_back(c);
    }
    if (p != end) throw PeerError(where + ": the packed matrix is followed by stray bytes");
    return m;
}

json event_to_json(std::int64_t id, const TraceEvent& e) {
    return {{"id", id},
            {"rank", e.rank},
            {"track", e.track},
            {"kind", static_cast<int>(e.kind)},
            {"name", e.name},
            {"start_ns", e.start_ns},
            {"end_ns", e.end_ns},
            {"bytes", e.bytes},
            {"flops", e.flops},
            {"step", e.step},
            {"micro_batch", e.micro_batch},
            {"layer", e.layer},
            {"correlation_id", e.correlation_id},
            {"group_size", e.group_size},
            {"collective", static_cast<int>(e.collective)}};
}

TraceEvent event_from_json(const json& j) {
    const PeerObject o(j, "the server's event answer", "event");
    TraceEvent e;
    e.rank = static_cast<int>(o.integer("rank", kIntMin, kIntMax));
    e.track = static_cast<int>(o.integer("track", 0, kIntMax));
    e.kind = static_cast<EventKind>(o.integer("kind", 0, static_cast<int>(EventKind::Idle)));
    e.name = o.text("name");
    e.start_ns = o.integer("start_ns", kI64Min, kI64Max);
    e.end_ns = o.integer("end_ns", kI64Min, kI64Max);
    e.bytes = o.integer("bytes", kI64Min, kI64Max);
    e.flops = o.number("flops");
    e.step = static_cast<int>(o.integer("step", kIntMin, kIntMax));
    e.micro_batch = static_cast<int>(o.integer("micro_batch", kIntMin, kIntMax));
    e.layer = static_cast<int>(o.integer("layer", kIntMin, kIntMax));
    e.correlation_id = o.integer("correlation_id", kI64Min, kI64Max);
    e.group_size = static_cast<int>(o.integer("group_size", kIntMin, kIntMax));
    e.collective = static_cast<Collective>(o.integer("collective", 0, static_cast<int>(Collective::Generic)));
    return e;
}

}  // namespace meshwork::profiler::remote
