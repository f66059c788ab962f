// The routed experts' eager passes (core/cost/moe_eager_passes.h; docs/cost-model.md,
// "Expert eager passes"): Megatron-LM's grouped MLP clamps a clamped GLU's halves and adds
// FC2's expert biases in separate PyTorch ops, and pads fp8 tokens per expert in copies of
// their own unless HybridEP padded them. Hand-counted bytes, and their place in the MoE
// block's time; models without expert biases or a clamp, and bf16, pay nothing of it.
#include <QtTest>

#include <cmath>

#include "core/cost/block_cost.h"
#include "core/cost/kernel_time.h"
#include "core/cost/model_profile.h"
#include "core/cost/moe_eager_passes.h"
#include "tests/core/cost/cost_test_util.h"

using namespace meshwork;
using namespace meshwork::cost;
using namespace meshwork::test;

namespace {

// gpt-oss-120b as Megatron-Bridge's B200 recipe runs it: EP 8 inside one DGX-B200, MBS 4,
// sequence 4096, bf16 (tst_cost_published_heldout's row, archive :237).
Layout gpt_oss_b200(const ModelSpec& model) {
    Layout l = make_layout(model, "dgx-b200", 1, 1, 8, 4, 1280, 4096);
    l.parallel.mesh.ep = 8;
    l.parallel.mesh.etp = 1;
    l.training.dtype = DType::Bf16;
    return l;
}

}  // namespace

