// Time side of the cost model: collective closed forms, pipeline bubbles, monotonicity.
#include <QtTest>

#include <array>

#include "core/cost/block_cost.h"
#include "core/cost/collective_time.h"
#include "core/cost/cost_model.h"
#include "core/cost/group_topology.h"
#include "core/cost/gemm_shapes.h"
#include "core/cost/kernel_time.h"
#include "core/cost/moe_host_ops.h"
#include "tests/core/cost/cost_test_util.h"
#include "core/layout/layout_validate.h"
#include "core/model/hf_config.h"

using namespace meshwork;
using namespace meshwork::cost;
using namespace meshwork::test;

class TestCostTime : public QObject {
    Q_OBJECT
private slots:
    // ZeRO-2/3's per-micro-batch reduce-scatter: hidden behind dp_overlap × the backward, and
    // under 1F1B behind the forward that follows it too (block_cost.h). By hand: a reduce of
    // 10 against a backward of 5 and a forward of 4 shows 5 alone, 1 with the forward; the
    // gather is untouched.
    void zero_reduce_hides_behind_the_following_forward() {
        const ZeroExposure alone = zero_exposure(0, 10, 4, 5, 1.0, false);
        const ZeroExposure with_fwd = zero_exposure(0, 10, 4, 5, 1.0, true);
        QCOMPARE(alone.bwd_s, 5.0);
        QCOMPARE(with_fwd.bwd_s, 1.0);
        QCOMPARE(zero_exposure(6, 0, 4, 5, 1.0, true).fwd_s, 2.0);
        // Through a layout: ZeRO-2 over 64 ranks under a pipeline, with short sequences so that
        // each micro-batch's reduce-scatter outlasts its backward, exposes less under 1F1B than
        // under GPipe, whose backwards follow one another.
        Layout l = make_layout(load_model("llama3-70b"), "dgx-h100", 8, 4, 64, 1, 512, 512);
        l.training.zero_stage = 2;
        l.training.schedule = Schedule::GPipe;
        const double gpipe = estimate_layout(l).time.dp_comm_s;
        l.training.schedule = Schedule::OneFOneB;
        const double one_f_one_b = estimate_layout(l).time.dp_comm_s;
        QVERIFY2(one_f_one_b < gpipe, qPrintable(QString("%1 vs %2").arg(one_f_one_b).arg(gpipe)));
    }
    // Ring all-reduce inside a node: 2(n−1)/n · bytes / busbw + 2(n−1) latencies.
    void ring_collectives_closed_form() {
        LinkModel l;
        l.intra_bytes_per_s = 2.4e11;
        l.intra_latency_s = 3e-6;
        l.inter_bytes_per_s = 2.0e10;
        l.inter_latency_s = 6e-6;
        const GroupSpan node = group_span(8, 1, 8);
        QCOMPARE(node.nodes, 1);
        const double bytes = 1e9;
        QVERIFY(std::fabs(all_reduce_s(l, node, bytes) - (2.0 * 7 / 8 * bytes / 2.4e11 + 14 * 3e-6)) < 1e-12);
        QVERIFY(std::fabs(all_gather_s(l, node, bytes) - (7.0 / 8 * bytes / 2.4e11 + 7 * 3e-6)) < 1e-12);
        QVERIFY(std::fabs(reduce_scatter_s(l, node, bytes) - all_gather_s(l, node, bytes)) < 1e-15);
        // One rank per node: the inter-node tier.
        const GroupSpan spread = group_span(4, 8, 8);
        QCOMPARE(spread.per_node, 1);
        QCOMPARE(spread.nodes, 4);
        QVERIFY(std::fabs(all_reduce_s(l, spread, bytes) - (2.0 * 3 / 4 * bytes / 2.0e10 + 6 * 6e-6)) < 1e-12);
        // Hierarchical is never slower than the flat ring over the slow tier.
        const GroupSpan both = group_span(32, 1, 8);
        QCOMPARE(both.per_node, 8);
        QCOMPARE(both.nodes, 4);
        QVERIFY(all_reduce_s(l, both, bytes) <= 2.0 * 31 / 32 * bytes / 2.0e10 + 62 * 6e-6);
        QCOMPARE(all_reduce_s(l, group_span(1, 1, 8), bytes), 0.0);
    }

