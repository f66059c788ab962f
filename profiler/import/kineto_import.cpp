#include "profiler/import/kineto_import.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "profiler/analysis/event_classify.h"
#include "profiler/analysis/kernel_name.h"
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

// The rank the file is for: the option, else the file's distributedInfo, else its name.
void resolve_rank(const KinetoFile& file, const ImportOptions& options, ImportResult& out) {
    int rank = options.rank;
    if (rank < 0 && file.rank) rank = *file.rank;
    if (rank < 0) rank = rank_from_file_name(file.path);
    out.rank_known = rank >= 0;
    out.rank = std::max(rank, 0);
    out.world_size = file.world_size.value_or(0);
}

// The trace's origin: its first event. Absolute when the file says where its clock starts
// (baseTimeNanoseconds) or its times are Unix-epoch microseconds themselves.
struct Origin {
    std::int64_t origin_ns = 0;
    std::int64_t absolute_start_ns = 0;  // 0: unknown
};

Origin origin_of(const KinetoFile& file) {
    std::int64_t origin = std::numeric_limits<std::int64_t>::max();
    for (const auto& e : file.events) origin = std::min(origin, e.start_ns);
    for (const auto& c : file.counters) origin = std::min(origin, c.time_ns);
    if (origin == std::numeric_limits<std::int64_t>::max()) origin = 0;
    Origin o{origin, 0};
    if (file.base_time_ns)
        o.absolute_start_ns = *file.base_time_ns + origin;
    else if (origin >= kEpoch2000Ns)
        o.absolute_start_ns = origin;
    return o;
}

TraceRunInfo run_info_of(const KinetoFile& file, const ImportResult& out, const ImportOptions& options,
                         const Origin& origin) {
    TraceRunInfo info;
    info.source = "kineto";
    info.tool_version = "meshwork " MESHWORK_VERSION;
    info.clock_domain = origin.absolute_start_ns ? "host-realtime" : "relative";
    info.start_time_unix_ns = origin.absolute_start_ns;
    info.world_size = out.world_size;
    info.extra["imported_from"] = file.path;
    if (!file.display_time_unit.empty()) info.extra["display_time_unit"] = file.display_time_unit;
    if (!file.device_name.empty()) info.extra["device_name"] = file.device_name;
    if (!file.backend.empty()) info.extra["distributed_backend"] = file.backend;
    if (options.offset_ns) info.extra["aligned_offset_ns"] = std::to_string(options.offset_ns);
    return info;
}

// What the host side says about device work: launches by correlation (or by flow), the
// ranges open around a launch, step windows, and the ops that carry collective args.
class HostIndex {
  public:
    explicit HostIndex(const KinetoFile& file) {
        for (const auto& e : file.events) {
            if (on_device(e.role)) continue;
            if (e.correlation) launch_by_correlation_[e.correlation] = {e.tid, e.start_ns};
            records_launches_ = records_launches_ || (e.correlation && e.role == KinetoRole::HostLaunch);
            ranges_.add_range(e.tid, e.start_ns, e.end_ns, e.name);
            if (e.name.rfind("ProfilerStep#", 0) == 0) {
                const RangeContext c = parse_range_context(e.name);
                if (c.step >= 0) steps_.add(e.start_ns, e.end_ns, c.step);
            }
            if (e.comm >= 0) {
                if (e.external_id) comm_by_external_.emplace(e.external_id, e.comm);
                comm_ops_.add(e.tid, e.start_ns, e.end_ns, e.comm);
            }
        }
        ranges_.finalize();
        steps_.finalize();
        comm_ops_.finalize();
        // Old traces (and some converters) link launch and kernel by a flow only: "s" at
        // the launch, "f" at the kernel's start on its lane.
        for (const auto& f : file.flows) {
            records_launches_ = records_launches_ || f.start;
            if (f.start)
                flow_start_[f.id] = {f.tid, f.ts_ns};
            else
                flow_end_at_[{f.ts_ns, f.tid}] = f.id;
        }
    }

    // The launch of device event `e`; null when neither a correlation nor a flow links one.
    [[nodiscard]] const Launch* launch_of(const KinetoEvent& e) const {
        if (e.correlation) {
            if (auto l = launch_by_correlation_.find(e.correlation); l != launch_by_correlation_.end())
                return &l->second;
        }
        auto f = flow_end_at_.find({e.start_ns, e.tid});
        if (f != flow_end_at_.end()) {
            if (auto s = flow_start_.find(f->second); s != flow_start_.end()) return &s->second;
        }
        return nullptr;
    }

