// The per rank × step matrix (profiler/analysis/rank_steps.h) on small traces written by hand:
// step figures, and collective wait matched across ranks by (step, label, n-th call), grouped
// by the mesh of the layout the trace carries; and the straggler rule on top of it
// (profiler/analysis/stragglers.h): balanced runs, compute and late stragglers, one-off
// delays, pipeline stages.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/layout/layout_json.h"
#include "core/mesh/device_mesh.h"
#include "profiler/analysis/rank_steps.h"
#include "profiler/analysis/stragglers.h"
#include "profiler/analysis/trace_layout.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_writer.h"
#include "tests/profiler/trace_test_util.h"

using namespace meshwork;
using namespace meshwork::profiler;
using meshwork::test::make_event;
using meshwork::test::temp_path;

namespace {

// One rank's events of one step, relative to the step's start.
struct RankStep {
    int rank = 0;
    int step = 0;
    std::int64_t compute_ns = 0;                          // compute [t0, t0 + compute)
    std::vector<std::pair<std::int64_t, std::int64_t>> comm;  // [start, end) relative to t0
    std::string comm_name = "all_reduce(dp)";
    int group_size = 0;
};

class Trace {
public:
    explicit Trace(const std::string& path, const std::string& layout_json = {}) : w_(TraceWriter::create(path)) {
        TraceRunInfo info;
        info.source = "meshwork-cpu";
        info.layout_json = layout_json;
        w_->set_run_info(info);
    }
    void add(const RankStep& s, std::int64_t t0) {
        auto [c, m] = tracks(s.rank);
        auto k = make_event(c, EventKind::Compute, "gemm", t0, t0 + s.compute_ns);
        k.step = s.step;
        w_->add_event(k);
        for (const auto& [b, e] : s.comm) {
            auto x = make_event(m, EventKind::Communication, s.comm_name, t0 + b, t0 + e);
            x.step = s.step;
            x.group_size = s.group_size;
            w_->add_event(x);
        }
    }
    void add_event(int rank, TraceEvent e) {
        auto [c, m] = tracks(rank);
        e.track = e.kind == EventKind::Communication ? m : c;
        w_->add_event(e);
    }
    // The CPU engine's per-step counter of CPU time inside compute ops, on a track of its own.
    void add_compute_cpu(int rank, std::int64_t at_ns, double cpu_s) {
        auto it = sched_tracks_.find(rank);
        if (it == sched_tracks_.end()) {
            it = sched_tracks_.emplace(rank, w_->add_track({rank, TrackKind::Host, 0, "scheduler"})).first;
        }
        w_->add_counter(rank, it->second, "thread.compute_on_cpu_s", at_ns, cpu_s);
    }
    void close() { w_->close(); }

private:
    std::pair<int, int> tracks(int rank) {
        auto it = tracks_.find(rank);
        if (it == tracks_.end()) {
            const int c = w_->add_track({rank, TrackKind::ComputeStream, 0, "compute"});
            const int m = w_->add_track({rank, TrackKind::CommStream, 0, "comm"});
            it = tracks_.emplace(rank, std::make_pair(c, m)).first;
        }
        return it->second;
    }
    std::unique_ptr<TraceWriter> w_;
    std::map<int, std::pair<int, int>> tracks_;
    std::map<int, int> sched_tracks_;
};

std::size_t index_of(const std::vector<int>& v, int x) {
    return static_cast<std::size_t>(std::find(v.begin(), v.end(), x) - v.begin());
}

const RankStepCell& cell(const RankStepMatrix& m, int rank, int step) {
    return m.at(index_of(m.ranks, rank), index_of(m.steps, step));
}

constexpr double kNs = 1e-9;

// One data-parallel step: rank r idles `lead[r]`, computes `compute[r]`, then all-reduces
// until 50 ns after the last rank has arrived.
void dp_step(Trace& t, int step, std::int64_t t0, const std::vector<std::int64_t>& compute,
             const std::vector<std::int64_t>& lead, const std::vector<int>& ranks, const std::string& name,
             int group_size) {
    std::int64_t last = 0;
    for (std::size_t i = 0; i < ranks.size(); ++i) last = std::max(last, lead[i] + compute[i]);
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const std::int64_t b = t0 + lead[i];
        auto k = make_event(0, EventKind::Compute, "gemm", b, b + compute[i]);
        k.step = step;
        t.add_event(ranks[i], k);
        auto x = make_event(0, EventKind::Communication, name, b + compute[i], t0 + last + 50);
        x.step = step;
        x.group_size = group_size;
        t.add_event(ranks[i], x);
    }
}

