#include "profiler/collect/gpu_activity.h"

#include <map>
#include <unordered_map>

#include "profiler/analysis/range_context.h"

namespace meshwork::profiler {

std::size_t write_gpu_activity(const GpuActivity& activity, TraceSink& sink,
                               const std::vector<int>& rank_of_device, int default_rank) {
    auto rank_of = [&](std::uint32_t device) {
        return device < rank_of_device.size() ? rank_of_device[device] : default_rank;
    };
    RangeContextMap ctx;
    for (const auto& r : activity.ranges) ctx.add_range(r.thread, r.start_ns, r.end_ns, r.name);
    ctx.finalize();
    // correlation -> (launching thread, launch time): what device_event looks ranges up by.
    std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::int64_t>> launch;
    for (const auto& a : activity.launches) launch[a.correlation] = {a.thread, a.start_ns};

    // A stream that ran any NCCL kernel is a communication stream; the others compute.
    std::map<std::pair<std::uint32_t, std::uint32_t>, bool> streams;
    std::map<std::uint32_t, int> thread_rank;
    for (const auto& d : activity.device) {
        bool& comm = streams[{d.device, d.stream}];
        comm = comm || d.kind == EventKind::Communication;
        if (auto l = launch.find(d.correlation); l != launch.end()) thread_rank.emplace(l->second.first, rank_of(d.device));
    }
    std::map<std::pair<std::uint32_t, std::uint32_t>, int> track;
    std::map<int, std::pair<int, int>> index_per_rank;  // rank -> (next compute, next comm)
    for (const auto& [key, comm] : streams) {
        const int rank = rank_of(key.first);
        auto& [compute_index, comm_index] = index_per_rank[rank];
        track[key] = sink.add_track({rank, comm ? TrackKind::CommStream : TrackKind::ComputeStream,
                                     comm ? comm_index++ : compute_index++,
                                     "gpu " + std::to_string(key.first) + " stream " + std::to_string(key.second)});
    }
    std::size_t written = 0;
    const bool launches_recorded = !activity.launches.empty();
    for (const auto& d : activity.device) {
        const auto l = launch.find(d.correlation);
        sink.add_event(device_event(d, rank_of(d.device), track[{d.device, d.stream}],
                                    l != launch.end() ? &l->second : nullptr, launches_recorded, ctx));
        ++written;
    }
    std::map<std::uint32_t, int> host;
    for (const auto& r : activity.ranges) {
        const auto tr = thread_rank.find(r.thread);
        const int rank = tr == thread_rank.end() ? default_rank : tr->second;
        auto it = host.find(r.thread);
        if (it == host.end()) {
            it = host.emplace(r.thread, sink.add_track({rank, TrackKind::Host, static_cast<int>(host.size()),
                                                        "host thread " + std::to_string(r.thread)}))
                     .first;
        }
        TraceEvent e;
        e.rank = rank;
        e.track = it->second;
        e.kind = EventKind::Marker;
        e.name = r.name;
        e.start_ns = r.start_ns;
        e.end_ns = r.end_ns;
        const RangeContext c = ctx.lookup(r.thread, r.start_ns);
        apply_context(e, c);
        sink.add_event(e);
        ++written;
    }
    return written;
}

}  // namespace meshwork::profiler
