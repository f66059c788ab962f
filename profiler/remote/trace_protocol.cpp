#include "profiler/remote/trace_protocol.h"

#include "core/common/error.h"
#include "profiler/store/varint.h"

namespace meshwork::profiler::remote {

namespace {

using nlohmann::json;

template <class T>
T field(const json& j, const char* key, const std::string& where) {
    if (!j.is_object() || !j.contains(key)) throw RuntimeError("remote trace: " + where + "." + key + " is missing");
    try {
        return j.at(key).get<T>();
    } catch (const json::exception&) {
        throw RuntimeError("remote trace: " + where + "." + key + " has the wrong type");
    }
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

TraceSummary summary_from_json(const json& j) {
    TraceSummary s;
    s.path = field<std::string>(j, "path", "trace");
    s.format_version = field<int>(j, "format_version", "trace");
    s.complete = field<bool>(j, "complete", "trace");
    s.event_count = field<std::int64_t>(j, "event_count", "trace");
    s.dropped_events = field<std::int64_t>(j, "dropped_events", "trace");
    s.start_ns = field<std::int64_t>(j, "start_ns", "trace");
    s.end_ns = field<std::int64_t>(j, "end_ns", "trace");
    s.string_count = field<std::int64_t>(j, "string_count", "trace");
    if (s.string_count < 0 || s.string_count > (std::int64_t{1} << 32)) {
        throw RuntimeError("remote trace: trace.string_count out of range");
    }
    const auto info = field<json>(j, "run_info", "trace");
    s.run_info.tool_version = field<std::string>(info, "tool_version", "run_info");
    s.run_info.source = field<std::string>(info, "source", "run_info");
    s.run_info.layout_json = field<std::string>(info, "layout_json", "run_info");
    s.run_info.cluster = field<std::string>(info, "cluster", "run_info");
    s.run_info.start_time_unix_ns = field<std::int64_t>(info, "start_time_unix_ns", "run_info");
    s.run_info.clock_domain = field<std::string>(info, "clock_domain", "run_info");
    s.run_info.world_size = field<int>(info, "world_size", "run_info");
    s.run_info.extra = field<std::map<std::string, std::string>>(info, "extra", "run_info");
    for (const auto& t : field<json>(j, "tracks", "trace")) {
        TrackRecord r;
        r.id = field<int>(t, "id", "tracks[]");
        r.info.rank = field<int>(t, "rank", "tracks[]");
        const int kind = field<int>(t, "kind", "tracks[]");
        if (kind < 0 || kind > static_cast<int>(TrackKind::Memory)) throw RuntimeError("remote trace: tracks[].kind out of range");
        r.info.kind = static_cast<TrackKind>(kind);
        r.info.index = field<int>(t, "index", "tracks[]");
        r.info.name = field<std::string>(t, "name", "tracks[]");
        r.event_count = field<std::int64_t>(t, "event_count", "tracks[]");
        r.start_ns = field<std::int64_t>(t, "start_ns", "tracks[]");
        r.end_ns = field<std::int64_t>(t, "end_ns", "tracks[]");
        s.tracks.push_back(std::move(r));
    }
    for (const auto& r : field<json>(j, "ranks", "trace")) {
        s.ranks.push_back({field<int>(r, "rank", "ranks[]"), field<std::string>(r, "device", "ranks[]"),
                           field<std::int64_t>(r, "clock_offset_ns", "ranks[]")});
    }
    return s;
}

// Per item: zigzag(start - previous start), zigzag(end - start), count, kind, name id, then
// zigzag(event id - previous event id) for a single event, and zigzag(busy - duration).
std::string encode_window(const std::vector<DrawItem>& items, std::int64_t base_ns) {
    std::string out;
    out.reserve(items.size() * 8);
    std::int64_t prev_start = base_ns, prev_event = 0;
    for (const auto& d : items) {
        put_varint(out, zigzag(d.start_ns - prev_start));
        put_varint(out, zigzag(d.end_ns - d.start_ns));
        put_varint(out, static_cast<std::uint64_t>(d.count));
        put_varint(out, static_cast<std::uint64_t>(d.kind));
        put_varint(out, static_cast<std::uint64_t>(d.name_id));
        if (d.count == 1) {
            put_varint(out, zigzag(d.event_id - prev_event));
            prev_event = d.event_id;
        }
        put_varint(out, zigzag(d.busy_ns - (d.end_ns - d.start_ns)));
        prev_start = d.start_ns;
    }
    return out;
}

std::vector<DrawItem> decode_window(std::string_view bytes, std::size_t count, std::int64_t base_ns) {
    if (count > kMaxWindowItems) throw RuntimeError("remote trace: a window of " + std::to_string(count) + " items");
    std::vector<DrawItem> items;
    items.reserve(count);
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    const auto* end = p + bytes.size();
    std::int64_t prev_start = base_ns, prev_event = 0;
    auto next = [&] {
        std::uint64_t v = 0;
        if (!get_varint(p, end, v)) throw RuntimeError("remote trace: a window's items end early");
        return v;
    };
    for (std::size_t i = 0; i < count; ++i) {
        DrawItem d;
        d.start_ns = prev_start + unzigzag(next());
        d.end_ns = d.start_ns + unzigzag(next());
        d.count = static_cast<std::int64_t>(next());
        const auto kind = next();
        if (kind > static_cast<std::uint64_t>(EventKind::Idle)) throw RuntimeError("remote trace: a window item of unknown kind");
        d.kind = static_cast<EventKind>(kind);
        d.name_id = static_cast<std::int64_t>(next());
        if (d.count == 1) {
            d.event_id = prev_event + unzigzag(next());
            prev_event = d.event_id;
        }
        d.busy_ns = (d.end_ns - d.start_ns) + unzigzag(next());
        prev_start = d.start_ns;
        items.push_back(d);
    }
    if (p != end) throw RuntimeError("remote trace: a window's items are followed by stray bytes");
    return items;
}

json rank_steps_to_json(const RankStepMatrix& m) {
    json cells = json::array();
    for (const auto& c : m.cells) {
        cells.push_back({c.present, c.step_s, c.compute_s, c.exposed_comm_s, c.collective_wait_s, c.waited_for_rank,
                         c.compute_on_cpu_s});
    }
    return {{"ranks", m.ranks}, {"steps", m.steps}, {"cells", cells}};
}

RankStepMatrix rank_steps_from_json(const json& j) {
    RankStepMatrix m;
    m.ranks = field<std::vector<int>>(j, "ranks", "rank_steps");
    m.steps = field<std::vector<int>>(j, "steps", "rank_steps");
    const auto cells = field<json>(j, "cells", "rank_steps");
    if (!cells.is_array() || cells.size() != m.ranks.size() * m.steps.size()) {
        throw RuntimeError("remote trace: rank_steps.cells does not hold ranks × steps cells");
    }
    m.cells.reserve(cells.size());
    for (const auto& c : cells) {
        // 7 items; a server from before compute_on_cpu_s sends 6.
        if (!c.is_array() || (c.size() != 6 && c.size() != 7)) {
            throw RuntimeError("remote trace: rank_steps.cells[] is not a 7-item row");
        }
        try {
            m.cells.push_back({.present = c[0].get<bool>(),
                               .step_s = c[1].get<double>(),
                               .compute_s = c[2].get<double>(),
                               .compute_on_cpu_s = c.size() == 7 ? c[6].get<double>() : -1.0,
                               .exposed_comm_s = c[3].get<double>(),
                               .collective_wait_s = c[4].get<double>(),
                               .waited_for_rank = c[5].get<int>()});
        } catch (const json::exception&) {
            throw RuntimeError("remote trace: rank_steps.cells[] has a value of the wrong type");
        }
    }
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
    TraceEvent e;
    e.rank = field<int>(j, "rank", "event");
    e.track = field<int>(j, "track", "event");
    const int kind = field<int>(j, "kind", "event");
    if (kind < 0 || kind > static_cast<int>(EventKind::Idle)) throw RuntimeError("remote trace: event.kind out of range");
    e.kind = static_cast<EventKind>(kind);
    e.name = field<std::string>(j, "name", "event");
    e.start_ns = field<std::int64_t>(j, "start_ns", "event");
    e.end_ns = field<std::int64_t>(j, "end_ns", "event");
    e.bytes = field<std::int64_t>(j, "bytes", "event");
    e.flops = field<double>(j, "flops", "event");
    e.step = field<int>(j, "step", "event");
    e.micro_batch = field<int>(j, "micro_batch", "event");
    e.layer = field<int>(j, "layer", "event");
    e.correlation_id = field<std::int64_t>(j, "correlation_id", "event");
    e.group_size = field<int>(j, "group_size", "event");
    const int collective = field<int>(j, "collective", "event");
    if (collective < 0 || collective > static_cast<int>(Collective::Generic)) {
        throw RuntimeError("remote trace: event.collective out of range");
    }
    e.collective = static_cast<Collective>(collective);
    return e;
}

}  // namespace meshwork::profiler::remote
