// The shapes one rank works with: the model's sizes, their local shards under tp/ep, and the
// token block of a micro-batch (sequence pieces under cp, row shards under sp).
#pragma once

#include <vector>

#include "core/engine/engine_options.h"
#include "core/layout/layout.h"

namespace meshwork::engine {

struct ModelDims {
    // Model
    int hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0, layers = 0;
    int experts = 0, top_k = 0, expert_ffn = 0;
    float rms_eps = 0, rope_theta = 0, aux_coef = 0, capacity_factor = 0;
    // Parallelism
    int tp = 1, cp = 1, ep = 1;
    bool sp = false;
    // Local shards
    int heads_local = 0, kv_heads_local = 0, ffn_local = 0, vocab_local = 0;
    // Tokens: a micro-batch is mbs sequences; this rank holds seq_local positions of each
    // (all of them without cp); rows = mbs·seq_local; region_rows = rows / tp under sp.
    int mbs = 1, seq = 0, seq_local = 0, rows = 0, region_rows = 0;
    int global_batch = 1;

    [[nodiscard]] int q_cols() const { return heads_local * head_dim; }
    [[nodiscard]] int kv_cols() const { return kv_heads_local * head_dim; }
};

// Throws InputError naming the model field for what the engine does not run.
ModelDims make_dims(const Layout& layout, const EngineOptions& options);

// Global positions of the seq_local tokens that context-parallel rank `cp_rank` holds of
// each sequence: chunks cp_rank and 2·cp−1−cp_rank of 2·cp (causal load balancing).
std::vector<int> cp_positions(int seq, int cp, int cp_rank);

}  // namespace meshwork::engine
