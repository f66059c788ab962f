#include "core/model/hf_gemma4_config.h"

#include <string>

#include "core/common/error.h"
#include "core/model/hf_config_limits.h"

namespace meshwork {

using namespace hf_limits;

void read_gemma4_text(JsonObjectReader& r, const nlohmann::json& config, ModelSpec& m) {
    // The E2B/E4B models (modeling_gemma4.py): per-layer input embeddings, 256 wide when the
    // key is absent and of a 262,144-token table (Gemma4TextConfig's defaults), and the last
    // num_kv_shared_layers blocks reading the keys and values of earlier ones, their MLP
    // twice as wide with use_double_wide_mlp (default false).
    m.per_layer_input.width = stated(config, "hidden_size_per_layer_input")
                                  ? r.get_int("hidden_size_per_layer_input", 0, kMaxWidth)
                                  : (r.has("hidden_size_per_layer_input") ? 0 : 256);
    m.per_layer_input.vocab = 0;
    if (m.per_layer_input.width > 0) {
        m.per_layer_input.vocab = stated(config, "vocab_size_per_layer_input")
                                      ? r.get_int("vocab_size_per_layer_input", 1, kMaxVocab)
                                      : 262144;
    } else {
        r.ignore("vocab_size_per_layer_input");
    }
    m.kv_shared_layers = stated(config, "num_kv_shared_layers")
                             ? static_cast<int>(r.get_int("num_kv_shared_layers", 0, m.num_layers - 1))
                             : 0;
    m.double_wide_shared_mlp = m.kv_shared_layers > 0 && r.get_bool_or("use_double_wide_mlp", false);
    if (m.kv_shared_layers == 0) r.ignore("use_double_wide_mlp");
    if (stated(config, "use_bidirectional_attention") && r.get_string("use_bidirectional_attention") == "all") {
        throw InputError(r.file(), r.field("use_bidirectional_attention"),
                         "attention without a causal mask is not modelled (\"vision\" is: text stays causal)");
    }

    // Full-attention blocks: Gemma4TextConfig.__post_init__ pops global_head_dim (default 512)
    // and, only with attention_k_eq_v, num_global_key_value_heads into their per-layer config.
    m.global_attention.head_dim = stated(config, "global_head_dim") ? r.get_int("global_head_dim", 1, kMaxWidth) : 512;
    m.global_attention.values_are_keys = r.get_bool_or("attention_k_eq_v", false);
    if (m.global_attention.values_are_keys && stated(config, "num_global_key_value_heads")) {
        m.global_attention.num_kv_heads = static_cast<int>(r.get_int("num_global_key_value_heads", 1, kMaxHeads));
        if (m.num_heads % m.global_attention.num_kv_heads != 0) {
            throw InputError(r.file(), r.field("num_global_key_value_heads"),
                             std::to_string(m.global_attention.num_kv_heads) + " KV heads do not divide " +
                                 std::to_string(m.num_heads) + " attention heads");
        }
    } else {
        r.ignore("num_global_key_value_heads");
    }
    m.qk_norm = true;  // q_norm and k_norm of head_dim (v_norm has no scale)

    // Rotary embeddings per layer type (rope_parameters.sliding_attention / full_attention);
    // ModelSpec holds one, the sliding blocks' (five in six), which rotates whole heads.
    if (r.has("rope_parameters") && config.at("rope_parameters").is_object()) {
        const nlohmann::json& p = config.at("rope_parameters");
        if (p.contains("sliding_attention") && p.at("sliding_attention").is_object()) {
            const nlohmann::json& s = p.at("sliding_attention");
            if (s.contains("rope_theta")) {
                m.rope.theta = JsonObjectReader::as_number(s.at("rope_theta"), r.file(),
                                                           r.field("rope_parameters") + ".sliding_attention.rope_theta",
                                                           1.0, 1e12);
            }
        }
    }

    // The MoE block (Gemma4TextDecoderLayer with enable_moe_block): router and experts on the
    // block's input beside the dense MLP, their outputs summed.
    if (r.get_bool_or("enable_moe_block", false)) {
        m.moe.num_experts = static_cast<int>(r.get_int("num_experts", 1, kMaxExperts));
        m.moe.top_k = static_cast<int>(r.get_int("top_k_experts", 1, m.moe.num_experts));
        m.moe.expert_ffn_hidden = r.get_int("moe_intermediate_size", 1, kMaxWidth);
        m.moe.num_shared_experts = 1;
        m.moe.shared_ffn_hidden = m.ffn_hidden_size;
        m.moe.router_score = "softmax";
    } else {
        for (const char* key : {"num_experts", "top_k_experts", "moe_intermediate_size", "expert_intermediate_size"})
            r.ignore(key);
    }
}

void write_gemma4_text(const ModelSpec& m, nlohmann::json& j) {
    j["hidden_activation"] = m.glu_activation == "gelu_tanh" ? "gelu_pytorch_tanh" : j.value("hidden_act", "silu");
    j.erase("hidden_act");
    j["hidden_size_per_layer_input"] = m.per_layer_input.width;
    if (m.per_layer_input.width > 0) j["vocab_size_per_layer_input"] = m.per_layer_input.vocab;
    j["num_kv_shared_layers"] = m.kv_shared_layers;
    j["use_double_wide_mlp"] = m.double_wide_shared_mlp;
    j["global_head_dim"] = m.global_attention.head_dim > 0 ? m.global_attention.head_dim : m.head_dim;
    j["attention_k_eq_v"] = m.global_attention.values_are_keys;
    if (m.global_attention.values_are_keys && m.global_attention.num_kv_heads > 0) {
        j["num_global_key_value_heads"] = m.global_attention.num_kv_heads;
    }
    j["enable_moe_block"] = m.is_moe();
    if (m.is_moe()) {
        j["num_experts"] = m.moe.num_experts;
        j["top_k_experts"] = m.moe.top_k;
        j["moe_intermediate_size"] = m.moe.expert_ffn_hidden;
    }
}

}  // namespace meshwork
