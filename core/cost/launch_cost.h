// Host and launch cost of one layer pass (docs/cost-model.md, "Host and launch cost per layer
// pass"). The host issues a layer's kernels one by one; while it runs ahead of the GPU this
// costs nothing, but a half-layer whose kernels take less GPU time than the host needs to
// issue them leaves the GPU waiting for the difference, and a device-to-host synchronisation
// (the dropless MoE dispatcher's token counts) drains the GPU's queue so that the host can no
// longer run ahead. CUDA graphs replace the launches of what they capture by one graph launch.
//
// Between two kernels of one stream the GPU itself idles a little even when the host is ahead
// (kKernelGapS): a pass pays that gap per kernel, or the host's excess, whichever is larger.
//
// Every constant is measured on one H100 trace (AMD-AGI/TraceLens 171dd747,
// tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz, a PyTorch eager forward of a
// 24-layer model on "NVIDIA H100 80GB HBM3"; the measurement is described beside each).
#pragma once

#include "core/layout/speed_knobs.h"

namespace meshwork::cost {

// Host time per kernel of a framework-driven layer: a decoder layer's forward spans 1,244.8 µs
// of host time (median over the 24 `Qwen2DecoderLayer.forward` spans, python_function events)
// and launches 49 kernels (cudaLaunchKernel, cudaLaunchKernelExC and cudaMemsetAsync events
// inside the span, median): 25.4 µs per kernel (Python, dispatcher, the launch call itself).
inline constexpr double kHostPerKernelS = 25.4e-6;
// One launch call without the framework around it: median duration of the 1,196 launch calls
// of the trace (3.4 µs): what a captured graph costs to replay per capture region.
inline constexpr double kGraphLaunchS = 3.4e-6;
// Kernels a layer's halves launch in the forward (the trace's medians per layer: attention
// module 23 and its input norm 8, MLP module 8 and its norm 8, one residual add each).
// The backward launches twice as many (an input- and a weight-gradient kernel per GEMM, a
// gradient kernel per element-wise op): an assumption, not measured (the trace is a forward).
inline constexpr int kAttentionKernelsFwd = 32;
inline constexpr int kMlpKernelsFwd = 17;
inline constexpr double kBackwardKernelsPerForward = 2.0;
// GPU idle time one device-to-host synchronisation adds: the trace's one D2H copy
// (cudaMemcpyAsync) to the return of its cudaStreamSynchronize takes 20.6 µs; the first
// kernel after it starts a median 6.5 µs after its launch call when the GPU is idle (24 such
// launches in the trace); in between the host issues the next op (25.4 µs above).
inline constexpr double kSyncGapS = 20.6e-6 + 6.5e-6 + kHostPerKernelS;
// GPU idle time between two back-to-back kernels of one stream while the host is ahead: the
// median over the trace's 838 kernel pairs whose second launch call returned before the first
// kernel ended and with no other stream's work ending between them (bench/kernel-gaps.py),
// 1.18 µs (quartiles 1.06, 1.89; ctest kernel_gap_measured re-measures it from
// tests/fixtures/kineto). The same script gives 1.15 µs on HTA's NCCL test trace
// (827 pairs) and 2 µs on DeepSeek's H800 training profile, whose timestamps are whole
// microseconds (897 pairs). Assumed the same inside a CUDA graph (not measured here).
inline constexpr double kKernelGapS = 1.18e-6;

// One half of a layer (attention, or MLP / MoE) in one direction.
struct HalfPass {
    double gpu_s = 0;        // the half's kernel time
    int kernels = 0;         // kernels it launches
    bool captured = false;   // inside a CUDA graph
    int syncs = 0;           // device-to-host synchronisations in it (not capturable)
};

// GPU time lost to launching `kernels` kernels that the host issues in `host_s` while they
// run for `gpu_s`: their gaps (kKernelGapS each) or the host's excess over the GPU,
// max(0, host − gpu), whichever is larger; plus kSyncGapS per synchronisation. The one rule
// of a dense layer (exposed_layer_launch_s) and of an MoE layer (moe_host_ops.h).
double lost_to_launches_s(int kernels, double host_s, double gpu_s, int syncs);

// GPU time lost to launching a dense layer's two halves in one direction: the host runs ahead
// of the GPU across the layer (no synchronisation stops it), so the host's excess in one half
// is hidden by the other half's long kernels (a captured half: one graph launch whose GPU
// time covers the next half's launches): lost_to_launches_s over the layer, each half's host
// being one graph launch when captured, else kHostPerKernelS per kernel.
double exposed_layer_launch_s(const HalfPass& attention, const HalfPass& mlp);

// Whether CUDA graphs capture a region of a layer (attn, a dense layer's mlp, a capacity-padded
// layer's moe): full iteration does; per layer does when it captures the whole layer or lists
// the region (--cuda-graph-modules).
inline bool graphs_capture(CudaGraphs g, const GraphModules& m, GraphModule region) {
    return g == CudaGraphs::FullIteration || (g == CudaGraphs::PerLayer && m.captures(region));
}
// Whether they capture an MoE half: only with static shapes, i.e. capacity-padded routing
// (Megatron-LM d98e8a64 transformer_config.py:2844, "moe cuda graph is only supported with
// drop-padding MoE"; moe/README.md:514) or HybridEP's per-rank budget. A dropless MoE half keeps
// its launches and its synchronisation whatever the setting.
inline bool graphs_capture_moe(CudaGraphs g, bool dropless, const GraphModules& m) {
    return !dropless && graphs_capture(g, m, GraphModule::Moe);
}

}  // namespace meshwork::cost
