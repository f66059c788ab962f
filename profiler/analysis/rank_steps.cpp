// Per rank × step metrics (rank_steps.h).
//
// Collective wait. A collective completes on no rank before the last rank of its group has
// entered it, so a rank that enters early spends the difference waiting:
//     wait(rank) = latest start over the group − this rank's start,
// clamped to [0, this rank's duration of the collective]: a rank cannot have waited longer
// than it spent in the call (the clamp also absorbs clock skew between ranks of a merged trace).
// The rank with the latest start is the one waited for.
//
// Which events on different ranks are the same collective call. No trace format Meshwork reads
// carries a call id shared across ranks: Meshwork's CPU/MPI and CUDA engines and its simulator
// name a collective by kind and mesh axis ("all_reduce(dp)", "reduce_scatter(dp).grads");
// an imported Kineto or Nsight trace names it by its NCCL kernel ("ncclDevKernel_AllReduce_
// Sum_bf16_RING_LL"), whose algorithm and dtype suffixes say nothing about the call. What every
// rank of a group does share is the program order: NCCL requires every rank of a communicator
// to issue its collectives in the same order. So an instance is identified by
//     (step, label, n), the n-th call with that label in that step on the rank,
// where the label is the full event name for a Meshwork name (kind, axis and what it moves)
// and the collective kind alone for any other name (NCCL kernel names vary in suffix only).
// The calls of one rank are counted in start order over all its tracks, as ranks may put the
// same collective on differently numbered streams.
//
// Which ranks form the group. When the trace carries a layout (trace_layout.h) and the name
// names a mesh axis, the group is the rank's group of that axis in the layout's mesh, so the
// disjoint TP groups of a job, which issue the same calls at the same time, are told apart.
// Otherwise every rank with that instance is taken as one group; when that gives more
// arrivals than the event's own group size says take part, the instance mixes groups that
// the trace cannot tell apart and no wait is attributed to it rather than a wrong one.
//
// CPU time inside compute ops. The CPU engine records it per rank thread and step as a
// counter sampled at the step's end (RankContext::end_step_sched); a sample belongs to the
// rank's latest step that began before it.
//
// Point-to-point transfers (send, recv) are left out: a receiver waiting for its sender is
// a pipeline dependency (the bubble), not a collective held back by one late rank.
#include "profiler/analysis/rank_steps.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "core/mesh/device_mesh.h"
#include "profiler/analysis/collective_axis.h"
#include "profiler/analysis/step_times.h"
#include "profiler/analysis/trace_layout.h"