// Eight DP ranks over `steps` steps of 10 µs compute with a few percent of jitter; `slow`
// changes one rank's compute or lead in some steps.
struct Slow {
    int rank = -1;
    std::vector<int> steps;
    double compute_factor = 1.0;
    std::int64_t lead_ns = 0;
};

StragglerReport eight_ranks(const std::string& path, int steps, const Slow& slow) {
    Trace t(path);
    const std::vector<int> ranks{0, 1, 2, 3, 4, 5, 6, 7};
    for (int s = 0; s < steps; ++s) {
        std::vector<std::int64_t> compute, lead;
        for (int r : ranks) {
            // Jitter of up to 3 %, different for every rank and step.
            double c = 10000 + 300.0 * static_cast<double>((r * 7 + s * 3) % 5) / 4.0;
            std::int64_t l = 0;
            const bool slowed = r == slow.rank && std::find(slow.steps.begin(), slow.steps.end(), s) != slow.steps.end();
            if (slowed) {
                c *= slow.compute_factor;
                l = slow.lead_ns;
            }
            compute.push_back(static_cast<std::int64_t>(c));
            lead.push_back(l);
        }
        dp_step(t, s, s * 100000, compute, lead, ranks, "all_reduce(dp)", 8);
    }
    t.close();
    return find_stragglers(compute_rank_steps(TraceReader::open(path)), std::nullopt);
}

}  // namespace

class RankStepsTest : public QObject {
    Q_OBJECT

private slots:
    // Three ranks, two steps; each computes, then all-reduces until the last has arrived.
    // Rank 2 computes longest in step 0, rank 0 in step 1: the others wait for it.
    void step_figures_and_wait_for_the_last_rank() {
        const auto path = temp_path(dir_, "three.sqlite");
        Trace t(path);
        const std::int64_t compute[2][3] = {{100, 120, 300}, {500, 200, 200}};
        for (int step = 0; step < 2; ++step) {
            const std::int64_t t0 = step * 10000;
            const std::int64_t last = *std::max_element(compute[step], compute[step] + 3);
            for (int r = 0; r < 3; ++r) {
                // Each leaves the all-reduce 50 ns after the last one entered.
                t.add({r, step, compute[step][r], {{compute[step][r], last + 50}}, "all_reduce(dp)", 3}, t0);
            }
        }
        t.close();
        const auto m = compute_rank_steps(TraceReader::open(path));
        QCOMPARE(m.ranks, (std::vector<int>{0, 1, 2}));
        QCOMPARE(m.steps, (std::vector<int>{0, 1}));
        QCOMPARE(m.cells.size(), std::size_t{6});

        const auto& a = cell(m, 0, 0);
        QVERIFY(a.present);
        QCOMPARE(a.step_s, 350 * kNs);
        QCOMPARE(a.compute_s, 100 * kNs);
        QCOMPARE(a.exposed_comm_s, 250 * kNs);
        QCOMPARE(a.collective_wait_s, 200 * kNs);
        QCOMPARE(a.waited_for_rank, 2);
        QCOMPARE(cell(m, 1, 0).collective_wait_s, 180 * kNs);
        QCOMPARE(cell(m, 1, 0).waited_for_rank, 2);
        // The last to arrive waits for nobody.
        QCOMPARE(cell(m, 2, 0).collective_wait_s, 0.0);
        QCOMPARE(cell(m, 2, 0).waited_for_rank, -1);

        QCOMPARE(cell(m, 0, 1).waited_for_rank, -1);
        QCOMPARE(cell(m, 1, 1).collective_wait_s, 300 * kNs);
        QCOMPARE(cell(m, 1, 1).waited_for_rank, 0);
        QCOMPARE(cell(m, 2, 1).waited_for_rank, 0);
    }