    // Step, micro-batch and layer of a device event, as Holistic Trace Analysis assigns
    // iterations (hta/common/trace.py add_iteration): those of its launch, from the ranges
    // around the launch on its thread, else the ProfilerStep window that holds the launch.
    // A device event that names a launch (its correlation id) the file does not hold was
    // launched before the profiler started: it belongs to no step (HTA: iteration -1). One
    // that names none (MTIA's DMA records) is placed by when it ran, as HTA fixes those
    // (trace.py _fix_mtia_memory_kernels), and so is everything in a file that records no
    // launches at all (device activity alone).
    [[nodiscard]] RangeContext device_context(const KinetoEvent& e, const Launch* launch) const {
        if (!launch && e.correlation != 0 && records_launches_) return {};
        const std::int64_t t = launch ? launch->time_ns : e.start_ns;
        RangeContext ctx = launch ? ranges_.lookup(launch->tid, t) : ranges_.lookup_any(t);
        if (ctx.step < 0) ctx.step = steps_.step_at(t);
        return ctx;
    }

    [[nodiscard]] RangeContext host_context(const KinetoEvent& e) const {
        RangeContext ctx = ranges_.lookup(e.tid, e.start_ns);
        if (ctx.step < 0) ctx.step = steps_.step_at(e.start_ns);
        return ctx;
    }

    // The collective args of a communication kernel: its own, else its host op's (by
    // External id), else those of the op around its launch; -1 when none.
    [[nodiscard]] int comm_of(const KinetoEvent& e, const Launch* launch) const {
        int comm = e.comm;
        if (comm < 0 && e.external_id) {
            if (auto c = comm_by_external_.find(e.external_id); c != comm_by_external_.end()) comm = c->second;
        }
        if (comm < 0 && launch) comm = comm_ops_.around(launch->tid, launch->time_ns);
        return comm;
    }

  private:
    RangeContextMap ranges_;
    StepWindows steps_;
    CommOps comm_ops_;
    std::unordered_map<std::int64_t, Launch> launch_by_correlation_;
    std::unordered_map<std::int64_t, int> comm_by_external_;
    std::unordered_map<std::int64_t, Launch> flow_start_;
    std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> flow_end_at_;  // (ts, tid) -> id
    bool records_launches_ = false;  // some launch carries a correlation id, or a flow starts
};

// One track per lane: device lanes (device, stream), communication streams where an NCCL
// kernel ran, and host threads, one track per call depth: Kineto's CPU ops nest (a
// ProfilerStep around aten::linear around aten::addmm), and on one track the outer slice
// would cover the inner ones, which could then be neither seen nor clicked (Perfetto and
// Nsight Systems draw a thread's slices as a stack by depth for the same reason).
struct Lanes {
    std::map<std::pair<std::int64_t, std::int64_t>, int> track_of_device;
    std::map<std::tuple<std::int64_t, std::int64_t, int>, int> track_of_host;  // (pid, tid, depth)
    std::vector<int> depth;  // per event of the file: its call depth on its thread (0 for device events)
};

// The call depth of each host event on its thread: sorted by start (the longer first when two
// start together), an event is one deeper than the slices still open when it starts. Slices
// that overlap without nesting go one deeper too, so no two slices of one depth overlap.
std::vector<int> host_depths(const KinetoFile& file) {
    std::vector<int> depth(file.events.size(), 0);
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::size_t>> by_thread;
    for (std::size_t i = 0; i < file.events.size(); ++i) {
        if (!on_device(file.events[i].role)) by_thread[{file.events[i].pid, file.events[i].tid}].push_back(i);
    }
    std::vector<std::int64_t> open_ends;  // end times of the open slices, outermost first
    for (auto& [thread, events] : by_thread) {
        std::stable_sort(events.begin(), events.end(), [&file](std::size_t a, std::size_t b) {
            const auto& x = file.events[a];
            const auto& y = file.events[b];
            return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.end_ns > y.end_ns;
        });
        open_ends.clear();
        for (const std::size_t i : events) {
            const auto& e = file.events[i];
            while (!open_ends.empty() && open_ends.back() <= e.start_ns) open_ends.pop_back();
            depth[i] = static_cast<int>(open_ends.size());
            open_ends.push_back(e.end_ns);
        }
    }
    return depth;
}

Lanes add_tracks(const KinetoFile& file, int rank, TraceSink& sink) {
    Lanes lanes;
    lanes.depth = host_depths(file);
    std::map<std::pair<std::int64_t, std::int64_t>, bool> device_lanes;
    std::set<std::tuple<std::int64_t, std::int64_t, int>> host_lanes;
    for (std::size_t i = 0; i < file.events.size(); ++i) {
        const auto& e = file.events[i];
        if (on_device(e.role)) {
            bool& comm = device_lanes[{e.pid, e.tid}];
            comm = comm || e.kind == EventKind::Communication;
        } else {
            host_lanes.insert({e.pid, e.tid, lanes.depth[i]});
        }
    }
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
        lanes.track_of_device[lane] = sink.add_track(t);
    }
    int host_index = 0;
    for (const auto& lane : host_lanes) {
        const auto [pid, tid, depth] = lane;
        TrackInfo t;
        t.rank = rank;
        t.kind = TrackKind::Host;
        t.index = host_index++;
        auto named = file.thread_names.find({pid, tid});
        t.name = named != file.thread_names.end() ? named->second
                                                  : "thread " + std::to_string(pid) + "/" + std::to_string(tid);
        // The outermost slices keep the thread's name; the deeper ones say their depth.
        if (depth > 0) t.name += " · " + std::to_string(depth);
        lanes.track_of_host[lane] = sink.add_track(t);
    }
    return lanes;
}

