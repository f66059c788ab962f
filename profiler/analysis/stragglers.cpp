// Straggler rule (docs/profiler.md, "Stragglers"). A rank holds the job back in a step when
// the ranks it shares collectives with sit waiting for it; only then does its being slow
// cost anything. So, per step, among the ranks of one pipeline stage (its peers: stages
// legitimately differ in work, the first holding the embedding and the last the head, and
// the p2p waits between stages are the pipeline's bubble, which rank_steps leaves out):
//
//   held back:  at least half of its peers waited longest for it (waited_for_rank), and
//   material:   its peers' median collective wait, less its own collective wait, is at
//               least kMaterialWait of the stage's median step time.
//
// Its reason is then
//   compute:    its compute is at least kComputeSlowdown × the median of its peers', else
//   late:       its compute is typical but it still arrives last, by a wide margin: the
//               net wait above is at least kLateWait of the step (a host, input or link
//               stall, which the compute figures cannot show).
//
// Compute is compared on CPU time when every rank of the stage recorded it in the step (the
// CPU engine, rank_steps.h): where ranks share a host's cores, a rank's compute in wall time
// also holds its waits for a core, which depend on what the others run meanwhile. With 8
// ranks on 2 cores and one rank slowed 2x, the slowed rank's wall-clock compute came out
// 0.5-1.6x its peers' from step to step, its CPU time 1.75-2.0x (docs/profiler.md).
//
// Why these: in a balanced run somebody is always last to every collective, so the rank
// waited for changes from call to call, and every rank waits about as much as it makes
// others wait; with two ranks to a group (a TP pair) each is always the other's "longest
// wait". A straggler instead makes the others wait while it waits for nobody: hence the
// wait net of its own. A majority of peers agreeing on one rank, and a net wait that is a
// material share of the step, is what a real straggler produces; the slowdown threshold
// keeps ordinary jitter of compute (a few percent) from being called a compute straggler,
// and the stricter wait asked of "late" keeps a one-off scheduling hiccup of a shared host
// from being called one. The first step of a trace of
// several is warm-up (allocation, first touch, lazy initialisation: warmup_steps.h, its default) and is
// not judged.
//
// A rank holds the job back when it does so again and again: in at least kPersistent of the
// steps judged. A rank that did in fewer steps is listed apart as transient: in a single
// step a real straggler and a thread the host's scheduler left waiting for 20 ms look the
// same, and only the repetition tells them apart. A trace of one judged step (a prediction)
// makes every rank that held back its peers in it a straggler.
#include "profiler/analysis/stragglers.h"

#include <algorithm>
#include <map>
#include <utility>
#include <tuple>

#include "profiler/analysis/warmup_steps.h"

namespace meshwork::profiler {

namespace {

constexpr double kMaterialWait = 0.05;     // of the step time
constexpr double kComputeSlowdown = 1.2;   // × the peers' median compute
constexpr double kLateWait = 0.20;         // of the step time
constexpr double kPersistent = 0.5;        // of the steps judged

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    const auto mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
    const double hi = v[mid];
    if (v.size() % 2 == 1) return hi;
    const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
    return (lo + hi) / 2;
}

// The pipeline stage of a rank, or 0 when the mesh does not hold it.
int stage_of(int rank, const std::optional<DeviceMesh>& mesh) {
    if (!mesh || rank < 0 || rank >= mesh->world_size()) return 0;
    return mesh->coords(rank).pp;
}

}  // namespace

const char* to_string(StragglerReason reason) {
    return reason == StragglerReason::Compute ? "compute" : "late";
}

StragglerReport find_stragglers(const RankStepMatrix& m, const std::optional<DeviceMesh>& mesh) {
    StragglerReport report;
    std::map<int, std::vector<std::size_t>> stages;  // stage -> rank indices
    for (std::size_t i = 0; i < m.ranks.size(); ++i) stages[stage_of(m.ranks[i], mesh)].push_back(i);

    const std::size_t first = warmup_items(m.steps.size(), kDefaultWarmupSteps);
    for (std::size_t s = first; s < m.steps.size(); ++s) {
        report.steps_checked.push_back(m.steps[s]);
        for (const auto& [stage, members] : stages) {
            std::vector<std::size_t> present;
            for (std::size_t i : members) {
                if (m.at(i, s).present) present.push_back(i);
            }
            if (present.size() < 2) continue;
            std::vector<double> step_times;
            for (std::size_t i : present) step_times.push_back(m.at(i, s).step_s);
            const double step_s = median(step_times);
            if (!(step_s > 0)) continue;
            const bool on_cpu = std::all_of(present.begin(), present.end(),
                                            [&](std::size_t i) { return m.at(i, s).compute_on_cpu_s >= 0; });
            auto compute_of = [on_cpu](const RankStepCell& c) { return on_cpu ? c.compute_on_cpu_s : c.compute_s; };
            for (std::size_t i : present) {
                const RankStepCell& me = m.at(i, s);
                std::vector<double> compute, wait;
                int waited_by = 0;
                for (std::size_t j : present) {
                    if (j == i) continue;
                    const RankStepCell& peer = m.at(j, s);
                    compute.push_back(compute_of(peer));
                    wait.push_back(peer.collective_wait_s);
                    if (peer.waited_for_rank == m.ranks[i]) ++waited_by;
                }
                const int peers = static_cast<int>(compute.size());
                const double peer_wait = median(wait);
                const double net_wait = peer_wait - me.collective_wait_s;
                if (2 * waited_by < peers || net_wait < kMaterialWait * step_s) continue;
                const double peer_compute = median(compute);
                Straggler st;
                st.rank = m.ranks[i];
                st.step = m.steps[s];
                st.slowdown = peer_compute > 0 ? compute_of(me) / peer_compute : 0;
                st.slowdown_on_cpu = on_cpu;
                st.peers = peers;
                st.waited_by = waited_by;
                st.peer_wait_s = peer_wait;
                st.own_wait_s = me.collective_wait_s;
                st.step_s = step_s;
                if (peer_compute > 0 && st.slowdown >= kComputeSlowdown) {
                    st.reason = StragglerReason::Compute;
                } else if (net_wait >= kLateWait * step_s) {
                    st.reason = StragglerReason::Late;
                } else {
                    continue;
                }
                report.stragglers.push_back(st);
            }
        }
    }
    std::map<int, std::size_t> flagged_steps;  // rank -> steps in which it held its peers back
    for (const Straggler& st : report.stragglers) ++flagged_steps[st.rank];
    const double needed = kPersistent * static_cast<double>(report.steps_checked.size());
    std::vector<Straggler> persistent;
    for (Straggler& st : report.stragglers) {
        (static_cast<double>(flagged_steps[st.rank]) >= needed ? persistent : report.transient).push_back(st);
    }
    report.stragglers = std::move(persistent);
    for (auto* list : {&report.stragglers, &report.transient}) {
        std::sort(list->begin(), list->end(), [](const Straggler& a, const Straggler& b) {
            return std::tie(a.step, a.rank) < std::tie(b.step, b.rank);
        });
    }
    return report;
}

}  // namespace meshwork::profiler
