#include "core/model/model_spec.h"

namespace meshwork {

bool ModelSpec::is_moe_block(int block) const {
    if (block >= 0 && block < static_cast<int>(block_kinds.size())) {
        const FfnKind f = block_kinds[static_cast<std::size_t>(block)].ffn;
        if (f == FfnKind::Moe) return is_moe();
        if (f != FfnKind::Auto) return false;
    }
    if (!is_moe() || block < moe.first_k_dense) return false;
    const int freq = moe.layer_freq > 0 ? moe.layer_freq : 1;
    return (block - moe.first_k_dense) % freq == 0;
}

int ModelSpec::num_moe_blocks() const {
    int n = 0;
    for (int b = 0; b < num_layers; ++b) n += is_moe_block(b) ? 1 : 0;
    return n;
}

std::string to_string(MixerKind kind) {
    switch (kind) {
        case MixerKind::Attention: return "attention";
        case MixerKind::LinearAttention: return "gated_deltanet";
        case MixerKind::Mamba2: return "mamba2";
        case MixerKind::SparseAttention: return "sparse_attention";
        case MixerKind::None: return "none";
    }
    return "?";
}

MixerKind ModelSpec::mixer_kind(int block) const {
    if (block >= 0 && block < static_cast<int>(block_kinds.size())) {
        return block_kinds[static_cast<std::size_t>(block)].mixer;
    }
    return MixerKind::Attention;
}

bool ModelSpec::has_mlp(int block) const {
    if (block >= 0 && block < static_cast<int>(block_kinds.size())) {
        return block_kinds[static_cast<std::size_t>(block)].ffn != FfnKind::None;
    }
    return true;
}

bool ModelSpec::has_mixer(MixerKind kind) const {
    if (block_kinds.empty()) return kind == MixerKind::Attention && num_layers > 0;
    for (const auto& k : block_kinds) {
        if (k.mixer == kind) return true;
    }
    return false;
}

std::string ModelSpec::block_letters(int block) const {
    std::string s;
    switch (mixer_kind(block)) {
        case MixerKind::Attention: s += '*'; break;
        case MixerKind::LinearAttention: s += 'G'; break;
        case MixerKind::Mamba2: s += 'M'; break;
        case MixerKind::SparseAttention: s += 'S'; break;
        case MixerKind::None: break;
    }
    if (has_mlp(block)) s += is_moe_block(block) ? 'E' : '-';
    return s;
}

bool ModelSpec::is_local_attention_block(int block) const {
    const MixerKind mk = mixer_kind(block);
    if (mk != MixerKind::Attention) return false;
    if (sliding_window <= 0 && attention_chunk <= 0) return false;
    return global_attention_every <= 0 || (block + 1) % global_attention_every != 0;
}

double causal_context_tokens(double seq, std::int64_t local_tokens, bool chunked) {
    // Full causal attention: query i sees i + 1 keys, seq/2 on average (the convention the
    // cost model and LayerGraph use throughout).
    const double full = seq / 2.0;
    const double w = static_cast<double>(local_tokens);
    if (local_tokens <= 0 || w >= seq) return full;
    // Chunks restart the causal triangle every C tokens: C/2 keys on average.
    if (chunked) return w / 2.0;
    // Sliding window W: min(i + 1, W) keys, W - W^2/(2 seq) on average (seq/2 at W = seq).
    return w - w * w / (2.0 * seq);
}

double ModelSpec::causal_context(int block, double seq) const {
    if (!is_local_attention_block(block)) return seq / 2.0;
    return attention_chunk > 0 ? causal_context_tokens(seq, attention_chunk, true)
                               : causal_context_tokens(seq, sliding_window, false);
}

bool ModelSpec::has_global_attention_geometry(int block) const {
    return global_attention.head_dim > 0 && mixer_kind(block) == MixerKind::Attention &&
           !is_local_attention_block(block);
}

std::int64_t ModelSpec::head_dim_of(int block) const {
    return has_global_attention_geometry(block) ? global_attention.head_dim : head_dim;
}

int ModelSpec::kv_heads_of(int block) const {
    return has_global_attention_geometry(block) && global_attention.num_kv_heads > 0 ? global_attention.num_kv_heads
                                                                                      : num_kv_heads;
}

bool ModelSpec::values_are_keys(int block) const {
    return has_global_attention_geometry(block) && global_attention.values_are_keys;
}

bool ModelSpec::shares_kv(int block) const {
    return kv_shared_layers > 0 && block >= num_layers - kv_shared_layers && block < num_layers;
}

std::int64_t ModelSpec::ffn_of(int block) const {
    return double_wide_shared_mlp && shares_kv(block) ? 2 * ffn_hidden_size : ffn_hidden_size;
}

std::string ModelSpec::attention_kind() const {
    if (uses_mla) return "MLA";
    if (num_kv_heads == num_heads) return "MHA";
    if (num_kv_heads == 1) return "MQA";
    return "GQA";
}

}  // namespace meshwork
