#include "profiler/import/memory_snapshot.h"

#include <algorithm>
#include <limits>
#include <map>
#include <vector>

#include "core/common/error.h"
#include "profiler/import/pickle_reader.h"
#include "profiler/import/text_input.h"

namespace meshwork::profiler {

namespace {

using pickle::NodeId;
using pickle::PickleDoc;

// Frames kept per event, innermost first: enough for the categories (memory_categories.h),
// which look for the training step's own frames, and a bound on the work per event.
constexpr std::size_t kMaxFramesKept = 64;
// Dict lookups and list items visited, per byte of input: the memo can make one big dict a
// child of every event, so the walk is bounded by the input, not by what the graph unfolds to.
constexpr std::int64_t kVisitsPerInputByte = 64;

struct Walker {
    const PickleDoc& doc;
    const std::string& path;
    std::int64_t budget;

    [[noreturn]] void bad(const std::string& field, const std::string& message) const {
        throw InputError(path, field, message);
    }
    void charge(std::size_t n, const std::string& field) {
        budget -= static_cast<std::int64_t>(n) + 1;
        if (budget < 0) bad(field, "the snapshot's shared values unfold to more work than its size allows");
    }
    std::optional<NodeId> find(NodeId dict, const char* key, const std::string& field) {
        charge(doc.items(dict).size(), field);
        return doc.get(dict, key);
    }
    NodeId need(NodeId dict, const char* key, const std::string& field) {
        const auto v = find(dict, key, field);
        if (!v) bad(field + "." + key, "missing");
        return *v;
    }
    std::int64_t integer(NodeId dict, const char* key, const std::string& field, std::int64_t lo, std::int64_t hi) {
        const NodeId v = need(dict, key, field);
        const auto i = doc.as_int(v);
        if (!i) bad(field + "." + key, std::string("expected an integer, found ") + pickle::kind_name(doc.kind(v)));
        if (*i < lo || *i > hi) {
            bad(field + "." + key, std::to_string(*i) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
        }
        return *i;
    }
    std::string text(NodeId dict, const char* key, const std::string& field) {
        const NodeId v = need(dict, key, field);
        const auto t = doc.as_text(v);
        if (!t) bad(field + "." + key, std::string("expected a str, found ") + pickle::kind_name(doc.kind(v)));
        return std::string(*t);
    }
    std::span<const NodeId> list(NodeId v, const std::string& field) {
        if (doc.kind(v) != pickle::Kind::List && doc.kind(v) != pickle::Kind::Tuple) {
            bad(field, std::string("expected a list, found ") + pickle::kind_name(doc.kind(v)));
        }
        charge(doc.items(v).size(), field);
        return doc.items(v);
    }
    void dict(NodeId v, const std::string& field) const {
        if (doc.kind(v) != pickle::Kind::Dict) bad(field, std::string("expected a dict, found ") + pickle::kind_name(doc.kind(v)));
    }
};

constexpr std::int64_t kMaxBytes = (std::int64_t{1} << 62) - 1;
constexpr std::int64_t kMaxTimeUs = ((std::int64_t{1} << 62) - 1) / 1000;

// "name file:line" per frame, innermost first, at most kMaxFramesKept.
std::string frames_text(Walker& w, NodeId event, const std::string& field) {
    const auto frames = w.find(event, "frames", field);
    if (!frames) return {};
    const auto items = w.list(*frames, field + ".frames");
    std::string out;
    for (std::size_t i = 0; i < items.size() && i < kMaxFramesKept; ++i) {
        const std::string f = field + ".frames[" + std::to_string(i) + "]";
        w.dict(items[i], f);
        const auto line = w.integer(items[i], "line", f, std::numeric_limits<std::int64_t>::min(),
                                    std::numeric_limits<std::int64_t>::max());
        std::string name = w.text(items[i], "name", f);
        std::string file = w.text(items[i], "filename", f);
        // One frame a line: newlines inside a name would split it.
        std::replace(name.begin(), name.end(), '\n', ' ');
        std::replace(file.begin(), file.end(), '\n', ' ');
        if (!out.empty()) out += '\n';
        out += name + " " + file + ":" + std::to_string(line);
    }
    return out;
}

std::optional<MemoryAction> action_of(const std::string& a) {
    if (a == "alloc") return MemoryAction::Alloc;
    if (a == "free_requested" || a == "free") return MemoryAction::FreeRequested;
    if (a == "free_completed") return MemoryAction::FreeCompleted;
    if (a == "segment_alloc" || a == "segment_map") return MemoryAction::SegmentAlloc;
    if (a == "segment_free" || a == "segment_unmap") return MemoryAction::SegmentFree;
    if (a == "oom") return MemoryAction::Oom;
    return std::nullopt;  // "snapshot", "user_defined", ...: markers, no change of memory
}

struct DeviceTotals {
    std::int64_t allocated = 0;
    std::int64_t reserved = 0;
};

}  // namespace

bool looks_like_pickle(const std::string& path) {
    std::string head;
    try {
        head = read_text_maybe_gzip(path, std::uint64_t{1} << 34).substr(0, 2);
    } catch (const InputError&) {
        return false;
    }
    return head.size() == 2 && static_cast<unsigned char>(head[0]) == 0x80 && head[1] >= 2 && head[1] <= 5;
}

ImportResult import_memory_snapshot(const std::string& path, TraceSink& sink, const ImportOptions& options) {
    const std::string bytes = read_text_maybe_gzip(path);
    const PickleDoc doc = pickle::read_pickle(bytes, path);
    Walker w{doc, path, kVisitsPerInputByte * static_cast<std::int64_t>(bytes.size()) + (1 << 20)};
    const NodeId root = doc.root();
    w.dict(root, "snapshot");
    const auto segments = w.find(root, "segments", "snapshot");
    const auto traces = w.find(root, "device_traces", "snapshot");
    if (!segments) w.bad("segments", "missing: not a torch.cuda.memory._snapshot() pickle");

    // The totals at the end, from the segments (what was reserved and allocated then).
    std::map<int, DeviceTotals> end;
    const auto segs = w.list(*segments, "segments");
    for (std::size_t i = 0; i < segs.size(); ++i) {
        const std::string f = "segments[" + std::to_string(i) + "]";
        w.dict(segs[i], f);
        const int device = static_cast<int>(w.integer(segs[i], "device", f, 0, 65535));
        auto& t = end[device];
        t.reserved += w.integer(segs[i], "total_size", f, 0, kMaxBytes);
        t.allocated += w.integer(segs[i], "allocated_size", f, 0, kMaxBytes);
        if (t.reserved > kMaxBytes || t.allocated > kMaxBytes) w.bad(f, "the segments add up to more than 2^62 bytes");
    }

    struct Pending {
        MemoryEvent event;
        std::int64_t allocated_delta = 0;
        std::int64_t reserved_delta = 0;
    };
    std::map<int, std::vector<Pending>> per_device;
    std::int64_t origin_us = std::numeric_limits<std::int64_t>::max();
    std::int64_t skipped = 0;
    if (traces) {
        const auto devices = w.list(*traces, "device_traces");
        if (devices.size() > 65536) w.bad("device_traces", "more than 65536 devices");
        for (std::size_t d = 0; d < devices.size(); ++d) {
            const std::string df = "device_traces[" + std::to_string(d) + "]";
            const auto events = w.list(devices[d], df);
            // Histories without free_requested (older PyTorch) give a block back at free_completed.
            bool has_free_requested = false;
            std::vector<std::pair<NodeId, std::string>> actions;
            actions.reserve(events.size());
            for (std::size_t i = 0; i < events.size(); ++i) {
                const std::string f = df + "[" + std::to_string(i) + "]";
                w.dict(events[i], f);
                actions.emplace_back(events[i], w.text(events[i], "action", f));
                has_free_requested = has_free_requested || actions.back().second == "free_requested";
            }
            auto& out = per_device[static_cast<int>(d)];
            for (std::size_t i = 0; i < events.size(); ++i) {
                const std::string f = df + "[" + std::to_string(i) + "]";
                const auto action = action_of(actions[i].second);
                if (!action) {
                    ++skipped;
                    continue;
                }
                Pending p;
                auto& m = p.event;
                m.rank = options.rank < 0 ? 0 : options.rank;
                m.device = static_cast<int>(d);
                m.action = *action;
                m.addr = w.integer(events[i], "addr", f, std::numeric_limits<std::int64_t>::min(),
                                   std::numeric_limits<std::int64_t>::max());
                m.bytes = w.integer(events[i], "size", f, 0, kMaxBytes);
                if (const auto s = w.find(events[i], "stream", f); s && doc.as_int(*s)) m.stream = *doc.as_int(*s);
                const auto t_us = w.integer(events[i], "time_us", f, 0, kMaxTimeUs);
                m.time_ns = t_us;  // microseconds until the origin is known
                origin_us = std::min(origin_us, t_us);
                m.frames = frames_text(w, events[i], f);
                switch (m.action) {
                    case MemoryAction::Alloc: p.allocated_delta = m.bytes; break;
                    case MemoryAction::FreeRequested: p.allocated_delta = -m.bytes; break;
                    case MemoryAction::FreeCompleted: p.allocated_delta = has_free_requested ? 0 : -m.bytes; break;
                    case MemoryAction::SegmentAlloc: p.reserved_delta = m.bytes; break;
                    case MemoryAction::SegmentFree: p.reserved_delta = -m.bytes; break;
                    case MemoryAction::Oom: break;
                }
                out.push_back(std::move(p));
            }
        }
    }
    if (origin_us == std::numeric_limits<std::int64_t>::max()) origin_us = 0;

    ImportResult result;
    result.format = "torch-memory-snapshot";
    result.rank = options.rank < 0 ? 0 : options.rank;
    result.rank_known = options.rank >= 0;
    result.world_size = 0;
    result.skipped = skipped;

    TraceRunInfo info;
    info.source = "torch-memory-snapshot";
    info.tool_version = "meshwork " MESHWORK_VERSION;
    info.clock_domain = "host-realtime";
    info.start_time_unix_ns = origin_us * 1000;
    info.extra["imported_from"] = path;
    sink.set_run_info(info);

    for (auto& [device, events] : per_device) end.try_emplace(device);
    for (const auto& [device, totals] : end) {
        auto& events = per_device[device];
        // The history may start after the process did (a ring buffer): the totals before it are
        // the end's minus every change it records.
        std::int64_t allocated = totals.allocated, reserved = totals.reserved;
        for (const auto& p : events) {
            allocated -= p.allocated_delta;
            reserved -= p.reserved_delta;
        }
        if (allocated < 0 || reserved < 0) {
            throw InputError(path, "device_traces[" + std::to_string(device) + "]",
                             "the history frees more than the segments account for (before it: allocated " +
                                 std::to_string(allocated) + ", reserved " + std::to_string(reserved) + " bytes)");
        }
        const int track = sink.add_track({result.rank, TrackKind::Memory, device, "memory gpu " + std::to_string(device)});
        sink.add_counter(result.rank, track, "allocated bytes", options.offset_ns, static_cast<double>(allocated));
        sink.add_counter(result.rank, track, "reserved bytes", options.offset_ns, static_cast<double>(reserved));
        for (auto& p : events) {
            allocated += p.allocated_delta;
            reserved += p.reserved_delta;
            p.event.time_ns = (p.event.time_ns - origin_us) * 1000 + options.offset_ns;
            // Negative totals: the end's segments and the history disagree (a file cut or edited).
            if (allocated < 0 || reserved < 0) {
                throw InputError(path, "device_traces[" + std::to_string(device) + "]",
                                 "the history frees more than the segments account for (allocated " +
                                     std::to_string(allocated) + ", reserved " + std::to_string(reserved) + " bytes)");
            }
            p.event.allocated_bytes = allocated;
            p.event.reserved_bytes = reserved;
            sink.add_counter(result.rank, track, "allocated bytes", p.event.time_ns, static_cast<double>(allocated));
            sink.add_counter(result.rank, track, "reserved bytes", p.event.time_ns, static_cast<double>(reserved));
            sink.add_memory_event(p.event);
            ++result.events;
        }
        sink.finish_track(track);
    }
    return result;
}

}  // namespace meshwork::profiler
