#include "core/cost/moe_eager_passes.h"

namespace meshwork::cost {

// Megatron-LM 44151194 (the submodule of Megatron-Bridge 21d102f5e, the 26.04.01 release the
// held-back MoE rows ran), TEGroupedMLP.forward, the path without the Transformer Engine op
// fuser (use_transformer_engine_op_fuser off, Megatron's default):
//
// - FC1 adds its bias inside the grouped GEMM (experts.py:212, skip_bias_add=False); FC2
//   returns it (:235, skip_bias_add=True) and `_apply_bias` (:295-310, called at :726) adds
//   it per local expert in eager ops: `b * p` (writes an h-wide copy), `t + b·p` (reads two,
//   writes one), `torch.cat` of the experts' pieces (reads one, writes one). Router
//   probabilities are in the activation dtype (moe_utils.py:821, probs.type_as(logits)), so
//   the final `.to(dtype)` copies nothing. Backward, per element: the gradient of the bias,
//   g·p then its sum over tokens (read g, write, read), that of the probabilities, g·b then
//   its sum over h (the same), and split's backward concatenating the experts' input
//   gradients (read, write). In element-sized accesses per h-wide element: forward
//   1 + 3 + 2 = 6, backward 3 + 3 + 2 = 8.
// - The clamped GLU (gpt-oss's swiglu_limit; Megatron-Bridge gpt_oss_bridge.py:82-84 at
//   21d102f5e sets activation_func_clamp_value 7.0 and bias_activation_fusion) calls
//   weighted_bias_quick_geglu_impl (experts.py:662), which clamps the two halves of the FC1
//   output and concatenates them in eager ops before the fused kernel
//   (fusions/fused_bias_geglu.py:424-432): each clamp reads and writes its half, the cat
//   reads and writes the whole width: 4 accesses per element of the FC1 output. Backward:
//   each clamp's gradient reads the gradient and the input and writes one (3), and chunk's
//   backward writes the two halves into one tensor (read, write: 2): 5 accesses.
//   Recomputing the activation (recompute_modules "moe_act", :710) reruns the clamp and cat.
//
// - fp8 padding: fp8 GEMMs need each expert's rows aligned (16 rows per-tensor and blockwise,
//   32 MXFP8), so without router padding (moe_router_padding_for_quantization, off by
//   default; the Qwen3 and DeepSeek-V3 recipes set moe_router_padding_for_fp8 False,
//   Megatron-Bridge src/megatron/bridge/recipes/qwen/qwen3_moe.py:97,
//   recipes/deepseek/deepseek_v3.py:164 at 21d102f5e) the experts copy the permuted tokens
//   into a padded buffer before FC1 (experts.py:598-608, Fp8Padding) and the FC2 output back
//   (:728-729, Fp8Unpadding): read and write `h` each, forward, and the same in the backward.
//   HybridEP pads inside its permutation (moe_utils.py:1450-1463, skip_routed_expert_padding;
//   "This padding task is also essentially a D2D copy, and we also fuse it into the permute",
//   Megatron-LM b6bf017a docs/discussions/deepseek-v3-gb200-optimization/
//   deepseek-v3-gb200-optimization.md §2.5). TE copies unless every expert's count is already
//   aligned (transformer_engine/pytorch/module/fp8_padding.py:117-127 at d0067d0d), which
//   random balanced routing all but never gives.
MoeEagerBytes moe_eager_bytes_per_copy(const MoeEagerPasses& passes, double fc1_width, double hidden,
                                       double element_bytes) {
    MoeEagerBytes b;
    const double e = element_bytes;
    if (passes.quant_padding) {
        constexpr double kPadAccesses = 4;  // pad (read, write) before FC1, unpad (read, write) after FC2
        b.fwd += kPadAccesses * e * hidden;
        b.bwd += kPadAccesses * e * hidden;
    }
    if (passes.clamped_glu) {
        constexpr double kClampFwdAccesses = 4;  // clamp (read, write), cat (read, write)
        constexpr double kClampBwdAccesses = 5;  // clamp backward (read 2, write), chunk backward (read, write)
        b.fwd += kClampFwdAccesses * e * fc1_width;
        b.bwd += kClampBwdAccesses * e * fc1_width;
        b.moe_act_recompute += kClampFwdAccesses * e * fc1_width;
    }
    if (passes.expert_bias) {
        constexpr double kBiasFwdAccesses = 6;  // b·p (write), t + b·p (read 2, write), cat (read, write)
        constexpr double kBiasBwdAccesses = 8;  // g·p and g·b (read, write, read each), split backward (read, write)
        b.fwd += kBiasFwdAccesses * e * hidden;
        b.bwd += kBiasBwdAccesses * e * hidden;
    }
    return b;
}

}  // namespace meshwork::cost
