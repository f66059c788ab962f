// Communication beside compute (core/cost/comm_overlap.h): tiled TP overlap (Transformer
// Engine's userbuffers, Megatron-LM's --tp-comm-overlap) and the interference of a running
// collective with the compute it overlaps, both as Calculon models them
// (calculon-ai/calculon caa4b11f, calculon/llm/layers.py:549-592).
#include <QtTest>

#include "core/common/error.h"
#include "core/cost/collective_time.h"
#include "core/cost/comm_overlap.h"
#include "core/cost/cost_model.h"
#include "core/cost/gemm_shapes.h"
#include "core/cost/kernel_time.h"
#include "core/cost/model_profile.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_validate.h"
#include "tests/core/cost/cost_test_util.h"

using namespace meshwork;
using namespace meshwork::cost;
using namespace meshwork::test;

namespace {

// Llama 3 70B, TP8 with sequence parallelism in one DGX-H100 node.
Layout tp8_layout(TpOverlap overlap, bool sp = true) {
    Layout l = make_layout(load_model("llama3-70b"), "dgx-h100", 8, 1, 1, 1, 8, 8192);
    l.parallel.sequence_parallel = sp;
    l.parallel.tp_comm_overlap = overlap;
    l.training.recompute = Recompute::Full;
    return l;
}

LayoutCosts prepared(const Layout& l) {
    LayoutCosts c;
    CostModel(l).prepare(l.parallel, l.training, c);
    return c;
}

}  // namespace

class TestCostOverlap : public QObject {
    Q_OBJECT
private slots:
    // max(comm, compute + u·comm): the compute runs at 1 − u beside the transfer.
    void overlapped_closed_form() {
        QVERIFY(near(overlapped_s(10, 4, 0.15), 10.6));  // compute-bound: + u·comm
        QVERIFY(near(overlapped_s(2, 4, 0.5), 4.0));     // comm-bound: the transfer
        QVERIFY(near(overlapped_s(3, 0, 0.5), 3.0));
        QVERIFY(near(overlapped_s(3, 2, 0.0), 3.0));     // no interference: perfect overlap
        QVERIFY(near(overlapped_s(1, 2, 0.0), 2.0));
    }

    // Calculon's tiling: the first GEMM tile alone, tiles − 1 overlapped pairs, plus one
    // exposed transfer tile for "pipe".
    void tiled_collective_closed_form() {
        // GEMM 8, collective 4, 4 tiles: tiles of 2 and 1.
        QVERIFY(near(tiled_collective_extra_s(8, 4, 4, TpOverlap::Ring, 0), 0.0));
        QVERIFY(near(tiled_collective_extra_s(8, 4, 4, TpOverlap::Pipe, 0), 1.0));
        QVERIFY(near(tiled_collective_extra_s(8, 4, 4, TpOverlap::None, 0), 4.0));
        // Interference: 3 overlapped tiles each slowed by 0.15 × 1.
        QVERIFY(near(tiled_collective_extra_s(8, 4, 4, TpOverlap::Ring, 0.15), 0.45));
        // Communication-bound: GEMM 4, collective 8: 3 tiles of (2 − 1) exposed.
        QVERIFY(near(tiled_collective_extra_s(4, 8, 4, TpOverlap::Ring, 0), 3.0));
        QVERIFY(near(tiled_collective_extra_s(4, 8, 4, TpOverlap::Pipe, 0), 5.0));
        // One tile cannot overlap anything.
        QVERIFY(near(tiled_collective_extra_s(4, 8, 1, TpOverlap::Ring, 0), 8.0));
    }

