#include "core/model/hf_config.h"

#include <filesystem>

#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "core/common/resources.h"

namespace meshwork {

namespace {

// Limits that no real model exceeds; larger values are refused as absurd (hostile input).
constexpr std::int64_t kMaxWidth = 1 << 20;        // hidden, ffn, head dims
constexpr std::int64_t kMaxLayers = 10000;
constexpr std::int64_t kMaxHeads = 1 << 14;
constexpr std::int64_t kMaxVocab = 1 << 24;
constexpr std::int64_t kMaxPositions = 1ll << 26;
constexpr std::int64_t kMaxExperts = 1 << 16;

// The families whose config.json fields this reader knows.
enum class Family { LlamaLike, Gemma, Mixtral, Qwen2Moe, DeepSeek, DeepSeekMoe, Gpt2, GptNeoX };

Family family_of(const std::string& model_type, const std::string& file,
                 const std::string& field) {
    if (model_type == "llama" || model_type == "mistral" || model_type == "qwen2" ||
        model_type == "qwen3")
        return Family::LlamaLike;
    // Gemma 2/3: a Llama-like block with GeGLU, a tied LM head and extra norms whose few
    // parameters (2·h per layer) are not counted.
    if (model_type == "gemma2" || model_type == "gemma3_text") return Family::Gemma;
    if (model_type == "mixtral") return Family::Mixtral;
    // DeepSeek-MoE (v1): DeepSeek's experts with standard multi-head attention.
    if (model_type == "deepseek") return Family::DeepSeekMoe;
    if (model_type == "qwen2_moe" || model_type == "qwen3_moe") return Family::Qwen2Moe;
    if (model_type == "deepseek_v3" || model_type == "deepseek_v2") return Family::DeepSeek;
    if (model_type == "gpt2") return Family::Gpt2;
    if (model_type == "gpt_neox") return Family::GptNeoX;
    throw InputError(file, field,
                     "unsupported model_type '" + model_type +
                         "' (supported: llama, mistral, qwen2, qwen3, gemma2, gemma3_text, mixtral, "
                         "qwen2_moe, qwen3_moe, deepseek, deepseek_v2, deepseek_v3, gpt2, gpt_neox)");
}

void check_divides(std::int64_t a, std::int64_t b, const std::string& file,
                   const std::string& field, const std::string& what) {
    if (b == 0 || a % b != 0) {
        throw InputError(file, field,
                         what + " (" + std::to_string(a) + " is not a multiple of " +
                             std::to_string(b) + ")");
    }
}

}  // namespace

ModelSpec model_from_hf_config(const Json& config, const std::string& file,
                               const std::string& name, const std::string& field_prefix) {
    JsonObjectReader r(config, file, field_prefix);
    ModelSpec m;
    m.name = name;
    std::string model_type = r.get_string_or("model_type", "");
    if (model_type.empty()) {
        // Old GPT-2 style configs carry no model_type; recognise them by their keys.
        model_type = r.has("n_embd") ? "gpt2" : "llama";
    }
    m.family = model_type;
    const Family fam = family_of(model_type, file, r.field("model_type"));

    if (fam == Family::Gpt2) {
        m.hidden_size = r.get_int("n_embd", 1, kMaxWidth);
        m.num_layers = static_cast<int>(r.get_int("n_layer", 1, kMaxLayers));
        m.num_heads = static_cast<int>(r.get_int("n_head", 1, kMaxHeads));
        m.num_kv_heads = m.num_heads;
        m.vocab_size = r.get_int("vocab_size", 1, kMaxVocab);
        m.max_position_embeddings = r.get_int("n_positions", 1, kMaxPositions);
        m.ffn_hidden_size = r.get_int_or("n_inner", 4 * m.hidden_size, 1, kMaxWidth);
        m.tie_embeddings = r.get_bool_or("tie_word_embeddings", true);
        m.learned_position_embeddings = true;
        m.qkv_bias = true;
        m.linear_bias = true;
        m.norm = NormKind::LayerNorm;
        m.mlp = MlpKind::Dense;
    } else {
        m.hidden_size = r.get_int("hidden_size", 1, kMaxWidth);
        m.num_layers = static_cast<int>(r.get_int("num_hidden_layers", 1, kMaxLayers));
        m.num_heads = static_cast<int>(r.get_int("num_attention_heads", 1, kMaxHeads));
        m.num_kv_heads =
            static_cast<int>(r.get_int_or("num_key_value_heads", m.num_heads, 1, kMaxHeads));
        m.vocab_size = r.get_int("vocab_size", 1, kMaxVocab);
        m.max_position_embeddings = r.get_int_or("max_position_embeddings", 4096, 1, kMaxPositions);
        m.ffn_hidden_size = r.get_int("intermediate_size", 1, kMaxWidth);
        // transformers' default: Gemma ties the LM head to the embedding, the others do not.
        m.tie_embeddings = r.get_bool_or("tie_word_embeddings", fam == Family::Gemma);
        if (fam == Family::GptNeoX) {
            m.norm = NormKind::LayerNorm;
            m.mlp = MlpKind::Dense;
            m.linear_bias = true;
            m.qkv_bias = true;
        } else {
            m.norm = NormKind::RmsNorm;
            m.mlp = MlpKind::Gated;
            m.qkv_bias = model_type == "qwen2" || model_type == "qwen2_moe" ||
                         r.get_bool_or("attention_bias", false);
        }
    }
    if (m.num_kv_heads > m.num_heads || m.num_heads % m.num_kv_heads != 0) {
        throw InputError(file, r.field("num_key_value_heads"),
                         std::to_string(m.num_kv_heads) + " KV heads do not divide " +
                             std::to_string(m.num_heads) + " attention heads");
    }
    if (r.has("head_dim") && !config.at("head_dim").is_null()) {
        m.head_dim = r.get_int("head_dim", 1, kMaxWidth);
    } else {
        check_divides(m.hidden_size, m.num_heads, file, r.field("hidden_size"),
                      "hidden size must be a multiple of the number of attention heads");
        m.head_dim = m.hidden_size / m.num_heads;
    }

    if (fam == Family::Mixtral) {
        m.moe.num_experts = static_cast<int>(r.get_int("num_local_experts", 1, kMaxExperts));
        m.moe.top_k = static_cast<int>(r.get_int("num_experts_per_tok", 1, kMaxExperts));
        m.moe.expert_ffn_hidden = m.ffn_hidden_size;
    } else if (fam == Family::Qwen2Moe) {
        m.moe.num_experts = static_cast<int>(r.get_int("num_experts", 1, kMaxExperts));
        m.moe.top_k = static_cast<int>(r.get_int("num_experts_per_tok", 1, kMaxExperts));
        m.moe.expert_ffn_hidden = r.get_int("moe_intermediate_size", 1, kMaxWidth);
        m.moe.shared_ffn_hidden = r.get_int_or("shared_expert_intermediate_size", 0, 0, kMaxWidth);
        m.moe.num_shared_experts = m.moe.shared_ffn_hidden > 0 ? 1 : 0;
        m.moe.shared_expert_gate = m.moe.shared_ffn_hidden > 0;
        m.moe.layer_freq = static_cast<int>(r.get_int_or("decoder_sparse_step", 1, 1, kMaxLayers));
        // Qwen2-MoE counts sparse layers from (block + 1) % step == 0; with step 1 that is all.
        if (r.has("mlp_only_layers")) {
            const Json& only = r.raw("mlp_only_layers");
            if (!only.is_array() || !only.empty()) {
                throw InputError(file, r.field("mlp_only_layers"),
                                 "dense-only layer lists are not supported; expected []");
            }
        }
    } else if (fam == Family::DeepSeek || fam == Family::DeepSeekMoe) {
        m.moe.num_experts = static_cast<int>(r.get_int("n_routed_experts", 1, kMaxExperts));
        m.moe.top_k = static_cast<int>(r.get_int("num_experts_per_tok", 1, kMaxExperts));
        m.moe.expert_ffn_hidden = r.get_int("moe_intermediate_size", 1, kMaxWidth);
        m.moe.num_shared_experts = static_cast<int>(r.get_int_or("n_shared_experts", 0, 0, 64));
        m.moe.shared_ffn_hidden = m.moe.num_shared_experts * m.moe.expert_ffn_hidden;
        m.moe.first_k_dense = static_cast<int>(r.get_int_or("first_k_dense_replace", 0, 0, kMaxLayers));
        m.moe.layer_freq = static_cast<int>(r.get_int_or("moe_layer_freq", 1, 1, kMaxLayers));
        m.moe.router_bias = model_type == "deepseek_v3";
    }
    if (fam == Family::DeepSeek) {
        m.uses_mla = true;
        m.mla.q_lora_rank = r.get_int_or("q_lora_rank", 0, 0, kMaxWidth);
        m.mla.kv_lora_rank = r.get_int("kv_lora_rank", 1, kMaxWidth);
        m.mla.qk_nope_head_dim = r.get_int("qk_nope_head_dim", 1, kMaxWidth);
        m.mla.qk_rope_head_dim = r.get_int("qk_rope_head_dim", 0, kMaxWidth);
        m.mla.v_head_dim = r.get_int("v_head_dim", 1, kMaxWidth);
        m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
    }
    // Position, norm and attention details (defaults as transformers' config classes).
    if (!m.learned_position_embeddings) {
        m.rope.theta = r.get_number_or("rope_theta", 10000.0, 1.0, 1e12);
        if (fam == Family::GptNeoX) m.rope.percent = r.get_number_or("rotary_pct", 1.0, 0.0, 1.0);
        else m.rope.percent = r.get_number_or("partial_rotary_factor", 1.0, 0.0, 1.0);
        if (r.has("rope_scaling") && !config.at("rope_scaling").is_null()) {
            const Json& sc = r.raw("rope_scaling");
            if (!sc.is_object()) throw InputError(file, r.field("rope_scaling"), "expected an object or null");
            std::string type = sc.value("rope_type", sc.value("type", std::string()));
            if (type == "default") type.clear();
            if (!type.empty() && type != "linear" && type != "llama3" && type != "yarn") {
                throw InputError(file, r.field("rope_scaling"),
                                 "rope scaling '" + type + "' is not supported (linear, llama3, yarn)");
            }
            m.rope.scaling = type;
            if (!type.empty()) {
                const Json f = sc.value("factor", Json(1.0));
                if (!f.is_number() || f.get<double>() <= 0 || f.get<double>() > 1e6) {
                    throw InputError(file, r.field("rope_scaling") + ".factor", "expected a positive number");
                }
                m.rope.factor = f.get<double>();
            }
        }
    }
    const double eps_default = m.norm == NormKind::LayerNorm ? 1e-5 : 1e-6;
    const char* eps_key = fam == Family::Gpt2 ? "layer_norm_epsilon"
                          : fam == Family::GptNeoX ? "layer_norm_eps" : "rms_norm_eps";
    m.norm_eps = r.get_number_or(eps_key, eps_default, 0.0, 1.0);
    // Dropout: GPT-2 names them resid_pdrop / attn_pdrop (GPT2Config defaults 0.1), GPT-NeoX
    // and others hidden_dropout / attention_dropout (defaults 0.0; Llama-family configs carry
    // only attention_dropout).
    const double pdrop_default = fam == Family::Gpt2 ? 0.1 : 0.0;
    m.hidden_dropout = r.get_number_or("hidden_dropout", r.get_number_or("resid_pdrop", pdrop_default, 0.0, 1.0), 0.0, 1.0);
    m.attention_dropout = r.get_number_or("attention_dropout", r.get_number_or("attn_pdrop", pdrop_default, 0.0, 1.0), 0.0, 1.0);
    m.qk_norm = model_type == "qwen3" || model_type == "qwen3_moe" || model_type == "gemma3_text";
    if (r.has("sliding_window") && !config.at("sliding_window").is_null() &&
        r.get_bool_or("use_sliding_window", true)) {
        m.sliding_window = r.get_int("sliding_window", 1, kMaxPositions);
    }
    if (fam == Family::DeepSeek) {
        m.mtp_layers = static_cast<int>(r.get_int_or("num_nextn_predict_layers", 0, 0, 64));
    }
    if (fam == Family::DeepSeek || fam == Family::DeepSeekMoe) {
        m.moe.router_score = r.get_string_or("scoring_func", "softmax");
        if (m.moe.router_score != "softmax" && m.moe.router_score != "sigmoid") {
            throw InputError(file, r.field("scoring_func"), "expected softmax or sigmoid");
        }
    }
    if (m.is_moe() && m.moe.top_k > m.moe.num_experts) {
        throw InputError(file, r.field("num_experts_per_tok"),
                         "top-k " + std::to_string(m.moe.top_k) + " exceeds the " +
                             std::to_string(m.moe.num_experts) + " experts");
    }
    if (m.moe.first_k_dense > m.num_layers) {
        throw InputError(file, r.field("first_k_dense_replace"),
                         "more dense layers than the model has layers");
    }
    return m;
}

ModelSpec load_model(const std::string& name_or_path, const std::string& file,
                     const std::string& field) {
    const std::string path = resolve_preset_path(PresetKind::Model, name_or_path, file, field);
    const Json config = load_json_file(path);
    std::string name = std::filesystem::path(path).stem().string();
    if (name == "config") name = std::filesystem::path(path).parent_path().filename().string();
    if (config.is_object() && config.contains("meshwork_preset") &&
        config["meshwork_preset"].is_string()) {
        name = config["meshwork_preset"].get<std::string>();
    }
    return model_from_hf_config(config, path, name);
}

Json model_to_hf_config(const ModelSpec& m) {
    Json j;
    j["model_type"] = m.family;
    if (m.family == "gpt2") {
        j["n_embd"] = m.hidden_size;
        j["n_layer"] = m.num_layers;
        j["n_head"] = m.num_heads;
        j["vocab_size"] = m.vocab_size;
        j["n_positions"] = m.max_position_embeddings;
        j["n_inner"] = m.ffn_hidden_size;
        j["tie_word_embeddings"] = m.tie_embeddings;
        j["layer_norm_epsilon"] = m.norm_eps;
        j["resid_pdrop"] = m.hidden_dropout;
        j["attn_pdrop"] = m.attention_dropout;
        return j;
    }
    j["hidden_size"] = m.hidden_size;
    j["num_hidden_layers"] = m.num_layers;
    if (!m.learned_position_embeddings) {
        j["rope_theta"] = m.rope.theta;
        j[m.family == "gpt_neox" ? "rotary_pct" : "partial_rotary_factor"] = m.rope.percent;
        if (!m.rope.scaling.empty()) j["rope_scaling"] = {{"rope_type", m.rope.scaling}, {"factor", m.rope.factor}};
    }
    j[m.family == "gpt_neox" ? "layer_norm_eps" : "rms_norm_eps"] = m.norm_eps;
    j["hidden_dropout"] = m.hidden_dropout;
    j["attention_dropout"] = m.attention_dropout;
    if (m.sliding_window > 0) {
        j["sliding_window"] = m.sliding_window;
        j["use_sliding_window"] = true;
    }
    j["num_attention_heads"] = m.num_heads;
    j["num_key_value_heads"] = m.num_kv_heads;
    j["head_dim"] = m.head_dim;
    j["intermediate_size"] = m.ffn_hidden_size;
    j["vocab_size"] = m.vocab_size;
    j["max_position_embeddings"] = m.max_position_embeddings;
    j["tie_word_embeddings"] = m.tie_embeddings;
    if (m.family != "qwen2" && m.family != "qwen2_moe" && m.family != "gpt_neox") {
        j["attention_bias"] = m.qkv_bias;
    }
    if (m.family == "mixtral") {
        j["num_local_experts"] = m.moe.num_experts;
        j["num_experts_per_tok"] = m.moe.top_k;
    } else if (m.family == "qwen2_moe" || m.family == "qwen3_moe") {
        j["num_experts"] = m.moe.num_experts;
        j["num_experts_per_tok"] = m.moe.top_k;
        j["moe_intermediate_size"] = m.moe.expert_ffn_hidden;
        j["shared_expert_intermediate_size"] = m.moe.shared_ffn_hidden;
        j["decoder_sparse_step"] = m.moe.layer_freq;
    } else if (m.family == "deepseek_v3" || m.family == "deepseek_v2" || m.family == "deepseek") {
        j["n_routed_experts"] = m.moe.num_experts;
        j["num_experts_per_tok"] = m.moe.top_k;
        j["moe_intermediate_size"] = m.moe.expert_ffn_hidden;
        j["n_shared_experts"] = m.moe.num_shared_experts;
        j["first_k_dense_replace"] = m.moe.first_k_dense;
        j["moe_layer_freq"] = m.moe.layer_freq;
        j["scoring_func"] = m.moe.router_score;
        if (m.family == "deepseek") return j;
        j["num_nextn_predict_layers"] = m.mtp_layers;
        j.erase("head_dim");
        j["q_lora_rank"] = m.mla.q_lora_rank;
        j["kv_lora_rank"] = m.mla.kv_lora_rank;
        j["qk_nope_head_dim"] = m.mla.qk_nope_head_dim;
        j["qk_rope_head_dim"] = m.mla.qk_rope_head_dim;
        j["v_head_dim"] = m.mla.v_head_dim;
    }
    return j;
}

}  // namespace meshwork
