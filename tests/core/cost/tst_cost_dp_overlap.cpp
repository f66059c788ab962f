// Data-parallel overlap as Megatron-LM runs it (core/cost/dp_overlap.h): per model chunk
// gradient reductions launched during the backward (--overlap-grad-reduce), parameter gathers
// ahead of the first forwards (--overlap-param-gather); the closed-form estimate and the
// simulator follow the same rules.
#include <QtTest>

#include <map>

#include "core/common/error.h"
#include "core/cost/block_cost.h"
#include "core/cost/cost_model.h"
#include "core/cost/dp_overlap.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_overrides.h"
#include "core/layout/layout_validate.h"
#include "core/sim/simulate.h"
#include "tests/core/cost/cost_test_util.h"
#include "tests/support/recording_sink.h"

using namespace meshwork;
using namespace meshwork::cost;
using namespace meshwork::test;

namespace {

// Llama 3 70B, TP8 PP4 over 16 DGX-H100 nodes' worth of data parallelism, short sequences:
// a data-parallel reduction much longer than one micro-batch's backward, where overlap matters.
Layout dp_heavy(Schedule schedule, int vpp, bool overlap) {
    Layout l = make_layout(load_model("llama3-70b"), "dgx-h100", 8, 4, 16, 1, 16 * 16, 2048);
    l.training.schedule = schedule;
    l.parallel.vpp = vpp;
    l.parallel.sequence_parallel = true;
    l.training.zero_stage = 0;  // all-reduce, no parameter gather: the reduction alone
    l.parallel.overlap_grad_reduce = overlap;
    l.parallel.overlap_param_gather = overlap;
    return l;
}

Estimate estimate(const Layout& l) {
    require_valid_layout(l, "test");
    Estimate e;
    CostModel(l).estimate(l, e);
    return e;
}

}  // namespace

class TestCostDpOverlap : public QObject {
    Q_OBJECT
private slots:
    // One communicator: collectives run one after another from their launch; what runs before
    // the rank's last backward end is hidden and slows its compute by u × that time.
    void queue_closed_forms() {
        const std::vector<DpCollective> a{{-10, 3}, {-5, 4}, {0, 2}};
        std::vector<double> starts;
        const DpQueue q = run_dp_queue(a, 0.0, &starts);
        QCOMPARE(starts, (std::vector<double>{-10, -5, 0}));
        QVERIFY(near(q.finish_s, 2));
        QVERIFY(near(q.hidden_s, 7));
        QVERIFY(near(q.tail_s, 2));
        QVERIFY(near(run_dp_queue(a, 0.5).tail_s, 3.5));  // u·hidden outlasts the last one
        // Back to back: the second waits for the first, which crosses the end.
        const std::vector<DpCollective> b{{-3, 5}, {-2, 1}};
        const DpQueue qb = run_dp_queue(b, 0.0, &starts);
        QCOMPARE(starts, (std::vector<double>{-3, 2}));
        QVERIFY(near(qb.finish_s, 3));
        QVERIFY(near(qb.hidden_s, 3));
        QCOMPARE(run_dp_queue({}, 0.3).tail_s, 0.0);
        // All hidden: no tail beyond the interference.
        QVERIFY(near(run_dp_queue(std::vector<DpCollective>{{-10, 4}}, 0.1).tail_s, 0.4));

        // Buckets ready every window/n: the last bucket alone, or no gap at all.
        const DpCollective fast = buckets_in_last_backward(8, 8, 4);  // bucket 2, every 2
        QVERIFY(near(fast.ready_s + fast.duration_s, 2));
        const DpCollective slow = buckets_in_last_backward(8, 2, 4);  // 8 − 3 × 0.5
        QVERIFY(near(slow.ready_s + slow.duration_s, 6.5));
        // Megatron's default bucket: max(40M, 1M × dp) parameters.
        QCOMPARE(ddp_bucket_count(100e6, 8), 3);
        QCOMPARE(ddp_bucket_count(100e6, 64), 2);
        QCOMPARE(ddp_bucket_count(0, 8), 1);
    }