    void group_spans_follow_the_order() {
        MeshShape s;
        s.tp = 8;
        s.dp = 4;
        s.pp = 2;
        auto strides = mesh_strides(s);
        QVERIFY(strides);
        MeshStrides st = *strides;
        QCOMPARE(st.tp, 1);
        QCOMPARE(st.dp, 8);
        QCOMPARE(st.pp, 32);
        QVERIFY(!group_span(8, st.tp, 8).crosses_nodes());
        QVERIFY(group_span(4, st.dp, 8).crosses_nodes());
        s.order = "dp-tp-cp-ep-pp";
        strides = mesh_strides(s);
        QVERIFY(strides);
        st = *strides;
        QCOMPARE(st.dp, 1);
        QCOMPARE(st.tp, 4);
        QVERIFY(group_span(8, st.tp, 8).crosses_nodes());
        s.order = "tp-tp-cp-ep-pp";
        QVERIFY(!mesh_strides(s));
    }

    // 1F1B and GPipe: the bubble is (p − 1)/(m + p − 1) of the pipeline span, i.e.
    // (p − 1)/m of the ideal time; interleaved (p − 1)/(v·m) of the ideal time.
    void bubble_closed_forms() {
        QCOMPARE(pipeline_bubble_fraction(Schedule::OneFOneB, 8, 1, 32), 7.0 / 39.0);
        QCOMPARE(pipeline_bubble_fraction(Schedule::GPipe, 4, 1, 4), 3.0 / 7.0);
        const double f = pipeline_bubble_fraction(Schedule::Interleaved, 8, 2, 32);
        QVERIFY(std::fabs(f / (1 - f) - 7.0 / (2 * 32)) < 1e-12);
        QCOMPARE(pipeline_bubble_fraction(Schedule::OneFOneB, 1, 1, 8), 0.0);
    }

    // The estimate's bubble follows the closed form when stages are (nearly) uniform:
    // Llama 3 70B, 80 layers over 4 stages, the embedding and head are < 2 % of a stage.
    void estimate_bubble_follows_the_closed_form() {
        for (int m : {4, 8, 16, 32}) {
            Layout l = preset_layout("llama3-70b-h100-64");
            l.parallel.mesh.pp = 4;
            l.parallel.mesh.dp = 64 / (4 * l.parallel.mesh.tp * l.parallel.mesh.cp);
            l.placement.layers_per_stage.clear();
            l.training.global_batch_size = m * l.parallel.mesh.dp * l.training.micro_batch_size;
            QVERIFY(validate_layout(l, "t").valid());
            const Estimate e = estimate_layout(l);
            const double closed = pipeline_bubble_fraction(Schedule::OneFOneB, 4, 1, m);
            QVERIFY2(std::fabs(e.bubble_fraction - closed) < 0.02,
                     qPrintable(QString("m %1: %2 vs %3").arg(m).arg(e.bubble_fraction).arg(closed)));
        }
    }

    // More micro-batches never increase the bubble; interleaving never increases it.
    void more_micro_batches_never_increase_the_bubble() {
        double previous = 1.0;
        for (int m : {1, 2, 4, 8, 16, 32, 64, 128}) {
            Layout l = preset_layout("gpt3-175b-a100-1024");
            l.training.global_batch_size = m * l.parallel.mesh.dp;
            const Estimate e = estimate_layout(l);
            QVERIFY2(e.bubble_fraction <= previous + 1e-12, qPrintable(QString("m %1").arg(m)));
            previous = e.bubble_fraction;
        }
        Layout l = preset_layout("gpt3-175b-a100-1024");
        const Estimate plain = estimate_layout(l);
        l.training.schedule = Schedule::Interleaved;
        l.parallel.vpp = 2;
        l.placement.layers_per_stage.clear();
        const Estimate inter = estimate_layout(l);
        QVERIFY(inter.bubble_fraction < plain.bubble_fraction);
    }

