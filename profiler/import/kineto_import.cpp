#include "profiler/import/kineto_import.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "profiler/analysis/event_classify.h"
#include "profiler/analysis/range_context.h"
#include "profiler/import/kineto_time.h"

namespace meshwork::profiler {

namespace {

bool on_device(KinetoRole r) {
    return r == KinetoRole::DeviceKernel || r == KinetoRole::DeviceMemcpy ||
           r == KinetoRole::DeviceMemset || r == KinetoRole::DeviceAnnotation ||
           r == KinetoRole::DeviceSync;
}

// ProfilerStep#N windows of the host timeline (any thread), for HTA's step attribution:
// an op belongs to the step whose window holds its start, whichever thread ran it.
class StepWindows {
  public:
    void add(std::int64_t start, std::int64_t end, int step) {
        windows_.push_back({start, end, step});
    }
    void finalize() {
        std::sort(windows_.begin(), windows_.end(),
                  [](const W& a, const W& b) { return a.start < b.start; });
    }
    [[nodiscard]] int step_at(std::int64_t t) const {
        auto it = std::upper_bound(windows_.begin(), windows_.end(), t,
                                   [](std::int64_t x, const W& w) { return x < w.start; });
        if (it == windows_.begin()) return -1;
        --it;
        return t < it->end ? it->step : -1;
    }

  private:
    struct W {
        std::int64_t start, end;
        int step;
    };
    std::vector<W> windows_;
};

// Host ops that carry collective args, per thread: the innermost one around a launch gives
// the kernel its size and group.
class CommOps {
  public:
    void add(std::int64_t tid, std::int64_t start, std::int64_t end, int comm) {
        by_thread_[tid].push_back({start, end, comm});
    }
    void finalize() {
        for (auto& [t, v] : by_thread_) {
            std::sort(v.begin(), v.end(),
                      [](const Op& a, const Op& b) { return a.start < b.start; });
        }
    }
    [[nodiscard]] int around(std::int64_t tid, std::int64_t t) const {
        auto th = by_thread_.find(tid);
        if (th == by_thread_.end()) return -1;
        const auto& v = th->second;
        auto it = std::upper_bound(v.begin(), v.end(), t,
                                   [](std::int64_t x, const Op& o) { return x < o.start; });
        for (int n = 0; it != v.begin() && n < 8; ++n) {
            --it;
            if (it->end >= t) return it->comm;
        }
        return -1;
    }