    // The same job: the interleaved schedule with 5 chunks launches each chunk's reduction
    // during the backwards that follow, 1F1B only buckets during the first stage's last
    // backward: the many-chunk layout exposes less data-parallel time; without overlap both
    // expose more.
    void many_chunks_expose_less_than_one() {
        const Estimate one = estimate(dp_heavy(Schedule::OneFOneB, 1, true));
        const Estimate five = estimate(dp_heavy(Schedule::Interleaved, 5, true));
        const Estimate five_off = estimate(dp_heavy(Schedule::Interleaved, 5, false));
        const Estimate one_off = estimate(dp_heavy(Schedule::OneFOneB, 1, false));
        qInfo("exposed DP: 1F1B %.4f s (off %.4f), interleaved v5 %.4f s (off %.4f); reduction %.4f s",
              one.time.dp_comm_s, one_off.time.dp_comm_s, five.time.dp_comm_s, five_off.time.dp_comm_s,
              five.time.dp_comm_total_s);
        QVERIFY(five.time.dp_comm_s < 0.8 * one.time.dp_comm_s);
        QVERIFY(five.time.dp_comm_s < five_off.time.dp_comm_s);
        QVERIFY(one.time.dp_comm_s <= one_off.time.dp_comm_s);
        // The reduction is the same traffic either way (per chunk: more latency terms).
        QVERIFY(five.time.dp_comm_total_s >= one.time.dp_comm_total_s);
    }