class TestCostMoeEagerPasses : public QObject {
    Q_OBJECT
  private slots:
    // Per token copy, bf16, gpt-oss's widths: FC1 output 2·2880 (gated), h = 2880.
    // Clamp: forward 4 accesses × 2 B × 5760, backward 5 × 2 × 5760; bias: forward
    // 6 × 2 × 2880, backward 8 × 2 × 2880; moe_act recomputation reruns the clamp.
    void bytes_by_hand() {
        const MoeEagerBytes both = moe_eager_bytes_per_copy({true, true, false}, 5760, 2880, 2);
        QVERIFY(near(both.fwd, 46080 + 34560));
        QVERIFY(near(both.bwd, 57600 + 46080));
        QVERIFY(near(both.moe_act_recompute, 46080));
        const MoeEagerBytes clamp = moe_eager_bytes_per_copy({true, false, false}, 5760, 2880, 2);
        QVERIFY(near(clamp.fwd, 46080) && near(clamp.bwd, 57600));
        const MoeEagerBytes bias = moe_eager_bytes_per_copy({false, true, false}, 5760, 2880, 2);
        QVERIFY(near(bias.fwd, 34560) && near(bias.bwd, 46080) && bias.moe_act_recompute == 0);
        const MoeEagerBytes none = moe_eager_bytes_per_copy({}, 5760, 2880, 2);
        QCOMPARE(none.fwd + none.bwd + none.moe_act_recompute, 0.0);
        // fp8 padding, h = 4096 (Qwen3-235B): pad and unpad, read and write 2 bytes each way.
        const MoeEagerBytes pad = moe_eager_bytes_per_copy({false, false, true}, 3072, 4096, 2);
        QVERIFY(near(pad.fwd, 4 * 2 * 4096.0) && near(pad.bwd, 4 * 2 * 4096.0) && pad.moe_act_recompute == 0);
    }
    // fp8 experts pad their tokens per expert in copies unless HybridEP padded them in its
    // permutation: on Mixtral (no biases, no clamp) in fp8 with the flex dispatcher, DeepEP's
    // MoE block is slower than HybridEP's by exactly the padding passes (the backends' expert
    // compute is priced alike otherwise; their dispatch differs, flex_kernel_rate.h); in bf16
    // they are equal.
    void fp8_padding_in_the_block_time() {
        Layout l = make_layout(load_model("mixtral-8x7b"), "dgx-h100", 1, 1, 8, 1, 64, 4096);
        l.parallel.mesh.ep = 8;
        l.parallel.mesh.etp = 1;
        l.parallel.moe_dispatcher = MoeDispatcher::Flex;
        l.training.dtype = DType::Fp8;
        Layout hybrid = l;
        hybrid.parallel.moe_flex_backend = MoeFlexBackend::HybridEP;
        l.parallel.moe_flex_backend = MoeFlexBackend::DeepEP;
        const LayoutCosts deep = costs_of(l), hyb = costs_of(hybrid);
        const double copies = 4096.0 * 2;  // tokens × top 2
        const MoeEagerBytes pad = moe_eager_bytes_per_copy({false, false, true}, 2 * 14336, 4096, 2);
        QVERIFY(near(deep.moe.fwd.mlp_s - hyb.moe.fwd.mlp_s, memory_s(deep.kernel, pad.fwd * copies), 1e-6));
        QVERIFY(near(deep.moe.bwd.mlp_s - hyb.moe.bwd.mlp_s, memory_s(deep.kernel, pad.bwd * copies), 1e-6));
        QVERIFY(pad.fwd > 0);
        l.training.dtype = hybrid.training.dtype = DType::Bf16;
        QVERIFY(near(costs_of(l).moe.fwd.mlp_s, costs_of(hybrid).moe.fwd.mlp_s));
    }
    // The model profile carries the two flags from the model: gpt-oss has both, Mixtral and
    // DeepSeek-V3 (no expert biases, plain SwiGLU) neither.
    void profile_flags() {
        const ModelProfile oss = build_model_profile(load_model("gpt-oss-120b"));
        QVERIFY(oss.glu_clamped && oss.expert_bias);
        for (const char* name : {"mixtral-8x7b", "deepseek-v3"}) {
            const ModelProfile p = build_model_profile(load_model(name));
            QVERIFY2(!p.glu_clamped && !p.expert_bias, name);
        }
    }
    // In the MoE block's time: the forward and backward of the expert half grow by exactly the
    // passes' HBM time over the rank's token copies (16,384 tokens × top 4), and the
    // recomputation of moe_act by the clamp's forward.
    void in_the_block_time() {
        const ModelSpec oss = load_model("gpt-oss-120b");
        ModelSpec plain = oss;
        plain.glu_clamp = 0;
        Layout with = gpt_oss_b200(oss), without = gpt_oss_b200(plain);
        for (Layout* l : {&with, &without}) {
            l->training.recompute = Recompute::Selective;
            l->training.recompute_modules = {RecomputeModule::MoeAct};
        }
        const LayoutCosts a = costs_of(with), b = costs_of(without);
        const double copies = 4.0 * 4096 * 4;
        const KernelModel& k = a.kernel;
        const MoeEagerBytes clamp = moe_eager_bytes_per_copy({true, false, false}, 2 * 2880, 2880, 2);
        QVERIFY(near(a.moe.fwd.mlp_s - b.moe.fwd.mlp_s, memory_s(k, clamp.fwd * copies), 1e-6));
        QVERIFY(near(a.moe.bwd.mlp_s - b.moe.bwd.mlp_s, memory_s(k, clamp.bwd * copies), 1e-6));
        QVERIFY(near(a.moe.selective_recompute_s - b.moe.selective_recompute_s,
                     memory_s(k, clamp.moe_act_recompute * copies), 1e-6));
        // The bias passes stay in both (plain keeps linear_bias): the forward of the expert
        // half is at least them.
        const MoeEagerBytes bias = moe_eager_bytes_per_copy({false, true, false}, 2 * 2880, 2880, 2);
        QVERIFY(b.moe.fwd.mlp_s > memory_s(k, bias.fwd * copies));
        qInfo("gpt-oss-120b on dgx-b200, EP 8, MBS 4: clamp %.3f ms fwd + %.3f ms bwd, bias %.3f + %.3f ms per "
              "MoE layer and micro-batch",
              1e3 * memory_s(k, clamp.fwd * copies), 1e3 * memory_s(k, clamp.bwd * copies),
              1e3 * memory_s(k, bias.fwd * copies), 1e3 * memory_s(k, bias.bwd * copies));
    }
};

QTEST_GUILESS_MAIN(TestCostMoeEagerPasses)
#include "tst_cost_moe_eager_passes.moc"
