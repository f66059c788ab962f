#include "core/model/hf_mpt_config.h"

#include <cmath>
#include <string>

#include "core/common/error.h"
#include "core/model/hf_config_limits.h"

namespace meshwork {

using namespace hf_limits;

double read_mpt(JsonObjectReader& r, ModelSpec& m) {
    m.hidden_size = r.get_int("d_model", 1, kMaxWidth);
    m.num_layers = static_cast<int>(r.get_int("n_layers", 1, kMaxLayers));
    m.num_heads = static_cast<int>(r.get_int("n_heads", 1, kMaxHeads));
    m.num_kv_heads = m.num_heads;
    m.vocab_size = r.get_int("vocab_size", 1, kMaxVocab);
    m.max_position_embeddings = r.get_int_or("max_seq_len", 2048, 1, kMaxPositions);
    m.tie_embeddings = r.get_bool_or("tie_word_embeddings", true);
    m.learned_position_embeddings = r.get_bool_or("learned_pos_emb", true);
    const bool bias = !r.get_bool_or("no_bias", false);
    m.qkv_bias = bias;
    m.linear_bias = bias;
    const std::string norm = r.get_string_or("norm_type", "low_precision_layernorm");
    if (norm == "low_precision_layernorm" || norm == "layernorm") {
        m.norm = NormKind::LayerNorm;
    } else if (norm == "rmsnorm" || norm == "low_precision_rmsnorm" || norm == "triton_rmsnorm") {
        m.norm = NormKind::RmsNorm;
    } else {
        throw InputError(r.file(), r.field("norm_type"), "norm type '" + norm + "' is not supported (layernorm, rmsnorm)");
    }

    // The MLP: ffn_config.ffn_hidden_size, else expansion_ratio × d_model (MPTMLP, ffn.py).
    const double ratio = r.get_number_or("expansion_ratio", 4.0, 0.01, 1e3);
    m.ffn_hidden_size = static_cast<std::int64_t>(std::llround(ratio * static_cast<double>(m.hidden_size)));
    m.mlp = MlpKind::Dense;
    if (r.has("ffn_config") && !r.raw("ffn_config").is_null()) {
        JsonObjectReader f = r.get_object("ffn_config");
        const std::string type = f.get_string_or("ffn_type", "mptmlp");
        if (type == "mptglu") {
            m.mlp = MlpKind::Gated;
        } else if (type != "mptmlp" && type != "te_ln_mlp") {
            throw InputError(r.file(), f.field("ffn_type"),
                             "MPT FFN '" + type + "' is not supported (mptmlp, mptglu, te_ln_mlp)");
        }
        if (f.has("ffn_hidden_size") && !f.raw("ffn_hidden_size").is_null())
            m.ffn_hidden_size = f.get_int("ffn_hidden_size", 1, kMaxWidth);
        const std::string act = f.get_string_or("ffn_act_fn", "");
        if (!act.empty() && act != "gelu" && act != "silu")
            throw InputError(r.file(), f.field("ffn_act_fn"), "MPT FFN activation '" + act + "' is not supported (gelu, silu)");
    }

    double attn_pdrop = 0;
    if (r.has("attn_config") && !r.raw("attn_config").is_null()) {
        JsonObjectReader a = r.get_object("attn_config");
        const std::string type = a.get_string_or("attn_type", "multihead_attention");
        if (type == "multiquery_attention") {
            m.num_kv_heads = 1;
        } else if (type == "grouped_query_attention") {
            m.num_kv_heads = static_cast<int>(a.get_int_or("kv_n_heads", m.num_heads, 1, kMaxHeads));
        } else if (type != "multihead_attention") {
            throw InputError(r.file(), a.field("attn_type"),
                             "MPT attention '" + type +
                                 "' is not supported (multihead_attention, multiquery_attention, grouped_query_attention)");
        }
        if (a.get_bool_or("prefix_lm", false))
            throw InputError(r.file(), a.field("prefix_lm"), "a prefix-LM attention mask is not modelled");
        attn_pdrop = a.get_number_or("attn_pdrop", 0.0, 0.0, 1.0);
        m.qk_norm = a.get_bool_or("qk_ln", false);
        if (a.get_bool_or("rope", false)) {
            m.learned_position_embeddings = false;
            m.rope.theta = a.get_number_or("rope_theta", 10000.0, 1.0, 1e12);
        }
        const auto window = a.get_int_or("sliding_window_size", -1, -1, kMaxPositions);
        if (window > 0) m.sliding_window = window;
    }
    return attn_pdrop;
}

void write_mpt(const ModelSpec& m, nlohmann::json& j) {
    j["model_type"] = "mpt";
    j["d_model"] = m.hidden_size;
    j["n_layers"] = m.num_layers;
    j["n_heads"] = m.num_heads;
    j["vocab_size"] = m.vocab_size;
    j["max_seq_len"] = m.max_position_embeddings;
    j["tie_word_embeddings"] = m.tie_embeddings;
    j["learned_pos_emb"] = m.learned_position_embeddings;
    j["no_bias"] = !m.linear_bias;
    j["norm_type"] = m.norm == NormKind::LayerNorm ? "low_precision_layernorm" : "rmsnorm";
    j["expansion_ratio"] = static_cast<double>(m.ffn_hidden_size) / static_cast<double>(m.hidden_size);
    j["ffn_config"] = {{"ffn_type", m.mlp == MlpKind::Gated ? "mptglu" : "mptmlp"}, {"ffn_hidden_size", m.ffn_hidden_size}};
    j["resid_pdrop"] = m.hidden_dropout;
    nlohmann::json attn = {{"attn_pdrop", m.attention_dropout}, {"qk_ln", m.qk_norm}};
    if (m.num_kv_heads != m.num_heads) {
        attn["attn_type"] = "grouped_query_attention";
        attn["kv_n_heads"] = m.num_kv_heads;
    }
    if (!m.learned_position_embeddings) {
        attn["rope"] = true;
        attn["rope_theta"] = m.rope.theta;
    }
    if (m.sliding_window > 0) attn["sliding_window_size"] = m.sliding_window;
    j["attn_config"] = attn;
}

}  // namespace meshwork
