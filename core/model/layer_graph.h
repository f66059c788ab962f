// The layer list of a model with parameter counts and forward FLOPs per token.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/model_spec.h"

namespace meshwork {

enum class LayerKind { Embedding, Norm, Attention, Mlp, Moe, LmHead };

std::string to_string(LayerKind kind);

struct Layer {
    LayerKind kind = LayerKind::Norm;
    std::string name;   // "embedding", "block.3.attention", "block.3.moe", "final_norm", ...
    int block = -1;     // transformer block index; -1 for embedding, final norm and LM head
    std::int64_t params = 0;         // all parameters
    std::int64_t active_params = 0;  // parameters a token touches (top-k experts only)
    // Forward FLOPs per token of the weight GEMMs (2 per multiply-add of active weights).
    double gemm_flops_per_token = 0;
    // Forward FLOPs per token per token of context in score and context products (QK^T, AV),
    // without causal masking: multiply by the attended length (seq, or seq/2 when causal).
    double attention_flops_per_token_per_context = 0;
};

struct LayerGraph {
    std::vector<Layer> layers;

    std::int64_t params_total = 0;
    std::int64_t params_active = 0;
    std::int64_t params_embedding = 0;  // input embedding (+ positions), counted once if tied

    // Forward FLOPs per token at a sequence length, GEMMs plus attention; causal masking
    // halves the attention term when `causal`.
    [[nodiscard]] double forward_flops_per_token(std::int64_t seq_len, bool causal) const;
    // Forward FLOPs per token of one transformer block (attention + MLP/MoE + norms).
    [[nodiscard]] double block_forward_flops_per_token(int block, std::int64_t seq_len,
                                                       bool causal) const;
};

LayerGraph build_layer_graph(const ModelSpec& spec);

}  // namespace meshwork