    // In a block: "none" exposes every SP collective forward (2 all-gathers, 2
    // reduce-scatters); "pipe" exposes exactly one tile (1/tp) of each more than "ring".
    void tiled_overlap_in_a_block() {
        const LayoutCosts none = prepared(tp8_layout(TpOverlap::None));
        const LayoutCosts pipe = prepared(tp8_layout(TpOverlap::Pipe));
        const LayoutCosts ring = prepared(tp8_layout(TpOverlap::Ring));
        QCOMPARE(none.tp_tiling, TpOverlap::None);
        QCOMPARE(ring.tp_tiling, TpOverlap::Ring);
        const double bytes = none.tokens * 8192 * none.element_bytes;
        const double ag = all_gather_s(none.link, none.tp_span, bytes);
        const double rs = reduce_scatter_s(none.link, none.tp_span, bytes);
        QVERIFY(ag > 0 && rs > 0);
        QVERIFY(near(none.dense.fwd.tp_s, 2 * (ag + rs)));
        QVERIFY(near(pipe.dense.fwd.tp_s - ring.dense.fwd.tp_s, 2 * (ag + rs) / 8));
        QVERIFY(near(pipe.dense.bwd.tp_s - ring.dense.bwd.tp_s, 2 * (ag + rs) / 8));
        QVERIFY(ring.dense.fwd.tp_s < pipe.dense.fwd.tp_s);
        QVERIFY(pipe.dense.fwd.tp_s < none.dense.fwd.tp_s);
        // The total TP traffic and the compute do not change, only what is exposed.
        QVERIFY(near(ring.dense.fwd.tp_total_s, none.dense.fwd.tp_total_s));
        QVERIFY(near(ring.dense.fwd.compute_s(), none.dense.fwd.compute_s()));
        // The step follows.
        const Estimate e_none = estimate_layout(tp8_layout(TpOverlap::None));
        const Estimate e_ring = estimate_layout(tp8_layout(TpOverlap::Ring));
        QVERIFY(e_ring.step_time_s < e_none.step_time_s);
        QVERIFY(e_ring.time.tp_comm_s < e_none.time.tp_comm_s);
        QVERIFY(near(e_ring.time.compute_s, e_none.time.compute_s));
    }

    // The tiled GEMMs run as tp chunks of a tp-th of the rows, three at once (TE's
    // split_overlap_ag / _rs): forward QKV, projection, FC1 and FC2, backward the projection
    // and FC2 (their output gradient's all-gather); what the chunks cost beyond the whole
    // GEMMs is the ring's exposure above Calculon's tiling formula.
    void tiled_gemms_run_as_chunks() {
        const Layout l = tp8_layout(TpOverlap::Ring);
        const LayoutCosts ring = prepared(l);
        const ModelProfile p = build_model_profile(l.model);
        const BlockGemms g = block_gemms(p, p.dense, ring, l.training);
        const KernelModel& k = ring.kernel;
        auto chunked = [&](const GemmShape& whole) {
            GemmShape tiles = whole;
            tiles.m = whole.m / 8;
            tiles.count = whole.count * 8;
            tiles.together = 3;
            return gemm_s(k, tiles) - gemm_s(k, whole);
        };
        const double fwd_chunks = chunked(g.qkv) + chunked(g.proj) + chunked(g.fc1) + chunked(g.fc2);
        const double bwd_chunks = chunked(g.proj) + chunked(g.fc2);
        QVERIFY2(fwd_chunks > 0 && bwd_chunks > 0, "1,024-row chunks run below the whole GEMMs' rate");
        const double bytes = ring.tokens * 8192 * ring.element_bytes;
        const double ag = all_gather_s(ring.link, ring.tp_span, bytes);
        const double rs = reduce_scatter_s(ring.link, ring.tp_span, bytes);
        const double u = ring.tp_interference;
        auto tiled = [&](const GemmShape& s, double comm) {
            return tiled_collective_extra_s(gemm_s(k, s), comm, 8, TpOverlap::Ring, u);
        };
        const double fwd = tiled(g.qkv, ag) + tiled(g.proj, rs) + tiled(g.fc1, ag) + tiled(g.fc2, rs);
        const double bwd = tiled(g.proj, ag) + tiled(g.qkv, rs) + tiled(g.fc2, ag) + tiled(g.fc1, rs);
        QVERIFY(near(ring.dense.fwd.tp_s, fwd + fwd_chunks, 1e-9));
        QVERIFY(near(ring.dense.bwd.tp_s, bwd + bwd_chunks, 1e-9));
    }

