// What one MoE layer pass asks of the host, and the router's memory passes: the one owner of
// the kernel counts of Megatron-LM's MoE layer (router, token dispatcher, grouped experts,
// combine) and of the host time per framework op measured on a production MoE training
// trace. block_cost.cpp charges them through launch_cost.h's exposed-launch formula, over the
// whole layer (docs/cost-model.md, "MoE layer host ops and router").
#pragma once

#include "core/layout/layout.h"

namespace meshwork::cost {

// Host time per framework-issued kernel of an MoE layer pass, measured on DeepSeek's published
// training profile (deepseek-ai/profile-data train.json, PyTorch profiler, "NVIDIA H800", EP64,
// 4 MoE layers, a forward and a backward chunk): over the main thread's ten annotated regions
// of each layer (attn, mlp, dispatch, combine; F, B, W) except dispatch(F), whose host span is
// a blocking wait for DeepEP's counts, the regions' host time over the launch calls inside them
// (cudaLaunchKernel, cudaLaunchKernelExC, cudaMemsetAsync, cudaMemcpyAsync): 10,622 µs and 232.8
// launches per layer, 45.6 µs per launch (forward regions 46.4, backward 45.2).
inline constexpr double kMoeHostPerOpS = 45.6e-6;

// Which MoE layer: what changes the number of ops Megatron-LM issues.
struct MoeHostShape {
    MoeDispatcher dispatcher = MoeDispatcher::AllToAll;
    MoeFlexBackend backend = MoeFlexBackend::DeepEP;
    bool ep = false;            // expert parallelism (ep > 1): dispatch metadata and exchanges
    int local_experts = 1;      // experts on this rank (experts / ep)
    bool fp8 = false;           // fp8 expert GEMMs (per-expert quantisation)
    bool quant_padding = false; // fp8 padding copies outside the dispatcher (moe_eager_passes.h)
    bool expert_bias = false;   // experts' linear layers have biases (per-expert eager adds)
    bool clamped_glu = false;   // clamped GLU: two clamps and a cat before the fused kernel
    bool aux_loss = true;       // a load-balancing loss on the router scores (training)
};

// Kernels one MoE half issues in one direction: `framework_ops` from Python, one framework op
// each (kMoeHostPerOpS), and `expert_launches` from Transformer Engine's C++ loops over the
// local experts (a bare launch call each, launch_cost.h kGraphLaunchS). The half's
// pre-MLP norm and residual add are included.
struct MoeHostOps {
    int framework_ops_fwd = 0;
    int framework_ops_after_sync_fwd = 0;  // of those, issued after the forward's host sync
    int framework_ops_bwd = 0;
    int expert_launches_fwd = 0;
    int expert_launches_bwd = 0;
};
MoeHostOps moe_host_ops(const MoeHostShape& shape);

// The host's side of one MoE layer pass in one direction: what it launches.
struct MoeLayerHost {
    int graph_launches = 0;        // captured regions replayed (CUDA graphs), kGraphLaunchS each
    int attention_ops = 0;         // the attention half's framework ops, when not captured
    bool moe_captured = false;     // the MoE half inside a graph (capacity-padded routing only)
    int moe_framework_ops = 0;     // MoeHostOps, when not captured
    int moe_expert_launches = 0;
    int gpu_kernels = 0;           // kernels the layer runs, captured or not (kKernelGapS each)
    int moe_ops_after_sync = 0;    // of moe_framework_ops, issued after the forward's host sync
    [[nodiscard]] double host_s() const;
    // The host's launches after the synchronisation: those framework ops and the experts'.
    [[nodiscard]] double after_sync_host_s() const;
};
// GPU time the host leaves idle in one MoE layer pass whose kernels, collectives included,
// take `gpu_s`: the larger of its kernels' gaps and max(0, host − gpu) over the layer and,
// with a device-to-host synchronisation, max(0, host − gpu) after it (`after_sync_gpu_s`: the
// GPU time of the MoE half, which follows the sync: the queue is empty there, so the
// attention half's kernels cannot hide those launches), plus launch_cost.h's gap per
// synchronisation.
double moe_layer_exposed_host_s(const MoeLayerHost& host, double gpu_s, int syncs, double after_sync_gpu_s = 0);

// Bytes the router's kernels outside its gating GEMM read and write per token: fp32 scores
// over `experts` (top-k, the auxiliary loss's own score pass), and in the backward the fp32
// casts of the gating GEMM's input and input gradient over `hidden`.
struct RouterBytes {
    double fwd = 0;
    double bwd = 0;
};
RouterBytes router_bytes_per_token(double hidden, int experts, bool aux_loss);

}  // namespace meshwork::cost
