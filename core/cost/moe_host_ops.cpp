#include "core/cost/moe_host_ops.h"

#include <algorithm>

#include "core/cost/launch_cost.h"

namespace meshwork::cost {

// Counted in Megatron-LM d98e8a64 (megatron/core/transformer/moe/), the path Megatron-Bridge's
// performance recipes run: Transformer Engine present, moe_router_fusion and moe_permute_fusion
// on, bias_activation_fusion on, grouped experts (TEGroupedMLP), router logits forced balanced
// as every published MoE benchmark is (router.py:863, moe_utils.py:1295 RandomSTE). One
// count per Python-level call that launches a kernel (or a collective, or a device-to-host
// copy); a fused Transformer Engine call whose internal kernel count the mirror does not show
// counts once, so the counts are lower bounds.
MoeHostOps moe_host_ops(const MoeHostShape& s) {
    const int local = std::max(1, s.local_experts);
    int fwd = 2;  // the MoE half's fused pre-MLP norm and its fused bias-dropout-add
    // Of them, those issued after the forward's device-to-host synchronisation, which the
    // host can only launch once the queue before it has drained: the bias-dropout-add here,
    // the exchanges, permutations and experts past the dispatcher's sync point below.
    int after_sync = 1;
    // Router (router.py:845-884, routing :746-833): the gating GEMM (:859, moe_utils.py:1394
    // te_general_gemm, fp32 output), the forced-balance random logits, the fused top-k with
    // score function (moe_utils.py:838).
    fwd += 3;
    // Auxiliary loss (router.py:804-833): fused scores for the loss (moe_utils.py:960), tokens
    // per expert (routing_map.sum and the all-reduce over tp×cp, moe_utils.py:269-297), the
    // fused loss (moe_utils.py:137), the loss attached and logged (router.py:440-447).
    if (s.aux_loss) fwd += 5;
    switch (s.dispatcher) {
        case MoeDispatcher::AllToAll:
            if (s.ep) {
                // token_dispatcher.py:543-592: routing_map.sum().long() (2), input splits (1),
                // the counts all-gathered over tp×ep (1), the local experts' slice made
                // contiguous (1), tokens per rank, per tp rank and per local expert (3); the
                // device-to-host copies of the splits and counts before the all-to-all
                // (:661, :702, :754, :790; the synchronisation is charged apart, launch_cost.h): 4.
                fwd += 8 + 4;
                fwd += 2;  // all-to-all of the tokens and of the probabilities (:705, :718)
                fwd += 1;  // combine all-to-all (:864)
                // The sync is "before_ep_alltoall" (:596): the three exchanges follow it.
                after_sync += 3;
            } else {
                fwd += 2 + 1;  // counts (:543, :597-602) and their copy to the host
            }
            fwd += 2 + 1;  // fused permute with probabilities (:671, moe_utils.py:430): row map, permute; unpermute (:891)
            after_sync += 1;  // the unpermute
            // Sort the received chunks by local expert and restore them (:782, :817).
            if (local > 1) {
                fwd += 2;
                after_sync += 2;
            }
            break;
        case MoeDispatcher::AllGather:
            // token_dispatcher.py:281-375: all-gather of tokens and probabilities (2), the
            // local map's counts copied to the host (:320, :326: 2), permute (2), unpermute
            // (1), reduce-scatter (1).
            fwd += 8;
            after_sync += 2 + 1 + 1;  // past the counts' copy (:320): permute, unpermute, reduce-scatter
            break;
        case MoeDispatcher::Flex:
            // token_dispatcher.py:1922-2040: metadata (_initialize_metadata, setup_metadata: 3),
            // dispatch and combine (2), the received counts copied to the host (1).
            fwd += 6;
            after_sync += 1;  // the combine, past the received counts' copy after the dispatch
            // DeepEP: the dispatch layout (1) and the permute (2) and unpermute (1) outside its
            // kernels (_DeepepManager, :1225-1470); HybridEP permutes inside its dispatch
            // (:1129-1182).
            if (s.backend == MoeFlexBackend::DeepEP) {
                fwd += 4;
                after_sync += 2 + 1;
            }
            break;
    }
    // Experts (experts.py:840-1045): the weighted bias-SwiGLU (1, :966); fp8 padding of the
    // tokens and probabilities and the unpadding (:899-905, :1043); the clamped GLU's two
    // clamps and cat (moe_eager_passes.h); the experts' biases per local expert (_apply_bias
    // :345-380, called at :1039: b·p and t + b·p per expert, one cat).
    int experts = 1;
    if (s.quant_padding) experts += 3;
    if (s.clamped_glu) experts += 3;
    if (s.expert_bias) experts += 2 * local + 1;
    fwd += experts;
    after_sync += experts;

    MoeHostOps ops;
    ops.framework_ops_fwd = fwd;
    ops.framework_ops_after_sync_fwd = after_sync;
    ops.framework_ops_bwd = static_cast<int>(fwd * kBackwardKernelsPerForward);
    // Transformer Engine's GroupedLinear launches one GEMM per local expert for each of FC1
    // and FC2 (general_grouped_gemm), and with fp8 quantises each expert's input first
    // (split_quantize); its backward launches a data- and a weight-gradient GEMM per expert and
    // linear, with fp8 after quantising each expert's output gradient.
    const int fp8 = s.fp8 ? 1 : 0;
    ops.expert_launches_fwd = 2 * local * (1 + fp8);
    ops.expert_launches_bwd = 2 * local * (2 + fp8);
    return ops;
}

double MoeLayerHost::host_s() const {
    double s = std::max(0, graph_launches) * kGraphLaunchS + std::max(0, attention_ops) * kMoeHostPerOpS;
    if (moe_captured) return s + kGraphLaunchS;
    return s + std::max(0, moe_framework_ops) * kMoeHostPerOpS + std::max(0, moe_expert_launches) * kGraphLaunchS;
}

double MoeLayerHost::after_sync_host_s() const {
    if (moe_captured) return 0;
    return std::max(0, moe_ops_after_sync) * kMoeHostPerOpS + std::max(0, moe_expert_launches) * kGraphLaunchS;
}

double moe_layer_exposed_host_s(const MoeLayerHost& host, double gpu_s, int syncs, double after_sync_gpu_s) {
    const double whole = lost_to_launches_s(host.gpu_kernels, host.host_s(), gpu_s, 0);
    // A synchronisation drains the queue: what the host launches after it only the kernels
    // after it can hide. Before it, the host runs ahead on the queue the previous layer left.
    const double after = syncs > 0 ? std::max(0.0, host.after_sync_host_s() - std::max(0.0, after_sync_gpu_s)) : 0.0;
    return std::max(whole, after) + std::max(0, syncs) * kSyncGapS;
}

RouterBytes router_bytes_per_token(double hidden, int experts, bool aux_loss) {
    const double e = std::max(0, experts);
    // fp32 logits written by the gating GEMM (4); the fused top-k reads them (4) and writes the
    // probabilities (4) and the bool routing map (1); the counts read the map (1).
    double scores = (4.0 + 4.0 + 4.0 + 1.0 + 1.0) * e;
    // The auxiliary loss's fused score pass reads the logits (4) and writes scores (4) and a
    // map (1); the fused loss reads the scores (4).
    if (aux_loss) scores += (4.0 + 4.0 + 1.0 + 4.0) * e;
    RouterBytes b;
    b.fwd = scores;
    // Backward: the same score passes' gradients, and RouterGatingLinearFunction.backward
    // (moe_utils.py:1428-1432 at d98e8a64) casts the saved bf16 input to fp32 (read 2, write 4)
    // and the input gradient back to bf16 (read 4, write 2).
    b.bwd = scores + 12.0 * std::max(0.0, hidden);
    return b;
}

}  // namespace meshwork::cost
