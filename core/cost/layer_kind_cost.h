// What a block's token mixer costs beyond its weight GEMMs, by kind: the recurrent scans of
// Mamba-2 and Gated DeltaNet (chunked: FLOPs per token independent of the context), and
// what each kind stores per token for the backward and holds as recurrent state. Softmax,
// sliding-window and sparse attention's context-dependent terms are LayerGraph's
// (attention_flops_per_token_per_context with the block's window or top-k, and the
// indexer's full_context_flops_per_token_per_context); model_profile.cpp sums these.
#pragma once

#include "core/model/model_spec.h"

namespace meshwork::cost {

struct MixerKindCost {
    // Forward FLOPs per token outside the weight GEMMs and the attention score products:
    // the chunked scan and the causal convolution.
    double scan_flops = 0;
    // Bytes per token the mixer keeps for its backward beyond a softmax-attention block's
    // Q, K, V and output (the activation formulas of memory_model.cpp), at `element_bytes`.
    double activation_bytes = 0;
    // Bytes of recurrent state per sequence (fp32 SSM / delta-rule state and the
    // convolution's last kernel-1 inputs): what inference holds instead of a KV cache.
    double state_bytes = 0;
};

MixerKindCost mixer_kind_cost(const ModelSpec& m, int block, double element_bytes);

// Gated DeltaNet's chunk in flash-linear-attention's chunked kernels (fla
// ops/gated_delta_rule/chunk.py: BT = 64), which Qwen3-Next's modeling calls.
constexpr double kGatedDeltaNetChunk = 64;

}  // namespace meshwork::cost
