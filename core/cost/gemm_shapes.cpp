#include "core/cost/gemm_shapes.h"

#include <algorithm>

#include "core/cost/block_cost.h"

namespace meshwork::cost {

BlockGemms block_gemms(const ModelProfile& m, const BlockProfile& b, const LayoutCosts& c,
                       const TrainingConfig& tr) {
    BlockGemms g;
    const double t = c.tp;
    const double T = c.tokens;
    const double h = m.hidden;
    const double seq = static_cast<double>(tr.seq_length);
    // The in-projection's width from the block's FLOPs: Q, K, V (and MLA's down/up
    // projections) are whatever is left after the output projection.
    // (Blocks without a mixer — hybrid models — have no output projection: mixer_share.)
    const double out_proj_flops = 2.0 * m.q_width * b.mixer_share * h;  // per token
    const double in_proj_n = std::max(0.0, (b.attention_gemm_flops - out_proj_flops) / (2.0 * h));
    g.qkv = {T, in_proj_n / t, h, 1};
    if (b.mixer_share > 0) g.proj = {T, h, m.q_width * b.mixer_share / t, 1};
    if (m.mla_q_lora > 0) g.mla_q_up = {T, m.mla_q_up_width / t, m.mla_q_lora, 1};
    if (m.mla_kv_lora > 0) g.mla_kv_up = {T, m.mla_kv_up_width / t, m.mla_kv_lora, 1};
    if (!tr.flash_attention) {
        // Batched over (micro-batch × local heads), full s×s: no causal skipping.
        const double local_heads = m.heads / t;
        const double q_len = seq / c.cp;
        const double batch = T / std::max(1.0, q_len) * local_heads;
        g.core_qk = {q_len, seq, m.head_dim, batch};
        g.core_av = {q_len, m.head_dim, seq, batch};
    }
    const double gate = m.gated_mlp ? 2.0 : 1.0;  // FC1 width multiplier
    const double shared_ffn = b.moe ? m.shared_ffn : m.ffn;
    if (shared_ffn > 0) {
        g.fc1 = {T, gate * shared_ffn / t, h, 1};
        g.fc2 = {T, h, shared_ffn / t, 1};
    }
    if (b.moe) {
        const double sp_share = c.sequence_parallel ? t : 1.0;
        const double capacity = tr.moe_capacity_factor > 0 ? tr.moe_capacity_factor : 1.0;
        g.router = {T / sp_share, std::max(1.0, static_cast<double>(m.experts)), h, 1};
        const double local_experts = std::max(1.0, static_cast<double>(m.experts) / c.ep);
        const double copies = T * m.top_k * c.etp / t * capacity;  // token copies per rank
        const double per_expert = copies / local_experts;
        g.expert_fc1 = {per_expert, gate * m.expert_ffn / c.etp, h, local_experts, kTeGroupedGemmStreams};
        g.expert_fc2 = {per_expert, h, m.expert_ffn / c.etp, local_experts, kTeGroupedGemmStreams};
    }
    return g;
}

GemmShape head_gemm(const ModelProfile& m, const LayoutCosts& c) {
    return {c.tokens, m.vocab / c.tp, m.hidden, 1};
}

}  // namespace meshwork::cost
