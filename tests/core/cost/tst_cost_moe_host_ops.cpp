// What one MoE layer pass asks of the host (core/cost/moe_host_ops.h; docs/cost-model.md, "MoE
// layer host ops and router"): Megatron-LM's op counts per dispatcher, the per-expert launches
// of Transformer Engine's grouped GEMMs, the router's bytes, and how block_cost charges them
// over the whole layer. Hand-counted figures from the upstream lines the header cites.
#include <QtTest>

#include <cmath>

#include "core/cost/block_cost.h"
#include "core/cost/cost_model.h"
#include "core/cost/estimate_json.h"
#include "core/cost/kernel_time.h"
#include "core/cost/launch_cost.h"
#include "core/cost/model_profile.h"
#include "core/cost/moe_host_ops.h"
#include "tests/core/cost/cost_test_util.h"

using namespace meshwork;
using namespace meshwork::cost;
using namespace meshwork::test;

class TestCostMoeHostOps : public QObject {
    Q_OBJECT
  private slots:
    // Hand counts. Common to every dispatcher: norm + bias-dropout-add 2, router 3, auxiliary
    // loss 5, weighted SwiGLU 1 = 11.
    // alltoall with EP, 16 local experts, bf16: 11 + metadata 8 + host copies 4 + two
    // all-to-alls 2 + combine 1 + permute 2 + unpermute 1 + sort/unsort 2 = 31; GEMM launches
    // 2 linears × 16 experts forward, 2 × 16 × 2 backward.
    void alltoall_counts() {
        MoeHostShape s;
        s.ep = true;
        s.local_experts = 16;
        const MoeHostOps o = moe_host_ops(s);
        QCOMPARE(o.framework_ops_fwd, 31);
        QCOMPARE(o.framework_ops_bwd, 62);
        QCOMPARE(o.expert_launches_fwd, 32);
        QCOMPARE(o.expert_launches_bwd, 64);
        // Past the synchronisation before the all-to-all (token_dispatcher.py:596): the two
        // exchanges and the combine 3, sort/unsort 2, unpermute 1, weighted SwiGLU 1,
        // bias-dropout-add 1 = 8.
        QCOMPARE(o.framework_ops_after_sync_fwd, 8);
        // One local expert: no sort and unsort.
        s.local_experts = 1;
        QCOMPARE(moe_host_ops(s).framework_ops_fwd, 29);
        QCOMPARE(moe_host_ops(s).framework_ops_after_sync_fwd, 6);
        // No EP: counts (2) and their copy (1) instead of the metadata, copies and exchanges.
        s.ep = false;
        QCOMPARE(moe_host_ops(s).framework_ops_fwd, 11 + 3 + 3);
        QCOMPARE(moe_host_ops(s).framework_ops_after_sync_fwd, 3);
        // No auxiliary loss: 5 fewer.
        s.aux_loss = false;
        QCOMPARE(moe_host_ops(s).framework_ops_fwd, 11 + 3 + 3 - 5);
    }
    // fp8 quantises each expert's input per linear (forward) and its output gradient
    // (backward); padding outside the dispatcher adds pad, probability pad and unpad; gpt-oss's
    // biases add b·p and t + b·p per local expert and one cat, its clamp two clamps and a cat.
    void expert_counts() {
        MoeHostShape s;
        s.ep = true;
        s.local_experts = 8;
        s.fp8 = true;
        s.quant_padding = true;
        const MoeHostOps fp8 = moe_host_ops(s);
        QCOMPARE(fp8.expert_launches_fwd, 2 * 8 * 2);
        QCOMPARE(fp8.expert_launches_bwd, 2 * 8 * 3);
        QCOMPARE(fp8.framework_ops_fwd, 31 + 3);
        MoeHostShape oss;
        oss.ep = true;
        oss.local_experts = 16;
        oss.expert_bias = true;
        oss.clamped_glu = true;
        QCOMPARE(moe_host_ops(oss).framework_ops_fwd, 31 + 3 + 2 * 16 + 1);
    }
    // Flex: metadata 3, dispatch and combine 2, the counts' copy 1 beside the common 11;
    // DeepEP adds the layout, permute and unpermute (4); HybridEP permutes inside.
    // allgather: 8 beside the common 11.
    void other_dispatchers() {
        MoeHostShape s;
        s.ep = true;
        s.local_experts = 16;
        s.dispatcher = MoeDispatcher::Flex;
        s.backend = MoeFlexBackend::HybridEP;
        QCOMPARE(moe_host_ops(s).framework_ops_fwd, 11 + 6);
        s.backend = MoeFlexBackend::DeepEP;
        QCOMPARE(moe_host_ops(s).framework_ops_fwd, 11 + 6 + 4);
        s.dispatcher = MoeDispatcher::AllGather;
        QCOMPARE(moe_host_ops(s).framework_ops_fwd, 11 + 8);
    }
    // Router bytes per token, 128 experts, h 2048: forward (4+4+4+1+1) + (4+4+1+4) = 27 bytes
    // per expert; backward the same plus 12 bytes per hidden element of fp32 casts.
    void router_bytes() {
        const RouterBytes b = router_bytes_per_token(2048, 128, true);
        QVERIFY(near(b.fwd, 27.0 * 128));
        QVERIFY(near(b.bwd, 27.0 * 128 + 12.0 * 2048));
        const RouterBytes plain = router_bytes_per_token(2048, 128, false);
        QVERIFY(near(plain.fwd, 14.0 * 128));
    }
    // The layer's exposure: host minus GPU when the host is slower, else the kernels' gaps,
    // plus the synchronisation gap; a captured MoE half costs one graph launch.
    void layer_exposure() {
        MoeLayerHost h;
        h.attention_ops = 32;
        h.moe_framework_ops = 31;
        h.moe_expert_launches = 32;
        h.gpu_kernels = 95;
        const double host = 63 * kMoeHostPerOpS + 32 * kGraphLaunchS;
        QVERIFY(near(h.host_s(), host));
        QVERIFY(near(moe_layer_exposed_host_s(h, 1e-3, 1), host - 1e-3 + kSyncGapS));
        QVERIFY(near(moe_layer_exposed_host_s(h, 1.0, 1), 95 * kKernelGapS + kSyncGapS));
        QVERIFY(near(moe_layer_exposed_host_s(h, 1.0, 0), 95 * kKernelGapS));
        h.gpu_kernels = 0;
        QCOMPARE(moe_layer_exposed_host_s(h, 1.0, 0), 0.0);
        // After the synchronisation the queue is empty: the launches past it (20 ops and the
        // experts' 32) are hidden only by the MoE half's own GPU time, not by the layer's.
        h.moe_ops_after_sync = 20;
        const double after = 20 * kMoeHostPerOpS + 32 * kGraphLaunchS;
        QVERIFY(near(h.after_sync_host_s(), after));
        QVERIFY(near(moe_layer_exposed_host_s(h, 1.0, 1, 1e-4), after - 1e-4 + kSyncGapS));
        QVERIFY(near(moe_layer_exposed_host_s(h, 1.0, 1, 1.0), kSyncGapS));
        QCOMPARE(moe_layer_exposed_host_s(h, 1.0, 0, 1e-4), 0.0);  // no sync, no barrier
        QVERIFY(near(moe_layer_exposed_host_s(h, 1e-3, 1, 1e-4), std::max(host - 1e-3, after - 1e-4) + kSyncGapS));
        // Partial CUDA graphs (attention captured): the whole layer's host time shrinks, what
        // follows the synchronisation does not.
        MoeLayerHost graphed = h;
        graphed.graph_launches = 1;
        graphed.attention_ops = 0;
        QVERIFY(graphed.host_s() < h.host_s());
        QCOMPARE(moe_layer_exposed_host_s(graphed, 1.0, 1, 1e-4), moe_layer_exposed_host_s(h, 1.0, 1, 1e-4));
        h.moe_captured = true;
        QVERIFY(near(h.host_s(), 32 * kMoeHostPerOpS + kGraphLaunchS));
        QCOMPARE(h.after_sync_host_s(), 0.0);
    }
    // In the block: an MoE layer whose GPU time is shorter than its host's launches (gpt-oss-20b,
    // 32 experts with biases and a clamped GLU, at one 1,024-token sequence on an H100, EP 8:
    // 4 local experts) pays exactly host − GPU per direction, the forward plus one
    // synchronisation gap; the router's bytes are in the MoE half's time.
    void in_the_block() {
        Layout l = make_layout(load_model("gpt-oss-20b"), "dgx-h100", 1, 1, 8, 1, 8, 1024);
        l.parallel.mesh.ep = 8;
        l.parallel.mesh.etp = 1;
        const LayoutCosts c = costs_of(l);
        const ModelProfile p = build_model_profile(l.model);
        QVERIFY(p.expert_bias && p.glu_clamped && p.experts == 32);
        MoeHostShape s;
        s.ep = true;
        s.local_experts = 4;
        s.expert_bias = true;
        s.clamped_glu = true;
        const MoeHostOps o = moe_host_ops(s);
        const int attn_bwd = static_cast<int>(kAttentionKernelsFwd * kBackwardKernelsPerForward);
        const MoeLayerHost fwd{0, kAttentionKernelsFwd, false, o.framework_ops_fwd, o.expert_launches_fwd,
                               kAttentionKernelsFwd + o.framework_ops_fwd + o.expert_launches_fwd,
                               o.framework_ops_after_sync_fwd};
        const MoeLayerHost bwd{0, attn_bwd, false, o.framework_ops_bwd, o.expert_launches_bwd,
                               attn_bwd + o.framework_ops_bwd + o.expert_launches_bwd};
        PassParts f = c.moe.fwd, b = c.moe.bwd;
        f.host_s = b.host_s = 0;
        QVERIFY2(fwd.host_s() > f.total_s(), "the example must be host-bound");
        const double moe_half = f.mlp_s + f.ep_s;  // no TP: no TP collectives
        QVERIFY(near(c.moe.fwd.host_s,
                     std::max(fwd.host_s() - f.total_s(), fwd.after_sync_host_s() - moe_half) + kSyncGapS, 1e-9));
        QVERIFY(near(c.moe.bwd.host_s, std::max(bwd.gpu_kernels * kKernelGapS, bwd.host_s() - b.total_s()), 1e-9));
        const RouterBytes r = router_bytes_per_token(2880, 32, true);
        QVERIFY(c.moe.fwd.mlp_s > memory_s(c.kernel, r.fwd * 1024));
    }
    // The estimate carries the per-layer parts (estimate --json "layers"): gpt-oss-20b is MoE
    // in every layer, so only "moe", and its figures are the block cost's.
    void layers_in_the_estimate() {
        Layout l = make_layout(load_model("gpt-oss-20b"), "dgx-h100", 1, 1, 8, 1, 8, 1024);
        l.parallel.mesh.ep = 8;
        l.parallel.mesh.etp = 1;
        const LayoutCosts c = costs_of(l);
        const Estimate e = estimate_layout(l);
        QVERIFY(e.moe_layer.present && !e.dense_layer.present);
        QCOMPARE(e.moe_layer.fwd.host_s, c.moe.fwd.host_s);
        QCOMPARE(e.moe_layer.bwd.mlp_s, c.moe.bwd.mlp_s);
        QCOMPARE(e.moe_layer.fwd.ep_s, c.moe.fwd.ep_s);
        const nlohmann::json j = estimate_to_json(e);
        QVERIFY(j.at("layers").contains("moe") && !j.at("layers").contains("dense"));
        QCOMPARE(j["layers"]["moe"]["forward"]["host_s"].get<double>(), c.moe.fwd.host_s);
        QCOMPARE(j["layers"]["moe"]["backward"]["attention_s"].get<double>(), c.moe.bwd.attention_s);
        // A dense model: "dense" only.
        const Estimate d = estimate_layout(make_layout(load_model("llama3-8b"), "dgx-h100", 1, 1, 8, 1, 8, 1024));
        QVERIFY(d.dense_layer.present && !d.moe_layer.present && d.dense_layer.fwd.mlp_s > 0);
    }
};

QTEST_GUILESS_MAIN(TestCostMoeHostOps)
#include "tst_cost_moe_host_ops.moc"
