#include "core/model/hf_gemma4_config.h"

#include <string>

#include "core/common/error.h"
#include "core/model/hf_config_limits.h"

namespace meshwork {

using namespace hf_limits;

void read_gemma4_text(JsonObjectReader& r, const nlohmann::json& config, ModelSpec& m) {
    // Refused by name (modeling_gemma4.py): the E2B/E4B models' per-layer input embeddings
    // (a vocabulary-sized table of num_layers × hidden_size_per_layer_input and a gate and
    // projection in every block), their later blocks reading the K/V of earlier ones, and
    // attention without a causal mask.
    const std::int64_t ple = stated(config, "hidden_size_per_layer_input")
                                 ? r.get_int("hidden_size_per_layer_input", 0, kMaxWidth)
                                 : (r.has("hidden_size_per_layer_input") ? 0 : 256);
    if (ple > 0) {
        throw InputError(r.file(), r.field("hidden_size_per_layer_input"),
                         "Gemma 4's per-layer input embeddings (" + std::to_string(ple) +
                             " wide; 256 when the key is absent, as Gemma4TextConfig defaults) are not "
                             "modelled: the 31B and 26B-A4B configs state 0");
    }
    r.ignore("vocab_size_per_layer_input");
    if (stated(config, "num_kv_shared_layers") && r.get_int("num_kv_shared_layers", 0, m.num_layers) > 0) {
        throw InputError(r.file(), r.field("num_kv_shared_layers"),
                         "Gemma 4's blocks that reuse an earlier block's keys and values are not modelled");
    }
    r.ignore("use_double_wide_mlp");  // widens only the KV-sharing blocks' MLP
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
    j["hidden_size_per_layer_input"] = 0;
    j["num_kv_shared_layers"] = 0;
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