    // PP2 × 2 chunks × 2 micro-batches, all-reduce: the exposed time by hand from the chunk
    // costs. Rank 0's chunk 1 ends its last backward 2 backwards (chunk 0's) before the rank
    // ends, rank 1 launches r = 1 backward later; chunk 0 at the end; rank 1 has the drain
    // (rank 0's last chunk backward and its send) as slack.
    void exposed_time_by_hand() {
        Layout l = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 2, 2, 1, 4, 4096);
        l.training.schedule = Schedule::Interleaved;
        l.parallel.vpp = 2;
        l.training.zero_stage = 0;
        const Estimate e = estimate(l);
        const CostModel model(l);
        LayoutCosts c;
        model.prepare(l.parallel, l.training, c);
        QCOMPARE(c.micro_batches, 2);
        QVERIFY(c.dp_interference > 0);  // dp inside one node: NVLink's figure
        auto chunk = [&](int r, int j) { return model.chunk_cost(c, l.placement, j * 2 + r); };
        auto reduce = [&](int r, int j) {
            const ChunkCost cc = chunk(r, j);
            return grad_sync_cost(c, cc.dense_params, cc.expert_params).reduce_s;
        };
        auto bwd = [&](int r, int j) { return chunk(r, j).bwd.total_s(); };
        auto tail = [&](int r, double window) {
            const double start1 = -c.dp_overlap * window;
            const double end1 = start1 + reduce(r, 1);
            const double start0 = std::max(0.0, end1);
            const double end0 = start0 + reduce(r, 0);
            const double hidden = std::max(0.0, std::min(end1, 0.0) - start1);
            return std::max({0.0, end0, c.dp_interference * hidden});
        };
        const double tail0 = tail(0, 2 * (bwd(0, 0) + c.p2p_s));
        const double tail1 = tail(1, 1 * (bwd(1, 0) + c.p2p_s));
        const double slack1 = (bwd(0, 0) + bwd(0, 1)) / 2 + c.p2p_s;
        const double expected = std::max({0.0, tail0, tail1 - slack1});
        qInfo("exposed DP %.6f s, by hand %.6f s (reduction per chunk %.6f s)", e.time.dp_comm_s, expected, reduce(0, 1));
        QVERIFY(expected > 0);
        QVERIFY(near(e.time.dp_comm_s, expected));
    }

    // Simulator and estimate: the same rules on a simulated timeline. The simulated trace
    // shows each chunk's reduction where it ran: on every rank one per chunk, one after
    // another, the first beside the rank's backwards.
    void simulator_agrees_and_shows_each_chunk() {
        const Layout l = dp_heavy(Schedule::Interleaved, 5, true);
        const Estimate est = estimate(l);
        RecordingSink sink;
        const SimulationResult sim = simulate_layout(l, &sink);
        const double step_err = sim.estimate.step_time_s / est.step_time_s - 1;
        qInfo("step: estimate %.4f s, simulation %.4f s (%+.2f %%); exposed DP %.4f / %.4f s", est.step_time_s,
              sim.estimate.step_time_s, 100 * step_err, est.time.dp_comm_s, sim.estimate.time.dp_comm_s);
        QVERIFY(std::fabs(step_err) < 0.03);
        QVERIFY(std::fabs(sim.estimate.time.dp_comm_s - est.time.dp_comm_s) < 0.10 * est.time.dp_comm_s + 1e-3);

        std::map<int, std::vector<const TraceEvent*>> reductions;  // by rank
        std::map<int, std::int64_t> last_backward_end;
        for (const TraceEvent& ev : sink.events) {
            if (ev.name.rfind("all_reduce(dp).grads.chunk", 0) == 0) reductions[ev.rank].push_back(&ev);
            if (ev.kind == EventKind::Compute && ev.name.find(".bwd") != std::string::npos) {
                last_backward_end[ev.rank] = std::max(last_backward_end[ev.rank], ev.end_ns);
            }
        }
        QCOMPARE(static_cast<int>(reductions.size()), 4);
        for (const auto& [rank, evs] : reductions) {
            QCOMPARE(static_cast<int>(evs.size()), 5);
            QCOMPARE(evs.front()->name, std::string("all_reduce(dp).grads.chunk4"));
            QCOMPARE(evs.back()->name, std::string("all_reduce(dp).grads.chunk0"));
            QVERIFY(evs.front()->start_ns < last_backward_end[rank]);  // beside the backward
            for (std::size_t i = 1; i < evs.size(); ++i) QVERIFY(evs[i]->start_ns >= evs[i - 1]->end_ns);
            QCOMPARE(evs.front()->group_size, 16);
        }
    }

    // The layout fields: defaults on, written only when off, read back; the gather without
    // the reduction is refused as Megatron-LM refuses it.
    void layout_fields() {
        Layout l = dp_heavy(Schedule::OneFOneB, 1, true);
        QVERIFY(l.parallel.overlap_grad_reduce && l.parallel.overlap_param_gather);
        QVERIFY(!layout_to_json(l)["parallel"].contains("overlap_grad_reduce"));
        l.parallel.overlap_grad_reduce = false;
        l.parallel.overlap_param_gather = false;
        const nlohmann::json j = layout_to_json(l);
        QCOMPARE(j["parallel"]["overlap_grad_reduce"].get<bool>(), false);
        QCOMPARE(layout_from_json(j, "t.json").parallel, l.parallel);
        nlohmann::json only_reduce = j;
        only_reduce["parallel"].erase("overlap_param_gather");
        QVERIFY(!layout_from_json(only_reduce, "t.json").parallel.overlap_param_gather);
        l.parallel.overlap_param_gather = true;
        const ValidationResult v = validate_layout(l, "t.json");
        bool named = false;
        for (const auto& d : v.errors) named |= d.field == "parallel.overlap_param_gather";
        QVERIFY(named);
        // The command-line flags: on/off, anything else names the flag.
        LayoutOverrides o;
        o.model = "llama3-8b";
        o.gpus = 8;
        o.overlap_grad_reduce = "off";
        const Layout off = build_layout(std::nullopt, o);
        QVERIFY(!off.parallel.overlap_grad_reduce && !off.parallel.overlap_param_gather);
        o.overlap_grad_reduce = "maybe";
        try {
            (void)build_layout(std::nullopt, o);
            QFAIL("an on/off flag took 'maybe'");
        } catch (const InputError& e) {
            QCOMPARE(e.issues().front().field, std::string("--overlap-grad-reduce"));
        }
    }
};

QTEST_GUILESS_MAIN(TestCostDpOverlap)
#include "tst_cost_dp_overlap.moc"