    // Two calls of the same collective in a step are matched by their order on each rank,
    // not by time: the second call waits for whoever is last to the second call.
    void calls_are_matched_by_their_order_on_each_rank() {
        const auto path = temp_path(dir_, "order.sqlite");
        Trace t(path);
        // Rank 0: calls at 100 and 400; rank 1: at 300 and 450 (it is late to the first).
        t.add({0, 0, 100, {{100, 350}, {400, 500}}, "all_reduce(dp)", 2}, 0);
        t.add({1, 0, 300, {{300, 350}, {450, 500}}, "all_reduce(dp)", 2}, 0);
        t.close();
        const auto m = compute_rank_steps(TraceReader::open(path));
        // First call: rank 0 waits 200 for rank 1; second: rank 0 waits 50 for rank 1.
        QCOMPARE(cell(m, 0, 0).collective_wait_s, 250 * kNs);
        QCOMPARE(cell(m, 0, 0).waited_for_rank, 1);
        QCOMPARE(cell(m, 1, 0).collective_wait_s, 0.0);
    }

    // A wait can be no longer than the rank spent in the call (clock skew between the ranks of
    // a merged trace would otherwise show as waits longer than the call).
    void wait_is_at_most_the_time_in_the_call() {
        const auto path = temp_path(dir_, "clamp.sqlite");
        Trace t(path);
        t.add({0, 0, 100, {{100, 130}}, "all_gather(dp)", 2}, 0);
        t.add({1, 0, 400, {{400, 430}}, "all_gather(dp)", 2}, 0);
        t.close();
        const auto m = compute_rank_steps(TraceReader::open(path));
        QCOMPARE(cell(m, 0, 0).collective_wait_s, 30 * kNs);
        QCOMPARE(cell(m, 0, 0).waited_for_rank, 1);
    }

    // TP groups {0,1} and {2,3} of a TP2 × PP2 layout all-reduce at the same time: with the
    // layout in the trace, each rank waits for its own group's last rank only.
    void groups_come_from_the_layouts_mesh() {
        const Layout layout = load_layout(std::string(MESHWORK_RESOURCES_DIR) + "/layouts/tiny-cpu.json");
        const DeviceMesh mesh = layout.mesh();
        QCOMPARE(mesh.group_of(0, Axis::Tp), (std::vector<int>{0, 1}));
        QCOMPARE(mesh.group_of(2, Axis::Tp), (std::vector<int>{2, 3}));
        const std::int64_t compute[4] = {100, 200, 150, 600};
        auto write = [&](const std::string& path, const std::string& layout_json) {
            Trace t(path, layout_json);
            for (int r = 0; r < 4; ++r) {
                const std::int64_t group_last = r < 2 ? 200 : 600;
                t.add({r, 0, compute[r], {{compute[r], group_last + 10}}, "all_reduce(tp)", 2}, 0);
            }
            t.close();
        };
        const auto with = temp_path(dir_, "tp-layout.sqlite");
        write(with, layout_to_json(layout).dump());
        const auto m = compute_rank_steps(TraceReader::open(with));
        QCOMPARE(cell(m, 0, 0).collective_wait_s, 100 * kNs);
        QCOMPARE(cell(m, 0, 0).waited_for_rank, 1);
        QCOMPARE(cell(m, 1, 0).waited_for_rank, -1);
        QCOMPARE(cell(m, 2, 0).collective_wait_s, 450 * kNs);
        QCOMPARE(cell(m, 2, 0).waited_for_rank, 3);

        // Without a layout the four arrivals of a 2-rank collective mix two groups: no wait is
        // made up for them.
        const auto without = temp_path(dir_, "tp-no-layout.sqlite");
        write(without, "");
        const auto n = compute_rank_steps(TraceReader::open(without));
        for (int r = 0; r < 4; ++r) {
            QCOMPARE(cell(n, r, 0).collective_wait_s, 0.0);
            QCOMPARE(cell(n, r, 0).waited_for_rank, -1);
        }
    }