    // Megatron-LM asserts SP for --tp-comm-overlap and turns SP off at tp 1
    // (training/arguments.py:1436-1442): so does validation.
    void overlap_needs_sequence_parallelism() {
        QVERIFY(validate_layout(tp8_layout(TpOverlap::Ring), "x").valid());
        const ValidationResult no_sp = validate_layout(tp8_layout(TpOverlap::Ring, false), "x");
        QVERIFY(!no_sp.valid());
        QCOMPARE(QString::fromStdString(no_sp.errors[0].field), QString("parallel.tp_comm_overlap"));
        Layout tp1 = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 1, 8, 1, 8, 8192);
        tp1.parallel.sequence_parallel = true;
        tp1.parallel.tp_comm_overlap = TpOverlap::Pipe;
        bool named = false;
        for (const auto& e : validate_layout(tp1, "x").errors) named = named || e.field == "parallel.tp_comm_overlap";
        QVERIFY(named);
        // Without SP the setting cannot act in the cost model either.
        QCOMPARE(prepared(tp8_layout(TpOverlap::Ring, false)).tp_tiling, TpOverlap::None);
    }

    // The layout file: written only when set, read back, unknown values refused by field.
    void layout_json_round_trip() {
        Layout l = tp8_layout(TpOverlap::Pipe);
        l.model_ref = "llama3-70b";
        l.cluster_ref = "dgx-h100";
        const nlohmann::json j = layout_to_json(l);
        QCOMPARE(QString::fromStdString(j["parallel"]["tp_comm_overlap"].get<std::string>()), QString("pipe"));
        QCOMPARE(layout_from_json(j, "x.json").parallel.tp_comm_overlap, TpOverlap::Pipe);
        const nlohmann::json plain = layout_to_json(tp8_layout(TpOverlap::None));
        QVERIFY(!plain["parallel"].contains("tp_comm_overlap"));
        nlohmann::json bad = j;
        bad["parallel"]["tp_comm_overlap"] = "zigzag";
        try {
            (void)layout_from_json(bad, "bad.json");
            QFAIL("an unknown TP overlap must be refused");
        } catch (const InputError& e) {
            QVERIFY(QString(e.what()).contains("parallel.tp_comm_overlap"));
            QVERIFY(QString(e.what()).contains("bad.json"));
        }
    }

    // Interference (Calculon's processor_usage): Megatron's asynchronous backward all-reduce
    // hidden behind the weight-gradient GEMMs slows them by u × what it hides; the CP ring
    // costs at least u × itself beside attention.
    void interference_slows_the_overlapped_compute() {
        Layout quiet = tp8_layout(TpOverlap::None, false);
        quiet.parallel.mesh.cp = 2;
        quiet.parallel.mesh.tp = 4;
        quiet.gpus = 8;
        quiet.cluster.efficiency.intra_node_interference = 0;
        Layout busy = quiet;
        busy.cluster.efficiency.intra_node_interference = 0.15;
        const LayoutCosts q = prepared(quiet);
        const LayoutCosts b = prepared(busy);
        QCOMPARE(b.tp_interference, 0.15);
        const double hidden = q.dense.bwd.tp_total_s - q.dense.bwd.tp_s;
        QVERIFY(hidden > 0);
        QVERIFY(near(b.dense.bwd.tp_s - q.dense.bwd.tp_s, 0.15 * hidden));
        QVERIFY(near(b.dense.fwd.tp_s, q.dense.fwd.tp_s));  // the forward hides nothing
        QVERIFY(q.dense.fwd.cp_total_s > 0);
        QVERIFY(near(b.dense.fwd.cp_s, std::max(q.dense.fwd.cp_s, 0.15 * q.dense.fwd.cp_total_s)));
        QVERIFY(near(b.dense.bwd.cp_s, std::max(q.dense.bwd.cp_s, 0.15 * q.dense.bwd.cp_total_s)));
        QVERIFY(b.dense.fwd.cp_s > q.dense.fwd.cp_s);
        QVERIFY(estimate_layout(busy).step_time_s > estimate_layout(quiet).step_time_s);
        // Groups across nodes use the inter-node figure.
        Layout spread = busy;
        spread.cluster.efficiency.inter_node_interference = 0.02;
        spread.cluster.gpus_per_node = 2;
        QCOMPARE(prepared(spread).tp_interference, 0.02);
    }
};

QTEST_GUILESS_MAIN(TestCostOverlap)
#include "tst_cost_overlap.moc"
