#include "core/cost/model_profile.h"

#include "core/cost/layer_kind_cost.h"
#include "core/model/layer_graph.h"

namespace meshwork::cost {

namespace {

// Fills one block profile (MoE or dense blocks) with the mean over those blocks of the
// layer graph: blocks of a hybrid model differ in their mixer and in having an MLP. Score
// FLOPs of local and sparse attention (a window or top-k) and of full-context terms (full
// attention, the sparse-attention indexer) are kept apart: local_share is the local part's
// share of the score FLOPs, so that score_flops_per_context × causal_context(seq) is their sum.
void profile_blocks(const ModelSpec& s, const LayerGraph& g, bool moe, BlockProfile& out) {
    int blocks = 0, mixers = 0;
    double full = 0, local = 0;
    for (int b = 0; b < s.num_layers; ++b) {
        if (s.is_moe_block(b) != moe) continue;
        ++blocks;
        if (s.mixer_kind(b) == MixerKind::None) continue;
        ++mixers;
        const MixerKindCost k = mixer_kind_cost(s, b, 2.0);
        out.scan_flops += k.scan_flops;
        out.mixer_activation_bytes += k.activation_bytes;
    }
    if (blocks == 0) return;
    out.present = true;
    for (const auto& l : g.layers) {
        if (l.block < 0 || l.kind == LayerKind::Mtp || s.is_moe_block(l.block) != moe) continue;
        switch (l.kind) {
            case LayerKind::Attention:
                out.attention_params += static_cast<double>(l.params);
                out.attention_gemm_flops += l.gemm_flops_per_token;
                full += l.full_context_flops_per_token_per_context;
                (l.local_tokens > 0 ? local : full) += l.attention_flops_per_token_per_context;
                if (l.local_tokens > 0) {
                    out.local_tokens = l.local_tokens;
                    out.chunked = l.chunked;
                }
                break;
            case LayerKind::Norm: out.norm_params += static_cast<double>(l.params); break;
            case LayerKind::Mlp:
                out.mlp_params += static_cast<double>(l.params);
                out.mlp_gemm_flops += l.gemm_flops_per_token;
                break;
            default: break;
        }
    }
    const double n = blocks;
    out.attention_params /= n;
    out.attention_gemm_flops /= n;
    out.norm_params /= n;
    out.mlp_params /= n;
    out.mlp_gemm_flops /= n;
    out.scan_flops /= n;
    out.mixer_activation_bytes /= n;
    out.mixer_share = mixers / n;
    out.score_flops_per_context = (full + local) / n;
    out.local_share = full + local > 0 ? local / (full + local) : 0;
}

double mlp_matrices(const ModelSpec& s) { return s.mlp == MlpKind::Gated ? 3.0 : 2.0; }

}  // namespace

ModelProfile build_model_profile(const ModelSpec& s) {
    ModelProfile m;
    const LayerGraph g = build_layer_graph(s);
    m.hidden = static_cast<double>(s.hidden_size);
    m.heads = s.num_heads;
    m.layers = s.num_layers;
    m.mtp_layers = s.mtp_layers;
    m.vocab = static_cast<double>(s.vocab_size);
    m.gated_mlp = s.mlp == MlpKind::Gated;
    m.sandwich_norms = s.sandwich_norms;
    m.glu_clamped = m.gated_mlp && s.glu_clamp > 0;
    m.hidden_dropout = s.hidden_dropout > 0;
    m.attention_dropout = s.attention_dropout > 0;
    m.ffn = static_cast<double>(s.ffn_hidden_size);
    if (s.is_hybrid() || s.double_wide_shared_mlp) {
        // The dense blocks' MLP width as a mean (the GEMM shapes and activations scale with
        // it): Nemotron-H's Mamba and attention layers have none, Gemma 4 E2B's KV-sharing
        // blocks twice ffn_hidden_size (ModelSpec::ffn_of).
        int dense = 0;
        double ffn = 0;
        for (int b = 0; b < s.num_layers; ++b) {
            if (s.is_moe_block(b)) continue;
            ++dense;
            if (s.has_mlp(b)) ffn += static_cast<double>(s.ffn_of(b));
        }
        if (dense > 0) m.ffn = ffn / dense;
    }
    if (s.uses_mla) {
        const auto& d = s.mla;
        m.head_dim = static_cast<double>(d.qk_nope_head_dim + d.qk_rope_head_dim);
        m.q_width = m.heads * m.head_dim;
        m.kv_width = m.heads * static_cast<double>(d.v_head_dim);
        m.mla_latent = static_cast<double>(d.kv_lora_rank + d.q_lora_rank);
        // The same matrices layer_graph.cpp counts as the attention's parameters.
        if (d.q_lora_rank > 0) {
            m.mla_q_lora = static_cast<double>(d.q_lora_rank);
            m.mla_q_up_width = m.q_width;
        }
        m.mla_kv_lora = static_cast<double>(d.kv_lora_rank);
        m.mla_kv_up_width = m.heads * static_cast<double>(d.qk_nope_head_dim + d.v_head_dim);
    } else if (s.global_attention.head_dim > 0 || s.kv_shared_layers > 0) {
        // Gemma 4: the full-attention blocks are wider than the sliding ones; the profile's
        // one attention block takes the mean over the attention blocks. Keys reused as values
        // (no v_proj) count half their K and V width, as the K/V projection's GEMM does; the
        // stored V of those blocks is undercounted by as much (one block in six). Blocks that
        // reuse an earlier block's keys and values (E2B, E4B) count none: no K/V projection,
        // nothing of their own to store.
        int blocks = 0;
        double head_dim = 0, kv = 0;
        for (int b = 0; b < s.num_layers; ++b) {
            if (s.mixer_kind(b) != MixerKind::Attention) continue;
            ++blocks;
            const double d = static_cast<double>(s.head_dim_of(b));
            head_dim += d;
            if (!s.shares_kv(b)) kv += static_cast<double>(s.kv_heads_of(b)) * d * (s.values_are_keys(b) ? 0.5 : 1.0);
        }
        m.head_dim = blocks > 0 ? head_dim / blocks : static_cast<double>(s.head_dim);
        m.q_width = m.heads * m.head_dim;
        m.kv_width = blocks > 0 ? kv / blocks : static_cast<double>(s.num_kv_heads) * m.head_dim;
    } else {
        m.head_dim = static_cast<double>(s.head_dim);
        m.q_width = m.heads * m.head_dim;
        m.kv_width = static_cast<double>(s.num_kv_heads) * m.head_dim;
    }

    profile_blocks(s, g, false, m.dense);
    profile_blocks(s, g, true, m.moe);
    if (m.moe.present) {
        m.moe.moe = true;
        const auto& e = s.moe;
        const double h = m.hidden;
        const double per_expert_bias =
            s.linear_bias ? (mlp_matrices(s) - 1) * static_cast<double>(e.expert_ffn_hidden) + h : 0;
        m.moe.expert_params =
            mlp_matrices(s) * h * static_cast<double>(e.expert_ffn_hidden) + per_expert_bias;
        m.moe.expert_gemm_flops = 2.0 * mlp_matrices(s) * h * static_cast<double>(e.expert_ffn_hidden);
        m.moe.router_params = h * e.num_experts + (e.router_bias || s.linear_bias ? e.num_experts : 0);
        m.moe.router_flops = 2.0 * h * e.num_experts;
        const double shared_bias =
            (s.linear_bias && e.shared_ffn_hidden > 0)
                ? (mlp_matrices(s) - 1) * static_cast<double>(e.shared_ffn_hidden) + h
                : 0;
        m.moe.mlp_params = e.shared_ffn_hidden > 0
                               ? mlp_matrices(s) * h * static_cast<double>(e.shared_ffn_hidden) +
                                     shared_bias + (e.shared_expert_gate ? h : 0)
                               : 0;
        m.moe.mlp_gemm_flops = 2.0 * mlp_matrices(s) * h * static_cast<double>(e.shared_ffn_hidden);
        m.experts = e.num_experts;
        m.expert_bias = s.linear_bias;  // the per-expert biases counted in expert_params above
        m.top_k = e.top_k;
        m.expert_ffn = static_cast<double>(e.expert_ffn_hidden);
        m.shared_ffn = static_cast<double>(e.shared_ffn_hidden);
    }

    for (const auto& l : g.layers) {
        // MTP modules are in the parameter count but not yet in the per-stage estimate, so
        // their FLOPs stay out of the MFU numerator too (see docs/cost-model.md).
        if (l.kind == LayerKind::Mtp) continue;
        if (l.local_tokens > 0) {
            m.local_score_flops_per_context += l.attention_flops_per_token_per_context;
            m.local_tokens = l.local_tokens;
            m.chunked = l.chunked;
        }
        if (l.kind == LayerKind::Embedding) {
            // Word embeddings and Gemma 4 E2B/E4B's per-layer table, both vocabulary-parallel.
            m.embedding_params = static_cast<double>(s.vocab_size * s.hidden_size) +
                                 static_cast<double>(s.per_layer_input.vocab) * s.num_layers *
                                     static_cast<double>(s.per_layer_input.width);
            m.position_params = static_cast<double>(l.params) - m.embedding_params;
        } else if (l.kind == LayerKind::LmHead) {
            m.head_params = static_cast<double>(l.params);
            m.head_gemm_flops = l.gemm_flops_per_token;
        } else if (l.kind == LayerKind::Norm && l.block < 0) {
            m.final_norm_params = static_cast<double>(l.params);
        }
        m.total_gemm_flops += l.gemm_flops_per_token;
        m.total_score_flops_per_context += l.attention_flops_per_token_per_context +
                                           l.full_context_flops_per_token_per_context;
        if (l.kind == LayerKind::Attention && l.block >= 0) {
            m.total_gemm_flops += mixer_kind_cost(s, l.block, 2.0).scan_flops;  // seq-independent
        }
    }
    m.tied_embeddings = s.tie_embeddings;
    m.params_total = static_cast<double>(g.params_total);
    m.params_active = static_cast<double>(g.params_active);
    return m;
}

double BlockProfile::causal_context(double seq) const {
    return (1.0 - local_share) * seq / 2.0 + local_share * causal_context_tokens(seq, local_tokens, chunked);
}

double model_flops_per_token(const ModelProfile& m, double seq_length) {
    // Causal attention: a token attends to seq/2 positions on average (LayerGraph's rule),
    // fewer in local-attention blocks.
    const double global = m.total_score_flops_per_context - m.local_score_flops_per_context;
    const double local = m.local_score_flops_per_context *
                         causal_context_tokens(seq_length, m.local_tokens, m.chunked);
    return 3.0 * (m.total_gemm_flops + global * seq_length / 2.0 + local);
}

}  // namespace meshwork::cost
