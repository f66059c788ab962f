// The GEMMs one rank runs for a transformer block and the output head, per micro-batch and
// forward pass, as the cost model times them: the one owner of their shapes, for the block
// cost (block_cost.cpp) and for calibration, which fits the GEMM efficiency curve to
// measured operations of known shape (profiler/analysis/calibrate.cpp).
#pragma once

#include "core/cost/kernel_time.h"
#include "core/cost/model_profile.h"
#include "core/layout/layout.h"

namespace meshwork::cost {

struct LayoutCosts;

// Forward shapes; the backward runs each twice (input and weight gradients), the same size.
// Transformer Engine's GroupedLinear (Megatron-LM's TEGroupedMLP experts) issues one cuBLAS
// GEMM per local expert, round-robin over 4 compute streams, so at most 4 run side by side:
// `multi_stream_cublas_gemm`, transformer_engine/common/gemm/cublaslt_gemm.cu:969-1010, with
// `num_compute_streams = 4` in common/util/multi_stream.cpp:52-54 (TE v2.15, 42b84005; the
// same at v2.9, 70f53666, :924-965). `nvte_multi_tensor_gemm` (:1051-1070) takes that path on
// every GPU but Hopper with NVTE_USE_CUTLASS_GROUPED_GEMM set.
constexpr double kTeGroupedGemmStreams = 4;

struct BlockGemms {
    GemmShape qkv;      // Q, K, V in-projection (column-parallel)
    GemmShape proj;     // attention output projection (row-parallel)
    GemmShape core_qk;  // unfused core attention: scores, batched over micro-batch × local heads
    GemmShape core_av;  //   and context; absent with fused (flash) attention
    GemmShape fc1;      // dense MLP (or shared experts): up (and gate) projection
    GemmShape fc2;      //   and down projection
    GemmShape router;   // MoE router
    GemmShape expert_fc1, expert_fc2;  // routed experts, batched over the local experts
    // MLA's up-projections (part of `qkv`'s width; rerun alone by "mla_up_proj"
    // recomputation); absent without MLA.
    GemmShape mla_q_up, mla_kv_up;
};

// `c` needs the axis sizes, tokens and sequence_parallel of prepare_layout_costs.
BlockGemms block_gemms(const ModelProfile& m, const BlockProfile& b, const LayoutCosts& c,
                       const TrainingConfig& training);
// The output head (vocabulary-parallel).
GemmShape head_gemm(const ModelProfile& m, const LayoutCosts& c);

}  // namespace meshwork::cost