namespace meshwork::profiler {

namespace {

constexpr double kNsPerS = 1e9;

bool is_point_to_point(Collective c) {
    return c == Collective::Send || c == Collective::Recv || c == Collective::SendRecv;
}

struct StepIntervals {
    std::vector<Interval> all, compute, comm;
};

struct CollectiveCall {
    std::int64_t start_ns = 0, end_ns = 0;
    int step = -1;
    int group_size = 0;
    int label = 0;  // id of the label text (labels below): keys stay cheap on big traces
    std::optional<Axis> axis;
};

struct RankData {
    std::map<int, StepIntervals> by_step;
    std::vector<CollectiveCall> calls;
};

struct InstanceKey {
    int step;
    int label;
    int ordinal;
    int group;  // first rank of the mesh group; -1 when the group is unknown (all ranks)
    bool operator<(const InstanceKey& o) const {
        return std::tie(step, label, ordinal, group) < std::tie(o.step, o.label, o.ordinal, o.group);
    }
};

struct Arrival {
    int rank;
    std::int64_t start_ns, end_ns;
    int group_size;
};

}  // namespace

RankStepMatrix compute_rank_steps(const TraceReader& trace) {
    std::map<int, RankData> ranks;
    std::map<std::string, int, std::less<>> labels;
    auto label_id = [&labels](std::string text) {
        return labels.try_emplace(std::move(text), static_cast<int>(labels.size())).first->second;
    };
    trace.for_each_event([&](const TraceEvent& e) {
        if (!is_device_work(e.kind)) return;
        auto& r = ranks[e.rank];  // a rank with device work is a row even without steps
        if (e.step < 0) return;
        auto& st = r.by_step[e.step];
        const Interval iv{e.start_ns, e.end_ns};
        st.all.push_back(iv);
        if (e.kind == EventKind::Compute) st.compute.push_back(iv);
        if (e.kind == EventKind::Communication) {
            st.comm.push_back(iv);
            if (e.collective != Collective::None && !is_point_to_point(e.collective)) {
                const bool meshwork_name = collective_of_name(e.name) != Collective::None;
                r.calls.push_back({e.start_ns, e.end_ns, e.step, e.group_size,
                                   label_id(meshwork_name ? e.name : std::string(to_string(e.collective))),
                                   meshwork_name ? axis_of_name(e.name) : std::nullopt});
            }
        }
    });

    RankStepMatrix m;
    std::map<int, std::size_t> step_index, rank_index;
    for (const auto& [rank, data] : ranks) {
        rank_index[rank] = m.ranks.size();
        m.ranks.push_back(rank);
        for (const auto& [step, ivs] : data.by_step) step_index.emplace(step, 0);
    }
    for (auto& [step, index] : step_index) {
        index = m.steps.size();
        m.steps.push_back(step);
    }
    m.cells.resize(m.ranks.size() * m.steps.size());
    auto cell = [&](int rank, int step) -> RankStepCell& {
        return m.cells[rank_index.at(rank) * m.steps.size() + step_index.at(step)];
    };

    std::map<int, std::map<std::int64_t, int>> step_by_start;  // rank -> first start -> step
    for (auto& [rank, data] : ranks) {
        for (auto& [step, ivs] : data.by_step) {
            std::int64_t first = ivs.all.front().first;
            for (const Interval& iv : ivs.all) first = std::min(first, iv.first);
            step_by_start[rank][first] = step;
            const StepTimes t = step_times(std::move(ivs.all), std::move(ivs.compute), std::move(ivs.comm));
            RankStepCell& c = cell(rank, step);
            c.present = true;
            c.step_s = static_cast<double>(t.span) / kNsPerS;
            c.compute_s = static_cast<double>(t.compute) / kNsPerS;
            c.exposed_comm_s = static_cast<double>(t.exposed) / kNsPerS;
        }
    }

    std::map<int, int> rank_of_track;
    for (const auto& t : trace.tracks()) rank_of_track[t.id] = t.info.rank;
    trace.for_each_counter([&](const CounterSample& c) {
        if (c.name != "thread.compute_on_cpu_s") return;
        const auto track = rank_of_track.find(c.track);
        if (track == rank_of_track.end()) return;
        const auto starts = step_by_start.find(track->second);
        if (starts == step_by_start.end()) return;
        auto after = starts->second.upper_bound(c.time_ns);
        if (after == starts->second.begin()) return;  // before the rank's first step
        cell(track->second, std::prev(after)->second).compute_on_cpu_s = c.value;
    });

    // Every collective instance and its arrivals (see the top of this file).
    std::optional<DeviceMesh> mesh;
    if (const auto layout = trace_layout(trace)) mesh = layout->mesh();
    // A group is named by its first rank; -1 when the mesh cannot tell (no layout, a name
    // without an axis, a rank outside the mesh).
    auto group_of = [&mesh](int rank, std::optional<Axis> axis) {
        return mesh && axis ? mesh->group_first_rank(rank, *axis) : -1;
    };
    std::map<InstanceKey, std::vector<Arrival>> instances;
    for (auto& [rank, data] : ranks) {
        std::sort(data.calls.begin(), data.calls.end(), [](const CollectiveCall& a, const CollectiveCall& b) {
            return std::tie(a.start_ns, a.end_ns) < std::tie(b.start_ns, b.end_ns);
        });
        std::map<std::pair<int, int>, int> seen;  // (step, label) -> calls so far
        for (const auto& call : data.calls) {
            const int ordinal = seen[{call.step, call.label}]++;
            instances[{call.step, call.label, ordinal, group_of(rank, call.axis)}].push_back(
                {rank, call.start_ns, call.end_ns, call.group_size});
        }
    }

    // Per rank and step: the wait behind each rank waited for, to name the largest.
    std::map<std::pair<int, int>, std::map<int, std::int64_t>> waited;  // (rank, step) -> rank -> ns
    for (const auto& [key, arrivals] : instances) {
        if (arrivals.size() < 2) continue;
        if (key.group < 0) {
            const int declared = arrivals.front().group_size;
            if (declared > 0 && arrivals.size() > static_cast<std::size_t>(declared)) continue;
        }
        const Arrival& last = *std::max_element(arrivals.begin(), arrivals.end(), [](const Arrival& a, const Arrival& b) {
            return std::tie(a.start_ns, b.rank) < std::tie(b.start_ns, a.rank);  // ties: lowest rank
        });
        for (const Arrival& a : arrivals) {
            if (a.rank == last.rank) continue;
            const std::int64_t wait = std::clamp(last.start_ns - a.start_ns, std::int64_t{0}, a.end_ns - a.start_ns);
            if (wait <= 0) continue;
            waited[{a.rank, key.step}][last.rank] += wait;
        }
    }
    for (const auto& [rs, by_rank] : waited) {
        RankStepCell& c = cell(rs.first, rs.second);
        std::int64_t total = 0;
        for (const auto& [rank, ns] : by_rank) total += ns;
        c.collective_wait_s = static_cast<double>(total) / kNsPerS;
        c.waited_for_rank = std::max_element(by_rank.begin(), by_rank.end(), [](const auto& a, const auto& b) {
                                return a.second < b.second;  // ties: the lowest rank
                            })->first;
    }
    return m;
}

}  // namespace meshwork::profiler