  private:
    struct Op {
        std::int64_t start, end;
        int comm;
    };
    std::unordered_map<std::int64_t, std::vector<Op>> by_thread_;
};

struct Launch {
    std::int64_t tid = 0;
    std::int64_t time_ns = 0;
};

}  // namespace

ImportResult write_kineto_trace(KinetoFile& file, TraceSink& sink, const ImportOptions& options) {
    ImportResult out;
    out.format = "kineto";
    out.skipped = file.skipped;
    int rank = options.rank;
    if (rank < 0 && file.rank) rank = *file.rank;
    if (rank < 0) rank = rank_from_file_name(file.path);
    out.rank_known = rank >= 0;
    if (rank < 0) rank = 0;
    out.rank = rank;
    out.world_size = file.world_size.value_or(0);

    // The trace's origin: its first event. Absolute when the file says where its clock starts
    // (baseTimeNanoseconds) or its times are Unix-epoch microseconds themselves.
    std::int64_t origin = std::numeric_limits<std::int64_t>::max();
    for (const auto& e : file.events) origin = std::min(origin, e.start_ns);
    for (const auto& c : file.counters) origin = std::min(origin, c.time_ns);
    if (origin == std::numeric_limits<std::int64_t>::max()) origin = 0;
    std::int64_t absolute_start_ns = 0;
    if (file.base_time_ns)
        absolute_start_ns = *file.base_time_ns + origin;
    else if (origin >= kEpoch2000Ns)
        absolute_start_ns = origin;

    TraceRunInfo info;
    info.source = "kineto";
    info.tool_version = "meshwork " MESHWORK_VERSION;
    info.clock_domain = absolute_start_ns ? "host-realtime" : "relative";
    info.start_time_unix_ns = absolute_start_ns;
    info.world_size = out.world_size;
    info.extra["imported_from"] = file.path;
    if (!file.display_time_unit.empty()) info.extra["display_time_unit"] = file.display_time_unit;
    if (!file.device_name.empty()) info.extra["device_name"] = file.device_name;
    if (!file.backend.empty()) info.extra["distributed_backend"] = file.backend;
    if (options.offset_ns) info.extra["aligned_offset_ns"] = std::to_string(options.offset_ns);
    sink.set_run_info(info);
    const std::int64_t shift = options.offset_ns - origin;

    // Host side: launches by correlation, ranges, step windows, collective ops.
    RangeContextMap ranges;
    StepWindows steps;
    CommOps comm_ops;
    std::unordered_map<std::int64_t, Launch> launch_by_correlation;
    std::unordered_map<std::int64_t, int> comm_by_external;
    for (const auto& e : file.events) {
        if (on_device(e.role)) continue;
        if (e.correlation) launch_by_correlation[e.correlation] = {e.tid, e.start_ns};
        ranges.add_range(e.tid, e.start_ns, e.end_ns, e.name);
        if (e.name.rfind("ProfilerStep#", 0) == 0) {
            const RangeContext c = parse_range_context(e.name);
            if (c.step >= 0) steps.add(e.start_ns, e.end_ns, c.step);
        }
        if (e.comm >= 0) {
            if (e.external_id) comm_by_external.emplace(e.external_id, e.comm);
            comm_ops.add(e.tid, e.start_ns, e.end_ns, e.comm);
        }
    }
    ranges.finalize();
    steps.finalize();
    comm_ops.finalize();
    // Old traces (and some converters) link launch and kernel by a flow only: "s" at the
    // launch, "f" at the kernel's start on its lane.
    std::unordered_map<std::int64_t, Launch> flow_start;
    std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> flow_end_at;  // (ts, tid) -> id
    for (const auto& f : file.flows) {
        if (f.start)
            flow_start[f.id] = {f.tid, f.ts_ns};
        else
            flow_end_at[{f.ts_ns, f.tid}] = f.id;
    }
    auto launch_of = [&](const KinetoEvent& e, std::int64_t original_tid) -> const Launch* {
        if (e.correlation) {
            if (auto l = launch_by_correlation.find(e.correlation);
                l != launch_by_correlation.end())
                return &l->second;
        }
        auto f = flow_end_at.find({e.start_ns, original_tid});
        if (f == flow_end_at.end()) f = flow_end_at.find({e.start_ns, e.tid});
        if (f != flow_end_at.end()) {
            if (auto s = flow_start.find(f->second); s != flow_start.end()) return &s->second;
        }
        return nullptr;
    };

    // Tracks: device lanes (device, stream), communication streams where an NCCL kernel ran.
    std::map<std::pair<std::int64_t, std::int64_t>, bool> device_lanes;
    std::map<std::pair<std::int64_t, std::int64_t>, bool> host_lanes;
    for (const auto& e : file.events) {
        if (on_device(e.role)) {
            bool& comm = device_lanes[{e.pid, e.tid}];
            comm = comm || e.kind == EventKind::Communication;
        } else {
            host_lanes[{e.pid, e.tid}] = false;
        }
    }
    std::map<std::pair<std::int64_t, std::int64_t>, int> track_of_device, track_of_host;
    int comm_index = 0, compute_index = 0;
    // Lane names stay short (the timeline's label column is narrow): the device only when the
    // file has several.
    std::set<std::int64_t> devices;
    for (const auto& [lane, comm] : device_lanes) devices.insert(lane.first);
    for (const auto& [lane, comm] : device_lanes) {
        TrackInfo t;
        t.rank = rank;
        t.kind = comm ? TrackKind::CommStream : TrackKind::ComputeStream;
        t.index = comm ? comm_index++ : compute_index++;
        t.name =
            (devices.size() > 1 ? "device " + std::to_string(lane.first) + " " : std::string()) +
            "stream " + std::to_string(lane.second);
        track_of_device[lane] = sink.add_track(t);
    }
    int host_index = 0;
    for (const auto& [lane, unused] : host_lanes) {
        TrackInfo t;
        t.rank = rank;
        t.kind = TrackKind::Host;
        t.index = host_index++;
        auto named = file.thread_names.find(lane);
        t.name = named != file.thread_names.end()
                     ? named->second
                     : "thread " + std::to_string(lane.first) + "/" + std::to_string(lane.second);
        track_of_host[lane] = sink.add_track(t);
    }

    for (auto& r : file.events) {
        const bool device = on_device(r.role);
        TraceEvent e;
        e.rank = rank;
        e.track = device ? track_of_device[{r.pid, r.tid}] : track_of_host[{r.pid, r.tid}];
        e.kind = r.kind;
        e.start_ns = r.start_ns + shift;
        e.end_ns = r.end_ns + shift;
        e.correlation_id = r.correlation;
        e.bytes = r.bytes;
        RangeContext ctx;
        if (device) {
            const Launch* l = launch_of(r, r.tid);
            if (l) {
                ctx = ranges.lookup(l->tid, l->time_ns);
                if (ctx.step < 0) ctx.step = steps.step_at(l->time_ns);
            } else {
                ctx = ranges.lookup_any(r.start_ns);
                if (ctx.step < 0) ctx.step = steps.step_at(r.start_ns);
            }
            if (r.kind == EventKind::Communication) {
                e.collective = collective_of_event(r.name);
                int comm = r.comm;
                if (comm < 0 && r.external_id) {
                    if (auto c = comm_by_external.find(r.external_id); c != comm_by_external.end())
                        comm = c->second;
                }
                if (comm < 0 && l) comm = comm_ops.around(l->tid, l->time_ns);
                if (comm >= 0) {
                    const auto& c = file.comms[static_cast<std::size_t>(comm)];
                    e.bytes = c.bytes;
                    e.group_size = c.group_size;
                }
            }
        } else {
            ctx = ranges.lookup(r.tid, r.start_ns);
            if (ctx.step < 0) ctx.step = steps.step_at(r.start_ns);
        }
        apply_context(e, ctx);
        e.name = std::move(r.name);
        sink.add_event(e);
        ++out.events;
        if (device && e.kind != EventKind::Marker && e.kind != EventKind::Idle) ++out.device_events;
    }
    std::map<std::int64_t, int> memory_tracks;
    for (const auto& c : file.counters) {
        auto it = memory_tracks.find(c.pid);
        if (it == memory_tracks.end()) {
            TrackInfo t{rank, TrackKind::Memory, static_cast<int>(memory_tracks.size()),
                        "counters " + std::to_string(c.pid)};
            it = memory_tracks.emplace(c.pid, sink.add_track(t)).first;
        }
        sink.add_counter(rank, it->second, c.name, c.time_ns + shift, c.value);
    }
    return out;
}

ImportResult import_kineto_json(const std::string& path, TraceSink& sink,
                                const ImportOptions& options) {
    KinetoFile file = read_kineto_file(path);
    return write_kineto_trace(file, sink, options);
}

}  // namespace meshwork::profiler