    // Imported traces name collectives by NCCL kernel, whose algorithm and protocol suffixes
    // may differ between ranks: the collective kind identifies the call. Send and receive are
    // pipeline dependencies, not collective waits.
    void nccl_kernels_match_by_kind_and_point_to_point_is_left_out() {
        const auto path = temp_path(dir_, "nccl.sqlite");
        Trace t(path);
        auto ev = [](EventKind kind, const std::string& name, std::int64_t b, std::int64_t e) {
            auto x = make_event(0, kind, name, b, e);
            x.step = 3;
            return x;
        };
        t.add_event(0, ev(EventKind::Compute, "gemm", 0, 100));
        t.add_event(0, ev(EventKind::Communication, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 100, 520));
        t.add_event(0, ev(EventKind::Communication, "ncclDevKernel_SendRecv", 600, 900));
        t.add_event(1, ev(EventKind::Compute, "gemm", 0, 500));
        t.add_event(1, ev(EventKind::Communication, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL128", 500, 520));
        t.add_event(1, ev(EventKind::Communication, "ncclDevKernel_SendRecv", 890, 900));
        t.close();
        const auto m = compute_rank_steps(TraceReader::open(path));
        QCOMPARE(m.steps, (std::vector<int>{3}));
        QCOMPARE(cell(m, 0, 3).collective_wait_s, 400 * kNs);
        QCOMPARE(cell(m, 0, 3).waited_for_rank, 1);
        QCOMPARE(cell(m, 1, 3).collective_wait_s, 0.0);
    }

    // A trace whose events carry no step: every rank is a row, there are no steps and no cells.
    void no_steps_no_cells() {
        const auto path = temp_path(dir_, "nosteps.sqlite");
        Trace t(path);
        t.add_event(0, make_event(0, EventKind::Compute, "gemm", 0, 100));
        t.add_event(4, make_event(0, EventKind::Compute, "gemm", 0, 100));
        t.close();
        const auto m = compute_rank_steps(TraceReader::open(path));
        QCOMPARE(m.ranks, (std::vector<int>{0, 4}));
        QVERIFY(m.steps.empty());
        QVERIFY(m.cells.empty());
    }

    // A rank absent from a step (it wrote nothing then) has an empty cell.
    void absent_rank_has_an_empty_cell() {
        const auto path = temp_path(dir_, "absent.sqlite");
        Trace t(path);
        t.add({0, 0, 100, {}, "all_reduce(dp)", 2}, 0);
        t.add({0, 1, 100, {}, "all_reduce(dp)", 2}, 1000);
        t.add({1, 1, 100, {}, "all_reduce(dp)", 2}, 1000);
        t.close();
        const auto m = compute_rank_steps(TraceReader::open(path));
        QVERIFY(!cell(m, 1, 0).present);
        QCOMPARE(cell(m, 1, 0).step_s, 0.0);
        QVERIFY(cell(m, 1, 1).present);
        QCOMPARE(cell(m, 1, 1).step_s, 100 * kNs);
    }

    // Balanced: every rank computes within 3 % of the others; whoever is last to each
    // all-reduce keeps the others waiting a little, and nobody is named.
    void balanced_run_has_no_stragglers() {
        const auto r = eight_ranks(temp_path(dir_, "balanced.sqlite"), 6, {});
        QCOMPARE(r.steps_checked, (std::vector<int>{1, 2, 3, 4, 5}));  // step 0 is warm-up
        QVERIFY(r.stragglers.empty());
        QVERIFY(r.transient.empty());
    }

    // Rank 5 computes twice as long in every step: the only straggler, in every step judged.
    void slow_compute_is_named_in_every_step() {
        const auto r = eight_ranks(temp_path(dir_, "slow5.sqlite"), 6, {5, {0, 1, 2, 3, 4, 5}, 2.0, 0});
        QCOMPARE(r.stragglers.size(), std::size_t{5});
        for (std::size_t i = 0; i < r.stragglers.size(); ++i) {
            const Straggler& st = r.stragglers[i];
            QCOMPARE(st.rank, 5);
            QCOMPARE(st.step, static_cast<int>(i) + 1);
            QCOMPARE(st.reason, StragglerReason::Compute);
            QVERIFY2(std::abs(st.slowdown - 2.0) < 0.1, std::to_string(st.slowdown).c_str());
            QCOMPARE(st.peers, 7);
            QCOMPARE(st.waited_by, 7);
            QVERIFY(st.peer_wait_s > 9000 * kNs);
        }
        QVERIFY(r.transient.empty());
    }

    // Ranks sharing a host's cores: rank 5's compute spans only 1.1x its peers' in wall time
    // (the peers' spans also hold their waits for a core), but its thread spent twice their
    // CPU time computing, and it arrives last. With every rank's CPU-time counters the
    // slowdown is judged on CPU time; without them on one rank, on wall time as before.
    void cpu_time_decides_the_slowdown_on_a_shared_host() {
        for (const bool all_recorded : {true, false}) {
            const std::string path = temp_path(dir_, all_recorded ? "cpu.sqlite" : "cpu_partial.sqlite");
            Trace t(path);
            const std::vector<int> ranks{0, 1, 2, 3, 4, 5, 6, 7};
            t.add_compute_cpu(0, -5, 9.0);  // before the rank's first step: belongs to none
            for (int s = 0; s < 4; ++s) {
                const std::int64_t t0 = s * 100000;
                std::vector<std::int64_t> compute, lead;
                for (int r : ranks) {
                    compute.push_back(r == 5 ? 11000 : 10000 + 10 * r);
                    lead.push_back(0);
                }
                dp_step(t, s, t0, compute, lead, ranks, "all_reduce(dp)", 8);
                for (int r : ranks) {
                    if (!all_recorded && r == 3) continue;
                    t.add_compute_cpu(r, t0 + 20000, (r == 5 ? 4000.0 : 2000.0 + r) * kNs);
                }
            }
            t.close();
            const auto m = compute_rank_steps(TraceReader::open(path));
            QCOMPARE(cell(m, 5, 2).compute_on_cpu_s, 4000 * kNs);
            QCOMPARE(cell(m, 0, 0).compute_on_cpu_s, 2000 * kNs);  // the sample before step 0 is not it
            QCOMPARE(cell(m, 3, 1).compute_on_cpu_s, all_recorded ? 2003 * kNs : -1.0);
            const auto r = find_stragglers(m, std::nullopt);
            if (!all_recorded) {
                // 1.1x on wall time is not a compute straggler, and a net wait of 9 % of the
                // step is not "late" (20 %): nobody is named.
                QVERIFY(r.stragglers.empty() && r.transient.empty());
                continue;
            }
            QCOMPARE(r.stragglers.size(), std::size_t{3});
            for (const auto& st : r.stragglers) {
                QCOMPARE(st.rank, 5);
                QCOMPARE(st.reason, StragglerReason::Compute);
                QVERIFY(st.slowdown_on_cpu);
                QVERIFY2(std::abs(st.slowdown - 2.0) < 0.01, std::to_string(st.slowdown).c_str());
            }
        }
    }

    // A rank that computes as the others do but starts late every step (a host or input
    // stall): named, with reason "late".
    void late_arrival_is_named_late() {
        const auto r = eight_ranks(temp_path(dir_, "late.sqlite"), 4, {2, {0, 1, 2, 3}, 1.0, 8000});
        QCOMPARE(r.stragglers.size(), std::size_t{3});
        for (const auto& st : r.stragglers) {
            QCOMPARE(st.rank, 2);
            QCOMPARE(st.reason, StragglerReason::Late);
            QVERIFY(st.slowdown < 1.1);
        }
    }

    // Slow in one step of five judged: a one-off delay, not a rank that holds the job back.
    void one_off_delay_is_transient() {
        const auto r = eight_ranks(temp_path(dir_, "once.sqlite"), 6, {3, {4}, 3.0, 0});
        QVERIFY(r.stragglers.empty());
        QCOMPARE(r.transient.size(), std::size_t{1});
        QCOMPARE(r.transient[0].rank, 3);
        QCOMPARE(r.transient[0].step, 4);
        // The warm-up step is not judged at all.
        const auto w = eight_ranks(temp_path(dir_, "warmup.sqlite"), 6, {3, {0}, 3.0, 0});
        QVERIFY(w.stragglers.empty() && w.transient.empty());
    }

    // Two pipeline stages of two DP ranks each (PP2 × DP2): the last stage computes twice as
    // long as the first (it holds the head) and the first waits for it in the step-closing
    // world all-reduce. That is the pipeline, not a straggler: ranks are compared within their
    // stage. A rank twice as slow as its stage peer is still found.
    void pipeline_stages_are_compared_within_themselves() {
        Layout layout = load_layout(std::string(MESHWORK_RESOURCES_DIR) + "/layouts/tiny-cpu.json");
        layout.parallel.mesh.tp = 1;
        layout.parallel.mesh.dp = 2;
        const DeviceMesh mesh = layout.mesh();
        QCOMPARE(mesh.coords(1).pp, 0);
        QCOMPARE(mesh.coords(2).pp, 1);
        QCOMPARE(mesh.group_of(2, Axis::Dp), (std::vector<int>{2, 3}));
        auto write = [&](const std::string& path, double rank3_factor) {
            Trace t(path, layout_to_json(layout).dump());
            for (int s = 0; s < 4; ++s) {
                const std::int64_t t0 = s * 100000;
                const std::int64_t c3 = static_cast<std::int64_t>(20000 * rank3_factor);
                dp_step(t, s, t0, {10000, 10100}, {0, 0}, {0, 1}, "all_reduce(dp)", 2);
                dp_step(t, s, t0, {20000, c3}, {0, 0}, {2, 3}, "all_reduce(dp)", 2);
                // Each stage arrives at the world all-reduce as its DP all-reduce ends.
                const std::int64_t last_stage_done = t0 + std::max<std::int64_t>(20000, c3) + 50;
                const std::int64_t end = last_stage_done + 50;
                for (int r = 0; r < 4; ++r) {
                    const std::int64_t arrive = r < 2 ? t0 + 10150 : last_stage_done;
                    auto x = make_event(0, EventKind::Communication, "all_reduce(world)", arrive, end + 10);
                    x.step = s;
                    x.group_size = 4;
                    t.add_event(r, x);
                }
            }
            t.close();
        };
        const auto even = temp_path(dir_, "pp-even.sqlite");
        write(even, 1.0);
        const auto trace = TraceReader::open(even);
        const auto m = compute_rank_steps(trace);
        QCOMPARE(cell(m, 0, 1).waited_for_rank / 2, 1);  // the first stage waits for the last
        QVERIFY(cell(m, 0, 1).collective_wait_s > 9000 * kNs);
        const auto r = find_stragglers(m, trace_layout(trace)->mesh());
        QVERIFY(r.stragglers.empty());
        QVERIFY(r.transient.empty());

        const auto slow = temp_path(dir_, "pp-slow3.sqlite");
        write(slow, 2.0);
        const auto t2 = TraceReader::open(slow);
        const auto s = find_stragglers(compute_rank_steps(t2), trace_layout(t2)->mesh());
        QCOMPARE(s.stragglers.size(), std::size_t{3});
        for (const auto& st : s.stragglers) {
            QCOMPARE(st.rank, 3);
            QCOMPARE(st.peers, 1);
            QCOMPARE(st.reason, StragglerReason::Compute);
            QVERIFY(std::abs(st.slowdown - 2.0) < 0.01);
        }
    }

private:
    QTemporaryDir dir_;
};

QTEST_GUILESS_MAIN(RankStepsTest)
#include "tst_rank_steps.moc"