    // Megatron-LM overlaps the interleaved schedule's sends and receives with compute by
    // default (arguments.py:3118 at d98e8a64), 1F1B does not: the steady state of an
    // interleaved pipeline pays no send/recv, that of 1F1B pays 2·p2p per micro-batch.
    void interleaved_hides_the_steady_state_sends() {
        Layout l = preset_layout("gpt3-175b-a100-1024");
        const Estimate plain = estimate_layout(l);
        QVERIFY(plain.time.pp_comm_s > 0);
        l.training.schedule = Schedule::Interleaved;
        l.parallel.vpp = 2;
        l.placement.layers_per_stage.clear();
        QVERIFY(validate_layout(l, "t").valid());
        const Estimate inter = estimate_layout(l);
        QCOMPARE(inter.time.pp_comm_s, 0.0);
        // Fill and drain remain (their sends included).
        QVERIFY(inter.time.bubble_s > 0);
    }

    // MoE token passes (docs/cost-model.md, "Kernels"): with ep > 1 and several local experts
    // the all-to-all dispatcher sorts the received copies by expert and back (4·e·h bytes per
    // copy more than at ep 1); fp8 casts the expert GEMMs' inputs (h + d_e per copy) and
    // weights forward and their output gradients (h + 2·d_e, gated) backward (fp8_cast.h).
    void moe_token_passes() {
        const ModelSpec model = load_model("mixtral-8x7b");  // 8 experts of 14,336, top 2, h 4096
        const CostModel cm(model, load_cluster("dgx-h100"));
        auto moe_costs = [&](int ep, DType dtype) {
            ParallelConfig par;
            par.mesh.tp = 1;
            par.mesh.pp = 1;
            par.mesh.dp = 8;
            par.mesh.ep = ep;
            par.mesh.etp = 1;
            TrainingConfig tr;
            tr.micro_batch_size = 1;
            tr.global_batch_size = 8;
            tr.seq_length = 4096;
            tr.dtype = dtype;
            LayoutCosts c;
            cm.prepare(par, tr, c);
            return c;
        };
        const double h = 4096, f = 14336, copies = 4096.0 * 2;  // tokens × top_k on one rank
        // bf16, ep 1 (8 local experts) against ep 2 (4): the grouped GEMMs change shape, and
        // the sort is added.
        const LayoutCosts one = moe_costs(1, DType::Bf16);
        const LayoutCosts two = moe_costs(2, DType::Bf16);
        const KernelModel& k = one.kernel;
        // The local experts' GEMMs, 4 at a time (Transformer Engine's compute streams).
        auto expert_gemms = [&](double local) {
            const double per = copies / local;
            return std::array<GemmShape, 3>{GemmShape{per, 2 * f, h, local, kTeGroupedGemmStreams},
                                            GemmShape{per, h, f, local, kTeGroupedGemmStreams},
                                            GemmShape{4096, 8, h, 1}};  // and the router's
        };
        auto experts = [&](double local) {
            const auto g = expert_gemms(local);
            return gemm_s(k, g[0]) + gemm_s(k, g[1]);
        };
        // The backward's GEMMs at their own shapes (input and weight gradient), against twice
        // the forward's.
        auto gemm_gap = [&](const KernelModel& km, double local) {
            double gap = 0;
            for (const GemmShape& g : expert_gemms(local)) gap += gemm_bwd_s(km, g) - 2 * gemm_s(km, g);
            return gap;
        };
        const double sort_s = memory_s(k, 4.0 * 2 * h * copies);
        QVERIFY(sort_s > 0);
        const double expected = experts(4) - experts(8) + sort_s;
        QVERIFY2(std::fabs((two.moe.fwd.mlp_s - one.moe.fwd.mlp_s) - expected) <
                     1e-9 * one.moe.fwd.mlp_s,
                 "ep 2 adds the sort by local expert and back");
        // bf16: the backward is twice the forward but for its GEMMs' own shapes and the
        // router's passes, whose backward
        // moves the forward's score bytes plus its fp32 casts (moe_host_ops.h) on the rank's
        // 4,096 tokens; fp8 adds the casts, backward h + 2f and forward h + f per copy, so
        // backward − 2 × forward = −6·h·copies bytes of traffic less twice the weights' casts;
        // and, with the all-to-all
        // dispatcher, the padding copies of the tokens per expert (moe_eager_passes.h), 4·e·h
        // per copy both ways: −8·h·copies more.
        const RouterBytes router = router_bytes_per_token(h, 8, true);
        auto router_gap = [&](const KernelModel& km) {
            return memory_s(km, router.bwd * 4096) - 2 * memory_s(km, router.fwd * 4096);
        };
        QVERIFY(std::fabs(one.moe.bwd.mlp_s - 2 * one.moe.fwd.mlp_s - router_gap(k) - gemm_gap(k, 8)) <
                1e-9 * one.moe.fwd.mlp_s);
        const LayoutCosts fp8 = moe_costs(2, DType::Fp8);
        const double cast_gap =
            fp8.moe.bwd.mlp_s - 2 * fp8.moe.fwd.mlp_s - router_gap(fp8.kernel) - gemm_gap(fp8.kernel, 4);
        // Current scaling on Hopper casts at 6 bytes per element (fp8_cast.h); the 4 local
        // experts' weights (3·h·f each) are cast in the forward of the step's one micro-batch.
        const double weights = 4 * 3 * h * f;
        QVERIFY2(std::fabs(cast_gap + memory_s(fp8.kernel, 6.0 * h * copies + 2 * 6.0 * weights) +
                           memory_s(fp8.kernel, 4.0 * 2 * h * copies)) < 1e-9 * fp8.moe.fwd.mlp_s,
                 "fp8 casts: backward (h + 2f) − 2 × forward (h + f) per copy and the weights; padding 4eh both ways");
    }
    void recomputation_costs_time_and_saves_memory() {
        Layout l = preset_layout("gpt3-175b-a100-1024");
        l.training.recompute = Recompute::None;
        l.training.flash_attention = false;
        const Estimate none = estimate_layout(l);
        l.training.recompute = Recompute::Selective;
        const Estimate sel = estimate_layout(l);
        l.training.recompute = Recompute::Full;
        const Estimate full = estimate_layout(l);
        QVERIFY(none.step_time_s < sel.step_time_s);
        QVERIFY(sel.step_time_s < full.step_time_s);
        QVERIFY(none.stages[0].activations_bytes > sel.stages[0].activations_bytes);
        QVERIFY(sel.stages[0].activations_bytes > full.stages[0].activations_bytes);
        QVERIFY(full.hardware_tflops_per_gpu > full.model_tflops_per_gpu);
        QVERIFY(full.time.recompute_s > sel.time.recompute_s);
    }

