// The collectives a trace event can stand for, and nccl-tests' bus-bandwidth factor of each:
// the one owner of both. Producers that know the collective (the engine's RankContext, the
// importers from NCCL kernel names) put it on TraceEvent::collective; the trace store keeps
// the event name only ("all_reduce(tp)", the kernel name), and its reader fills the field in
// again from that name (profiler/store/trace_reader.cpp), so files stay as they were.
#pragma once

#include <cstdint>
#include <string_view>

namespace meshwork {

enum class Collective : std::uint8_t {
    None = 0,  // not a collective (or a communication event of unknown kind)
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    Broadcast,
    Reduce,
    SendRecv,
    Send,
    Recv,
    Barrier,
    Generic,  // NCCL's generic kernel (ncclDevKernel_Generic): the collective is not in the name
};

// "all_reduce", "all_gather", ...: the names Meshwork's own events start with; "" for None.
std::string_view to_string(Collective c);

// The collective a Meshwork event name starts with: "all_reduce(tp)", "reduce_scatter(dp).grads",
// "send(pp).activation" (the name, then the end or one of "( :."); None when it is none.
// NCCL kernel names are the profiler's to read (profiler/analysis/event_classify.h).
Collective collective_of_name(std::string_view event_name);

// nccl-tests' bus-bandwidth factor over n ranks (busbw = algbw × factor): all-reduce
// 2(n−1)/n, all-gather, reduce-scatter and all-to-all (n−1)/n, the rest 1
// (nccl-tests doc/PERFORMANCE.md).
double bus_factor(Collective c, int n);

}  // namespace meshwork
