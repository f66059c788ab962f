// Memory passes of the routed experts that Megatron-LM's grouped MLP runs outside its fused
// kernels: PyTorch ops when the experts have biases or a clamped activation (gpt-oss), and
// the fp8 padding copies of the tokens per expert: the one owner of their byte counts, per token copy (one token routed
// to one expert), for the block cost (block_cost.cpp). docs/cost-model.md, "Expert eager
// passes", gives the sources.
#pragma once

namespace meshwork::cost {

// Bytes read plus written per token copy, forward and backward, and what recomputing the
// expert activation ("moe_act") reruns of them.
struct MoeEagerBytes {
    double fwd = 0;
    double bwd = 0;
    double moe_act_recompute = 0;
};

// `fc1_width`: the expert FC1's output width on this rank (2·d_e/etp when gated: the input of
// the activation); `hidden`: the FC2 output width h; `element_bytes`: the activation dtype.
// `clamped_glu`: the activation clamps its two halves before the fused kernel
// (ModelSpec::glu_clamp > 0); `expert_bias`: the experts' linear layers have biases;
// `quant_padding`: fp8 expert GEMMs whose dispatcher does not pad the tokens per expert
// itself (every dispatcher but HybridEP's), so the experts pad and unpad them in copies.
struct MoeEagerPasses {
    bool clamped_glu = false;
    bool expert_bias = false;
    bool quant_padding = false;
};
MoeEagerBytes moe_eager_bytes_per_copy(const MoeEagerPasses& passes, double fc1_width, double hidden,
                                       double element_bytes);

}  // namespace meshwork::cost