    // A sliding window cuts the fused attention of its blocks: less compute, fewer model
    // FLOPs (the score term), the same parameters and stored activations.
    void sliding_window_cuts_attention_not_memory() {
        ModelSpec full = load_model("mistral-7b");
        full.sliding_window = 0;
        ModelSpec windowed = full;
        windowed.sliding_window = 1024;
        windowed.global_attention_every = 2;  // half the blocks slide
        const Estimate a = estimate_layout(make_layout(full, "dgx-h100", 2, 2, 2, 1, 16, 16384));
        const Estimate b = estimate_layout(make_layout(windowed, "dgx-h100", 2, 2, 2, 1, 16, 16384));
        QVERIFY(sane(a) && sane(b));
        QVERIFY(b.time.compute_s < a.time.compute_s);
        QVERIFY(b.model_tflops_per_gpu * b.step_time_s < a.model_tflops_per_gpu * a.step_time_s);
        QCOMPARE(b.stages[0].params_bytes, a.stages[0].params_bytes);
        QCOMPARE(b.stages[0].activations_bytes, a.stages[0].activations_bytes);
    }

    void metrics_are_consistent() {
        for (const char* name : {"gpt3-175b-a100-1024", "llama3-70b-h100-64", "mixtral-8x7b-h100-64",
                                 "llama3.1-405b-h100-16384", "tiny-cpu", "tiny-moe-cpu"}) {
            const Layout l = preset_layout(name);
            const Estimate e = estimate_layout(l);
            QVERIFY2(sane(e), name);
            const double tokens = static_cast<double>(l.training.global_batch_size) * l.training.seq_length;
            QVERIFY(std::fabs(e.tokens_per_s * e.step_time_s - tokens) < 1e-6 * tokens);
            QVERIFY(e.mfu > 0 && e.mfu < 1);
            QVERIFY(e.exposed_comm_s <= e.step_time_s);
            QVERIFY(e.time.compute_s <= e.step_time_s);
            QCOMPARE(static_cast<int>(e.stages.size()), l.parallel.mesh.pp);
            QCOMPARE(e.micro_batches, l.num_micro_batches());
        }
    }

