#include "core/model/layer_graph.h"

#include <algorithm>

namespace meshwork {

std::string to_string(LayerKind kind) {
    switch (kind) {
        case LayerKind::Embedding: return "embedding";
        case LayerKind::Norm: return "norm";
        case LayerKind::Attention: return "attention";
        case LayerKind::Mlp: return "mlp";
        case LayerKind::Moe: return "moe";
        case LayerKind::LmHead: return "lm_head";
        case LayerKind::Mtp: return "mtp";
    }
    return "?";
}

namespace {

std::int64_t norm_params(const ModelSpec& m, std::int64_t width) {
    return m.norm == NormKind::LayerNorm ? 2 * width : width;
}

// One MLP (dense or gated) of a given hidden size: weights and biases.
std::int64_t mlp_params(const ModelSpec& m, std::int64_t ffn) {
    const std::int64_t h = m.hidden_size;
    const std::int64_t matrices = m.mlp == MlpKind::Gated ? 3 : 2;
    std::int64_t p = matrices * h * ffn;
    if (m.linear_bias) p += (matrices - 1) * ffn + h;
    return p;
}

// DeepSeek sparse attention's lightning indexer (DeepSeek-V3.2-Exp inference/model.py,
// class Indexer): wq_b from the query latent to index_heads × index_head_dim, wk from h to
// one index_head_dim key, its LayerNorm (weight and bias), and weights_proj from h to one
// weight per index head.
std::int64_t indexer_params(const ModelSpec& m) {
    const auto& d = m.sparse_attention;
    const std::int64_t q_in = m.mla.q_lora_rank > 0 ? m.mla.q_lora_rank : m.hidden_size;
    return q_in * d.index_heads * d.index_head_dim + m.hidden_size * d.index_head_dim +
           2 * d.index_head_dim + m.hidden_size * d.index_heads;
}

// Softmax attention (MHA/GQA/MLA), and sparse attention: MLA plus its indexer.
Layer attention_layer(const ModelSpec& m, int block) {
    Layer l;
    l.kind = LayerKind::Attention;
    l.block = block;
    l.mixer = m.mixer_kind(block);
    l.name = "block." + std::to_string(block) + ".attention";
    const std::int64_t h = m.hidden_size;
    std::int64_t gemm_params = 0;
    std::int64_t other = 0;
    double score_dims = 0;  // per head: qk dim + v dim, times heads
    if (m.uses_mla) {
        const auto& d = m.mla;
        const std::int64_t qk_head = d.qk_nope_head_dim + d.qk_rope_head_dim;
        if (d.q_lora_rank > 0) {
            gemm_params += h * d.q_lora_rank + d.q_lora_rank * m.num_heads * qk_head;
            other += d.q_lora_rank;  // q_a_layernorm
        } else {
            gemm_params += h * m.num_heads * qk_head;
        }
        gemm_params += h * (d.kv_lora_rank + d.qk_rope_head_dim);
        other += d.kv_lora_rank;  // kv_a_layernorm
        gemm_params += d.kv_lora_rank * m.num_heads * (d.qk_nope_head_dim + d.v_head_dim);
        gemm_params += static_cast<std::int64_t>(m.num_heads) * d.v_head_dim * h;
        score_dims = static_cast<double>(m.num_heads) * static_cast<double>(qk_head + d.v_head_dim);
    } else {
        // Per block: Gemma 4's full-attention blocks have their own head width and KV heads.
        const std::int64_t head_dim = m.head_dim_of(block);
        const std::int64_t q = static_cast<std::int64_t>(m.num_heads) * head_dim;
        const std::int64_t kv = static_cast<std::int64_t>(m.kv_heads_of(block)) * head_dim;
        // An output gate (Qwen3-Next) doubles q_proj: query and gate per head. Keys reused as
        // values (Gemma 4's attention_k_eq_v) leave out v_proj.
        // Gemma 4 E2B/E4B's KV-sharing blocks project queries only.
        const std::int64_t q_out = m.attention_output_gate ? 2 * q : q;
        const bool shared = m.shares_kv(block);
        const std::int64_t kv_projections = shared ? 0 : (m.values_are_keys(block) ? 1 : 2);
        gemm_params = h * q_out + kv_projections * h * kv + q * h;
        if (m.qkv_bias || m.linear_bias) other += q_out + kv_projections * kv;
        if (m.linear_bias) other += h;
        if (m.qk_norm) {
            // Q's and K's norm weights (a KV-sharing block has no k_norm).
            other += m.qk_norm_full_width ? q + (shared ? 0 : kv) : (shared ? 1 : 2) * head_dim;
        }
        if (m.per_layer_input.width > 0) {
            // The block's per-layer input: gate (h → width), projection (width → h), norm of h.
            gemm_params += 2 * h * m.per_layer_input.width;
            other += h;
        }
        score_dims = 2.0 * static_cast<double>(q);
    }
    if (m.attention_sinks) other += m.num_heads;  // one learned sink logit per head
    if (m.is_local_attention_block(block)) {
        l.local_tokens = m.attention_chunk > 0 ? m.attention_chunk : m.sliding_window;
        l.chunked = m.attention_chunk > 0;
    }
    if (l.mixer == MixerKind::SparseAttention) {
        // The indexer's GEMMs, and its scores against every earlier key: a dot product per
        // index head and the weighted sum over heads (2·H_I·(d_I + 1) per key). Attention
        // itself runs over the top-k keys: a window of k in FLOPs.
        const auto& d = m.sparse_attention;
        const std::int64_t ip = indexer_params(m);
        other += 2 * d.index_head_dim;  // the k LayerNorm (counted in ip too)
        gemm_params += ip - 2 * d.index_head_dim;
        const bool shared = block < static_cast<int>(d.shared_index.size()) && block >= 0 &&
                            d.shared_index[static_cast<std::size_t>(block)];
        l.full_context_flops_per_token_per_context =
            shared ? 0.0 : 2.0 * d.index_heads * static_cast<double>(d.index_head_dim + 1);
        l.local_tokens = d.topk;
        l.chunked = false;
    }
    l.params = gemm_params + other;
    l.active_params = l.params;
    l.gemm_flops_per_token = 2.0 * static_cast<double>(gemm_params);
    l.attention_flops_per_token_per_context = 2.0 * score_dims;
    return l;
}

// Gated DeltaNet (transformers modeling_qwen3_next.py, Qwen3NextGatedDeltaNet): in_proj_qkvz
// (h → 2·nk·dk + 2·nv·dv), in_proj_ba (h → 2·nv), a depthwise causal convolution over
// q, k, v (no bias), dt_bias and A_log per value head, a gated RMSNorm of dv, out_proj.
// Its recurrence's FLOPs depend on the chunk, not the context: core/cost/layer_kind_cost.
Layer linear_attention_layer(const ModelSpec& m, int block) {
    Layer l;
    l.kind = LayerKind::Attention;
    l.mixer = MixerKind::LinearAttention;
    l.block = block;
    l.name = "block." + std::to_string(block) + ".gated_deltanet";
    const auto& d = m.linear_attention;
    const std::int64_t h = m.hidden_size;
    const std::int64_t qk = static_cast<std::int64_t>(d.num_key_heads) * d.key_head_dim;
    const std::int64_t v = static_cast<std::int64_t>(d.num_value_heads) * d.value_head_dim;
    const std::int64_t gemm = h * (2 * qk + 2 * v) + h * 2 * d.num_value_heads + v * h;
    const std::int64_t conv = (2 * qk + v) * d.conv_kernel;
    l.params = gemm + conv + 2 * d.num_value_heads + d.value_head_dim;
    l.active_params = l.params;
    l.gemm_flops_per_token = 2.0 * static_cast<double>(gemm);
    return l;
}

// Mamba-2 (transformers modeling_nemotron_h.py, NemotronHMamba2Mixer): in_proj
// (h → z, x, B, C, dt: 2·inner + 2·G·N + H), a causal convolution over x, B, C with a bias,
// dt_bias, A_log and D per head, a gated RMSNorm of inner, out_proj.
Layer mamba_layer(const ModelSpec& m, int block) {
    Layer l;
    l.kind = LayerKind::Attention;
    l.mixer = MixerKind::Mamba2;
    l.block = block;
    l.name = "block." + std::to_string(block) + ".mamba";
    const auto& d = m.mamba;
    const std::int64_t h = m.hidden_size;
    const std::int64_t gemm = h * (d.inner() + d.conv_dim() + d.num_heads) + d.inner() * h;
    const std::int64_t conv = d.conv_dim() * d.conv_kernel + d.conv_dim();
    l.params = gemm + conv + 3 * static_cast<std::int64_t>(d.num_heads) + d.inner();
    l.active_params = l.params;
    l.gemm_flops_per_token = 2.0 * static_cast<double>(gemm);
    return l;
}

// The block's token mixer, whatever its kind.
Layer mixer_layer(const ModelSpec& m, int block) {
    switch (m.mixer_kind(block)) {
        case MixerKind::LinearAttention: return linear_attention_layer(m, block);
        case MixerKind::Mamba2: return mamba_layer(m, block);
        default: return attention_layer(m, block);
    }
}

Layer dense_mlp_layer(const ModelSpec& m, int block) {
    Layer l;
    l.kind = LayerKind::Mlp;
    l.block = block;
    l.name = "block." + std::to_string(block) + ".mlp";
    const std::int64_t ffn = m.ffn_of(block);
    l.params = mlp_params(m, ffn);
    l.active_params = l.params;
    const std::int64_t matrices = m.mlp == MlpKind::Gated ? 3 : 2;
    l.gemm_flops_per_token = 2.0 * static_cast<double>(matrices * m.hidden_size * ffn);
    return l;
}

Layer moe_layer(const ModelSpec& m, int block) {
    Layer l;
    l.kind = LayerKind::Moe;
    l.block = block;
    l.name = "block." + std::to_string(block) + ".moe";
    const auto& e = m.moe;
    const std::int64_t h = m.hidden_size;
    // The router's bias: DeepSeek-V3's score correction, or a plain linear bias (gpt-oss).
    const std::int64_t router =
        h * e.num_experts + (e.router_bias || m.linear_bias ? e.num_experts : 0);
    const std::int64_t expert = mlp_params(m, e.expert_ffn_hidden);
    const std::int64_t shared = e.shared_ffn_hidden > 0 ? mlp_params(m, e.shared_ffn_hidden) : 0;
    const std::int64_t shared_gate = e.shared_expert_gate ? h : 0;
    l.params = router + e.num_experts * expert + shared + shared_gate;
    l.active_params = router + e.top_k * expert + shared + shared_gate;
    const std::int64_t matrices = m.mlp == MlpKind::Gated ? 3 : 2;
    const double expert_gemm = static_cast<double>(matrices * h * e.expert_ffn_hidden);
    const double shared_gemm = static_cast<double>(matrices * h * e.shared_ffn_hidden);
    l.gemm_flops_per_token = 2.0 * (static_cast<double>(h * e.num_experts) +
                                    e.top_k * expert_gemm + shared_gemm +
                                    static_cast<double>(shared_gate));
    return l;
}

Layer norm_layer(const ModelSpec& m, int block, const std::string& name) {
    Layer l;
    l.kind = LayerKind::Norm;
    l.block = block;
    l.name = name;
    l.params = norm_params(m, m.hidden_size);
    l.active_params = l.params;
    return l;
}

// One multi-token-prediction module (DeepSeek-V3, Megatron-LM's MultiTokenPredictionLayer):
// norms of the hidden state and of the next token's embedding, a 2h -> h projection, one
// transformer block like the last one, and a final norm; embedding and head are shared.
// FLOPs: the block and the projection, plus the shared head's GEMM once more.
Layer mtp_layer(const ModelSpec& m, int index) {
    Layer l;
    l.kind = LayerKind::Mtp;
    l.name = "mtp." + std::to_string(index);
    const std::int64_t h = m.hidden_size;
    const int last = m.num_layers - 1;
    // MTP blocks attend (DeepSeek-V3, Qwen3-Next; Nemotron-H's mtp_layers_block_type
    // defaults to attention then MoE), whatever the last block's mixer.
    const Layer attn = attention_layer(m, last);
    const Layer ffn = m.is_moe_block(last) ? moe_layer(m, last) : dense_mlp_layer(m, last);
    // 3 own + the block's 2 (4 with sandwich norms)
    const std::int64_t norms = 3 * norm_params(m, h) + (m.sandwich_norms ? 4 : 2) * norm_params(m, h);
    const std::int64_t proj = 2 * h * h;
    l.params = norms + proj + attn.params + ffn.params;
    l.active_params = norms + proj + attn.active_params + ffn.active_params;
    l.gemm_flops_per_token = 2.0 * static_cast<double>(proj) + attn.gemm_flops_per_token +
                             ffn.gemm_flops_per_token + 2.0 * static_cast<double>(m.vocab_size * h);
    l.attention_flops_per_token_per_context = attn.attention_flops_per_token_per_context;
    l.local_tokens = attn.local_tokens;
    l.chunked = attn.chunked;
    return l;
}

}  // namespace

double Layer::context(std::int64_t seq_len, bool causal) const {
    const double seq = static_cast<double>(seq_len);
    if (!causal) return local_tokens > 0 ? std::min(seq, static_cast<double>(local_tokens)) : seq;
    return causal_context_tokens(seq, local_tokens, chunked);
}

LayerGraph build_layer_graph(const ModelSpec& m) {
    LayerGraph g;
    const std::int64_t h = m.hidden_size;

    Layer emb;
    emb.kind = LayerKind::Embedding;
    emb.name = "embedding";
    emb.params = m.vocab_size * h + (m.learned_position_embeddings ? m.max_position_embeddings * h : 0);
    // A token reads one row of the input embedding (and of the positions): none of it is an
    // active weight, as the gpt-oss model card counts (arXiv:2508.10925, table 1: 5.13B active
    // of 116.83B). Tied, the same matrix is the LM head's, which every token multiplies.
    emb.active_params = m.tie_embeddings ? m.vocab_size * h : 0;
    if (m.per_layer_input.width > 0) {
        // Gemma 4 E2B/E4B: the per-layer table (read, not multiplied), the projection of the
        // input embedding to every block's slice (multiplied) and its norm.
        const std::int64_t slices = static_cast<std::int64_t>(m.num_layers) * m.per_layer_input.width;
        const std::int64_t projection = h * slices;
        emb.params += m.per_layer_input.vocab * slices + projection + m.per_layer_input.width;
        emb.active_params += projection + m.per_layer_input.width;
        emb.gemm_flops_per_token = 2.0 * static_cast<double>(projection);
    }
    g.layers.push_back(emb);
    g.params_embedding = emb.params;

    for (int b = 0; b < m.num_layers; ++b) {
        // A hybrid block without a mixer or without an MLP has one norm, before what it has
        // (Nemotron-H's layers: one sublayer each).
        const std::string prefix = "block." + std::to_string(b) + ".";
        if (m.mixer_kind(b) != MixerKind::None) {
            g.layers.push_back(norm_layer(m, b, prefix + "input_norm"));
            g.layers.push_back(mixer_layer(m, b));
            if (m.sandwich_norms) g.layers.push_back(norm_layer(m, b, prefix + "attention_output_norm"));
        }
        if (m.has_mlp(b)) {
            g.layers.push_back(norm_layer(m, b, prefix + (m.mixer_kind(b) != MixerKind::None ? "post_attention_norm" : "input_norm")));
            g.layers.push_back(m.is_moe_block(b) ? moe_layer(m, b) : dense_mlp_layer(m, b));
            if (m.sandwich_norms) g.layers.push_back(norm_layer(m, b, prefix + "mlp_output_norm"));
        }
    }
    g.layers.push_back(norm_layer(m, -1, "final_norm"));

    Layer head;
    head.kind = LayerKind::LmHead;
    head.name = "lm_head";
    head.params = m.tie_embeddings ? 0 : m.vocab_size * h;  // tied: shares the embedding
    head.active_params = head.params;
    head.gemm_flops_per_token = 2.0 * static_cast<double>(m.vocab_size * h);
    g.layers.push_back(head);
    for (int i = 0; i < m.mtp_layers; ++i) g.layers.push_back(mtp_layer(m, i));

    for (const auto& l : g.layers) {
        g.params_total += l.params;
        g.params_active += l.active_params;
    }
    return g;
}

double LayerGraph::forward_flops_per_token(std::int64_t seq_len, bool causal) const {
    double total = 0;
    for (const auto& l : layers) {
        total += l.gemm_flops_per_token + l.attention_flops_per_token_per_context * l.context(seq_len, causal) +
                 l.full_context_flops_per_token_per_context * Layer{}.context(seq_len, causal);
    }
    return total;
}

double LayerGraph::block_forward_flops_per_token(int block, std::int64_t seq_len,
                                                 bool causal) const {
    double total = 0;
    for (const auto& l : layers) {
        if (l.block != block) continue;
        total += l.gemm_flops_per_token + l.attention_flops_per_token_per_context * l.context(seq_len, causal) +
                 l.full_context_flops_per_token_per_context * Layer{}.context(seq_len, causal);
    }
    return total;
}

}  // namespace meshwork
