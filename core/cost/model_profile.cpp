#include "core/cost/model_profile.h"

#include "core/model/layer_graph.h"

namespace meshwork::cost {

namespace {

// Fills one block profile from the layers of block `b` of the layer graph.
void profile_block(const LayerGraph& g, int b, BlockProfile& out) {
    out.present = true;
    for (const auto& l : g.layers) {
        if (l.block != b) continue;
        switch (l.kind) {
            case LayerKind::Attention:
                out.attention_params = static_cast<double>(l.params);
                out.attention_gemm_flops = l.gemm_flops_per_token;
                out.score_flops_per_context = l.attention_flops_per_token_per_context;
                break;
            case LayerKind::Norm: out.norm_params += static_cast<double>(l.params); break;
            case LayerKind::Mlp:
                out.mlp_params = static_cast<double>(l.params);
                out.mlp_gemm_flops = l.gemm_flops_per_token;
                break;
            default: break;
        }
    }
}

// The share of blocks of one kind (MoE or dense) whose attention is local.
void profile_local_attention(const ModelSpec& s, bool moe, BlockProfile& out) {
    int blocks = 0, local = 0;
    for (int b = 0; b < s.num_layers; ++b) {
        if (s.is_moe_block(b) != moe) continue;
        ++blocks;
        local += s.is_local_attention_block(b) ? 1 : 0;
    }
    if (blocks == 0 || local == 0) return;
    out.local_share = static_cast<double>(local) / blocks;
    out.chunked = s.attention_chunk > 0;
    out.local_tokens = out.chunked ? s.attention_chunk : s.sliding_window;
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
    m.glu_clamped = m.gated_mlp && s.glu_clamp > 0;
    m.hidden_dropout = s.hidden_dropout > 0;
    m.attention_dropout = s.attention_dropout > 0;
    m.ffn = static_cast<double>(s.ffn_hidden_size);
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
    } else {
        m.head_dim = static_cast<double>(s.head_dim);
        m.q_width = m.heads * m.head_dim;
        m.kv_width = static_cast<double>(s.num_kv_heads) * m.head_dim;
    }

    int first_dense = -1, first_moe = -1;
    for (int b = 0; b < s.num_layers; ++b) {
        if (s.is_moe_block(b)) {
            if (first_moe < 0) first_moe = b;
        } else if (first_dense < 0) {
            first_dense = b;
        }
    }
    if (first_dense >= 0) {
        profile_block(g, first_dense, m.dense);
        profile_local_attention(s, false, m.dense);
    }
    if (first_moe >= 0) {
        profile_block(g, first_moe, m.moe);
        profile_local_attention(s, true, m.moe);
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
            m.embedding_params = static_cast<double>(s.vocab_size * s.hidden_size);
            m.position_params = static_cast<double>(l.params) - m.embedding_params;
        } else if (l.kind == LayerKind::LmHead) {
            m.head_params = static_cast<double>(l.params);
            m.head_gemm_flops = l.gemm_flops_per_token;
        } else if (l.kind == LayerKind::Norm && l.block < 0) {
            m.final_norm_params = static_cast<double>(l.params);
        }
        m.total_gemm_flops += l.gemm_flops_per_token;
        m.total_score_flops_per_context += l.attention_flops_per_token_per_context;
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