    // Faster links never make a step slower; a larger GEMM efficiency never either.
    void rates_come_from_the_cluster() {
        Layout l = preset_layout("gpt3-175b-a100-1024");
        const Estimate base = estimate_layout(l);
        l.cluster.inter_node.bandwidth_bytes_per_s *= 4;
        const Estimate fast_links = estimate_layout(l);
        QVERIFY(fast_links.step_time_s < base.step_time_s);
        l = preset_layout("gpt3-175b-a100-1024");
        l.cluster.efficiency.gemm = 0.9;
        QVERIFY(estimate_layout(l).step_time_s < base.step_time_s);
    }

    // The estimate carries each chunk's first layer from rank to rank; each stage's passes
    // must equal the sum of its chunks costed from first layers summed from scratch, where
    // the first layer decides which blocks are MoE (DeepSeek-V3: 3 dense blocks first, an
    // uneven split with an empty first chunk, vpp 2).
    void carried_first_layers_match_the_sum() {
        Layout l = make_layout(load_model("deepseek-v3"), "dgx-h100", 1, 4, 64, 1, 512, 4096);
        l.parallel.mesh.ep = 64;
        l.parallel.vpp = 2;
        l.training.schedule = Schedule::Interleaved;
        l.placement.layers_per_stage = {0, 9, 8, 7, 9, 9, 9, 10};
        QVERIFY(validate_layout(l, "t").valid());
        const CostModel model(l);
        LayoutCosts c;
        model.prepare(l.parallel, l.training, c);
        const Estimate e = estimate_layout(l);
        for (int r = 0; r < 4; ++r) {
            double fwd = 0;
            int layers = 0;
            for (int k = 0; k < 2; ++k) {
                const ChunkCost cc = model.chunk_cost(c, l.placement, k * 4 + r);
                fwd += cc.fwd.total_s();
                layers += cc.layers;
            }
            QCOMPARE(e.stages[static_cast<std::size_t>(r)].layers, layers);
            QVERIFY(std::fabs(e.stages[static_cast<std::size_t>(r)].forward_s - fwd) <= 1e-12 * fwd);
        }
        // Stage 0's chunks start at layers 0 (embedding only) and 33; the dense blocks 0-2
        // sit on stage 1's first chunk.
        QCOMPARE(model.chunk_cost(c, l.placement, 1).moe_layers, 6);
    }
};

QTEST_GUILESS_MAIN(TestCostTime)
#include "tst_cost_time.moc"