// A kernel whose name does not say its collective (NCCL's and RCCL's ncclDevKernel_Generic,
// MSCCL) takes it from the "Collective name" of its args or its record_param_comms op
// (pytorch/kineto libkineto/src/output_json.cpp:36, appendCollectiveArgs), and keeps it in
// its name, as the trace file keeps names only: "ncclDevKernel_Generic [all_reduce]".
void take_collective_from_args(const KinetoCommInfo& c, std::string& name, Collective& collective) {
    if (collective != Collective::None && collective != Collective::Generic) return;
    const Collective from_args = collective_of_pytorch_name(c.collective);
    if (from_args == Collective::None) return;
    collective = from_args;
    name = with_collective_tag(name, to_string(from_args));
}

// Every event, shifted by `shift`, with its step, micro-batch and layer and, for a
// communication kernel, its collective, size and group. Takes the events' names.
void write_events(KinetoFile& file, const HostIndex& host, Lanes& lanes, int rank, std::int64_t shift,
                  TraceSink& sink, ImportResult& out) {
    for (std::size_t i = 0; i < file.events.size(); ++i) {
        auto& r = file.events[i];
        const bool device = on_device(r.role);
        TraceEvent e;
        e.rank = rank;
        e.track = device ? lanes.track_of_device[{r.pid, r.tid}] : lanes.track_of_host[{r.pid, r.tid, lanes.depth[i]}];
        e.kind = r.kind;
        e.start_ns = r.start_ns + shift;
        e.end_ns = r.end_ns + shift;
        e.correlation_id = r.correlation;
        e.bytes = r.bytes;
        RangeContext ctx;
        if (device) {
            const Launch* l = host.launch_of(r);
            ctx = host.device_context(r, l);
            if (r.kind == EventKind::Communication) {
                e.collective = collective_of_event(r.name);
                if (const int comm = host.comm_of(r, l); comm >= 0) {
                    const auto& c = file.comms[static_cast<std::size_t>(comm)];
                    e.bytes = c.bytes;
                    e.group_size = c.group_size;
                    take_collective_from_args(c, r.name, e.collective);
                }
            }
        } else {
            ctx = host.host_context(r);
        }
        apply_context(e, ctx);
        e.name = std::move(r.name);
        sink.add_event(e);
        ++out.events;
        if (device && e.kind != EventKind::Marker && e.kind != EventKind::Idle) ++out.device_events;
    }
}

// Counters (memory and the like), one track per process that has any.
void write_counters(const KinetoFile& file, int rank, std::int64_t shift, TraceSink& sink) {
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
}

// [memory] instants into the memory table: Bytes > 0 an allocation, < 0 a free, with the
// totals the profiler recorded after it.
void write_memory(const KinetoFile& file, int rank, std::int64_t shift, TraceSink& sink) {
    for (const auto& k : file.memory) {
        MemoryEvent m;
        m.rank = rank;
        m.device = static_cast<int>(k.device);
        m.time_ns = k.time_ns + shift;
        m.action = k.bytes >= 0 ? MemoryAction::Alloc : MemoryAction::FreeRequested;
        m.addr = k.addr;
        m.bytes = k.bytes >= 0 ? k.bytes : -k.bytes;
        m.allocated_bytes = k.total_allocated;
        m.reserved_bytes = k.total_reserved;
        sink.add_memory_event(m);
    }
}

}  // namespace

ImportResult write_kineto_trace(KinetoFile& file, TraceSink& sink, const ImportOptions& options) {
    ImportResult out;
    out.format = "kineto";
    out.skipped = file.skipped;
    resolve_rank(file, options, out);
    const Origin origin = origin_of(file);
    sink.set_run_info(run_info_of(file, out, options, origin));
    const std::int64_t shift = options.offset_ns - origin.origin_ns;
    const HostIndex host(file);
    Lanes lanes = add_tracks(file, out.rank, sink);
    write_events(file, host, lanes, out.rank, shift, sink, out);
    write_counters(file, out.rank, shift, sink);
    write_memory(file, out.rank, shift, sink);
    return out;
}

ImportResult import_kineto_json(const std::string& path, TraceSink& sink,
                                const ImportOptions& options) {
    KinetoFile file = read_kineto_file(path);
    return write_kineto_trace(file, sink, options);
}

}  // namespace meshwork::profiler
