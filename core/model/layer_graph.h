// The layer list of a model with parameter counts and forward FLOPs per token.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/model_spec.h"

namespace meshwork {

// Mtp: one DeepSeek-V3 multi-token-prediction module (its norms, projection and block; it
// shares the embedding and the output head), held by the last pipeline stage.
enum class LayerKind { Embedding, Norm, Attention, Mlp, Moe, LmHead, Mtp };

std::string to_string(LayerKind kind);

struct Layer {
    LayerKind kind = LayerKind::Norm;
    std::string name;   // "embedding", "block.3.attention", "block.3.moe", "final_norm", "mtp.0"
    int block = -1;     // transformer block index; -1 for embedding, final norm, LM head, MTP
    std::int64_t params = 0;         // all parameters
    std::int64_t active_params = 0;  // parameters a token touches (top-k experts only)
    // Forward FLOPs per token of the weight GEMMs (2 per multiply-add of active weights).
    double gemm_flops_per_token = 0;
    // Forward FLOPs per token per token of context in score and context products (QK^T, AV),
    // without causal masking: multiply by the attended length (seq, or seq/2 when causal).
    double attention_flops_per_token_per_context = 0;
    // Forward FLOPs per token per token of causal context that always span the whole
    // context, beside a local or sparse attention term above (DeepSeek sparse attention's
    // lightning indexer scores every earlier key).
    double full_context_flops_per_token_per_context = 0;
    // The block's token mixer (attention layers of hybrid models; Attention otherwise).
    MixerKind mixer = MixerKind::Attention;
    // Local attention of this layer (ModelSpec's window or chunk, or the top-k keys sparse
    // attention selects); 0 = the whole context.
    std::int64_t local_tokens = 0;
    bool chunked = false;
    // Keys a query attends to on average: seq (or the causal average) capped by the window.
    [[nodiscard]] double context(std::int64_t seq_len, bool causal) const;
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
