#include "core/model/hf_config.h"

#include <filesystem>
#include <vector>

#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "core/common/resources.h"
#include "core/model/hf_config_limits.h"
#include "core/model/hf_gemma4_config.h"
#include "core/model/hf_hybrid_config.h"
#include "core/model/hf_mpt_config.h"

namespace meshwork {

namespace {

using namespace hf_limits;

// The families whose config.json fields this reader knows.
enum class Family { LlamaLike, Gemma, Mixtral, Qwen2Moe, DeepSeek, DeepSeekMoe, GptOss, Llama4, Gpt2, GptNeoX,
                    Qwen3Next, NemotronH, MiniMaxM2, Mpt };

Family family_of(const std::string& model_type, const std::string& file,
                 const std::string& field) {
    if (model_type == "llama" || model_type == "mistral" || model_type == "qwen2" ||
        model_type == "qwen3")
        return Family::LlamaLike;
    // Gemma 2/3: a Llama-like block with GeGLU, a tied LM head and extra norms whose few
    // parameters (2·h per layer) are not counted.
    // Gemma 4's text model: Gemma 3's block, its full-attention blocks wider (hf_gemma4_config.h).
    if (model_type == "gemma2" || model_type == "gemma3_text" || model_type == "gemma4_text") return Family::Gemma;
    if (model_type == "mixtral") return Family::Mixtral;
    // DeepSeek-MoE (v1): DeepSeek's experts with standard multi-head attention.
    if (model_type == "deepseek") return Family::DeepSeekMoe;
    if (model_type == "qwen2_moe" || model_type == "qwen3_moe") return Family::Qwen2Moe;
    // Kimi-K2 ships DeepSeek-V3's architecture under its own model_type.
    if (model_type == "deepseek_v3" || model_type == "deepseek_v2" || model_type == "kimi_k2")
        return Family::DeepSeek;
    // gpt-oss: Mixtral-like experts with biases everywhere and attention sinks.
    if (model_type == "gpt_oss") return Family::GptOss;
    // Llama 4's text model (a "llama4" config's text_config): a shared expert beside the
    // routed ones, MoE every interleave_moe_layer_step blocks, chunked attention.
    if (model_type == "llama4_text") return Family::Llama4;
    if (model_type == "gpt2") return Family::Gpt2;
    if (model_type == "gpt_neox") return Family::GptNeoX;
    // MosaicML's MPT: its own config keys (hf_mpt_config.h).
    if (model_type == "mpt") return Family::Mpt;
    // Hybrid families (ModelSpec::block_kinds; hf_hybrid_config.h): Qwen3-Next's Gated
    // DeltaNet with gated attention every few layers and Qwen2-MoE-style experts;
    // Nemotron-H's Mamba-2 / attention / MLP / MoE layers.
    if (model_type == "qwen3_next") return Family::Qwen3Next;
    if (model_type == "nemotron_h") return Family::NemotronH;
    // DeepSeek sparse attention: DeepSeek-V3's MLA and experts plus the lightning indexer;
    // GLM-5 ships the same architecture as glm_moe_dsa.
    if (model_type == "deepseek_v32" || model_type == "glm_moe_dsa") return Family::DeepSeek;
    // MiniMax-M2: Mixtral-like experts with sigmoid routing and a score-correction bias,
    // QK norm over all heads' width, partial rotary (rotary_dim).
    if (model_type == "minimax_m2") return Family::MiniMaxM2;
    // Families refused by name with what they need (issue 33 item 5).
    static const std::pair<const char*, const char*> kNotYet[] = {
        {"gemma3", "a Gemma 3 config without text_config (the text model is read from text_config)"},
        {"gemma4", "a Gemma 4 config without text_config (the text model is read from text_config)"},
    };
    for (const auto& [type, why] : kNotYet) {
        if (model_type == type) {
            throw InputError(file, field, "model_type '" + model_type + "' is not read: " + why);
        }
    }
    throw InputError(file, field,
                     "unsupported model_type '" + model_type +
                         "' (supported: llama, mistral, qwen2, qwen3, gemma2, gemma3_text, mixtral, "
                         "qwen2_moe, qwen3_moe, qwen3_next, deepseek, deepseek_v2, deepseek_v3, deepseek_v32, "
                         "glm_moe_dsa, kimi_k2, gpt_oss, minimax_m2, nemotron_h, llama4, llama4_text, gemma3 and gemma4 "
                         "(their text_config), gemma4_text, gpt2, gpt_neox, mpt)");
}

void check_divides(std::int64_t a, std::int64_t b, const std::string& file,
                   const std::string& field, const std::string& what) {
    if (b == 0 || a % b != 0) {
        throw InputError(file, field,
                         what + " (" + std::to_string(a) + " is not a multiple of " +
                             std::to_string(b) + ")");
    }
}

// The period N of a local/full block pattern where every N-th block (1-based) is full and
// the others local (0 = all local, -1 = none local); refuses any other pattern, naming
// the first block that breaks it (Megatron-LM and Meshwork hold only this form).
int local_pattern_period(const std::vector<bool>& local, const std::string& file, const std::string& field) {
    int first_full = -1, locals = 0;
    for (std::size_t i = 0; i < local.size(); ++i) {
        if (!local[i] && first_full < 0) first_full = static_cast<int>(i);
        locals += local[i] ? 1 : 0;
    }
    if (locals == 0) return -1;
    const int period = first_full < 0 ? 0 : first_full + 1;
    for (std::size_t i = 0; i < local.size(); ++i) {
        const bool expect = period == 0 || (static_cast<int>(i) + 1) % period != 0;
        if (local[i] != expect) {
            throw InputError(file, field + "[" + std::to_string(i) + "]",
                             std::string("block ") + std::to_string(i) + " is " +
                                 (local[i] ? "local" : "full") +
                                 ", but the pattern so far is every " + std::to_string(period) +
                                 "-th block full; only that repeating form is supported");
        }
    }
    return period;
}

// Reads transformers' layer_types list: which blocks are sliding/chunked, which full.
std::vector<bool> read_layer_types(JsonObjectReader& r, int layers, bool& chunked) {
    const Json& v = r.raw("layer_types");
    if (!v.is_array() || static_cast<int>(v.size()) != layers) {
        throw InputError(r.file(), r.field("layer_types"),
                         "expected an array of " + std::to_string(layers) + " attention types");
    }
    std::vector<bool> local;
    for (std::size_t i = 0; i < v.size(); ++i) {
        const std::string t = v[i].is_string() ? v[i].get<std::string>() : "";
        if (t == "full_attention") {
            local.push_back(false);
        } else if (t == "sliding_attention" || t == "chunked_attention") {
            chunked = chunked || t == "chunked_attention";
            local.push_back(true);
        } else {
            throw InputError(r.file(), r.field("layer_types") + "[" + std::to_string(i) + "]",
                             "expected full_attention, sliding_attention or chunked_attention");
        }
    }
    return local;
}

// Sliding windows, chunks and their per-block pattern, with each family's defaults as
// transformers' config classes set them.
void read_local_attention(JsonObjectReader& r, const Json& config, Family fam,
                          const std::string& model_type, ModelSpec& m) {
    // Their layer_types name mixers, not windows (hf_hybrid_config.cpp reads them).
    if (fam == Family::Qwen3Next || fam == Family::NemotronH) return;
    std::vector<bool> local;
    bool chunked = false;
    if (stated(config, "layer_types")) {
        local = read_layer_types(r, m.num_layers, chunked);
    } else if (fam == Family::Llama4) {
        // no_rope_layers[i] = 1: block i uses RoPE and chunked attention; the others (every
        // no_rope_layer_interval-th) neither. [] means the default (configuration_llama4.py).
        std::vector<bool> rope;
        if (stated(config, "no_rope_layers") && !config.at("no_rope_layers").empty()) {
            const Json& v = r.raw("no_rope_layers");
            if (!v.is_array() || static_cast<int>(v.size()) != m.num_layers) {
                throw InputError(r.file(), r.field("no_rope_layers"),
                                 "expected an array of " + std::to_string(m.num_layers) + " 0/1 values");
            }
            for (std::size_t i = 0; i < v.size(); ++i) {
                rope.push_back(JsonObjectReader::as_int(v[i], r.file(), r.field("no_rope_layers") + "[" +
                                                                            std::to_string(i) + "]", 0, 1) == 1);
            }
        } else {
            const auto every = r.get_int_or("no_rope_layer_interval", 4, 1, kMaxLayers);
            for (int i = 0; i < m.num_layers; ++i) rope.push_back((i + 1) % every != 0);
        }
        local = rope;
        chunked = true;
    } else if (fam == Family::Gemma || fam == Family::GptOss) {
        // Gemma 2 and gpt-oss alternate local and full (block 0 local); Gemma 3 has one full
        // block in sliding_window_pattern (6).
        const std::int64_t every = model_type == "gemma3_text" || model_type == "gemma4_text"
                                       ? r.get_int_or("sliding_window_pattern", 6, 1, kMaxLayers)
                                       : 2;
        for (int i = 0; i < m.num_layers; ++i) local.push_back((i + 1) % every != 0);
    } else if (stated(config, "sliding_window") && r.get_bool_or("use_sliding_window", true)) {
        local.assign(static_cast<std::size_t>(m.num_layers), true);
        if (model_type.rfind("qwen", 0) == 0 && r.has("max_window_layers")) {
            // Qwen: blocks from max_window_layers on slide (modeling_qwen2's layer_types).
            const auto full_below = r.get_int_or("max_window_layers", 0, 0, kMaxLayers);
            for (int i = 0; i < m.num_layers && i < full_below; ++i) local[static_cast<std::size_t>(i)] = false;
            if (full_below > 0 && full_below < m.num_layers) {
                throw InputError(r.file(), r.field("max_window_layers"),
                                 "full attention below block " + std::to_string(full_below) +
                                     " and sliding above is not supported (only every N-th block full)");
            }
        }
    }
    const int period = local_pattern_period(local, r.file(), r.field(stated(config, "layer_types") ? "layer_types" : "no_rope_layers"));
    if (period < 0) return;
    m.global_attention_every = period;
    if (chunked) {
        // configuration_llama4.py defaults attention_chunk_size to 8192; null turns it off.
        if (r.has("attention_chunk_size") && config.at("attention_chunk_size").is_null()) {
            m.global_attention_every = 0;
            return;
        }
        if (!r.has("attention_chunk_size") && fam != Family::Llama4) {
            throw InputError(r.file(), r.field("attention_chunk_size"), "chunked attention needs a chunk size");
        }
        m.attention_chunk = r.get_int_or("attention_chunk_size", 8192, 1, kMaxPositions);
    } else {
        // Defaults of the config classes: Gemma 2/3 4096, Gemma 4 512, gpt-oss 128.
        const std::int64_t fallback = model_type == "gemma4_text" ? 512
                                      : fam == Family::Gemma      ? 4096
                                      : fam == Family::GptOss     ? 128
                                                                  : 0;
        if (!stated(config, "sliding_window") && fallback == 0) {
            throw InputError(r.file(), r.field("sliding_window"), "sliding blocks need a window size");
        }
        m.sliding_window = stated(config, "sliding_window") ? r.get_int("sliding_window", 1, kMaxPositions) : fallback;
    }
}

// A gated MLP's activation: hidden_act (Gemma: hidden_activation), gpt-oss's clamped
// quick GELU with +1 on the linear half (GptOssExperts: alpha 1.702, swiglu_limit).
void read_glu_activation(JsonObjectReader& r, const Json& config, Family fam, ModelSpec& m) {
    if (m.mlp != MlpKind::Gated) return;
    if (fam == Family::GptOss) {
        m.glu_activation = "quick_gelu";
        m.glu_linear_offset = 1.0;
        m.glu_clamp = r.get_number_or("swiglu_limit", 7.0, 0.0, 1e6);
        r.ignore("hidden_act");
        return;
    }
    const char* key = stated(config, "hidden_activation") ? "hidden_activation" : "hidden_act";
    if (!stated(config, key)) {
        // Gemma's default is the tanh GELU; the others' SiLU.
        if (fam == Family::Gemma) m.glu_activation = "gelu_tanh";
        return;
    }
    const std::string act = r.get_string(key);
    if (act == "silu" || act == "swish") return;
    if (act == "gelu_pytorch_tanh" || act == "gelu_tanh" || act == "gelu_new") {
        m.glu_activation = "gelu_tanh";
    } else if (act == "quick_gelu") {
        m.glu_activation = "quick_gelu";
    } else {
        throw InputError(r.file(), r.field(key),
                         "gated MLP activation '" + act + "' is not supported (silu, gelu_pytorch_tanh, quick_gelu)");
    }
}

}  // namespace

ModelSpec model_from_hf_config(const Json& config, const std::string& file,
                               const std::string& name, const std::string& field_prefix) {
    JsonObjectReader r(config, file, field_prefix);
    // Llama 4's config.json wraps the text model (and a vision encoder Meshwork does not
    // model) in text_config.
    // Gemma 3 as shipped (Gemma3ForConditionalGeneration) wraps Gemma3TextConfig the same way
    // (transformers configuration_gemma3.py: text_config, model_type "gemma3_text").
    const std::string wrapper = r.get_string_or("model_type", "");
    // Gemma 4 (Gemma4ForConditionalGeneration) too: text_config, model_type "gemma4_text"; its
    // vision and audio towers are not modelled.
    if (wrapper == "llama4" || ((wrapper == "gemma3" || wrapper == "gemma4") && r.has("text_config"))) {
        const Json& text = r.raw("text_config");
        if (!text.is_object()) throw InputError(file, r.field("text_config"), "expected an object");
        Json inner = text;
        if (!inner.contains("model_type")) inner["model_type"] = wrapper == "llama4" ? "llama4_text" : wrapper + "_text";
        if (wrapper == "gemma3" || wrapper == "gemma4") {
            // Shipped Gemma 3 configs leave these to Gemma3TextConfig's defaults
            // (configuration_gemma3.py: vocab_size 262_208, max_position_embeddings 131_072);
            // Gemma4TextConfig's are 262_144 and 131_072.
            if (!inner.contains("vocab_size")) inner["vocab_size"] = wrapper == "gemma3" ? 262208 : 262144;
            if (!inner.contains("max_position_embeddings")) inner["max_position_embeddings"] = 131072;
        }
        return model_from_hf_config(inner, file, name, r.field("text_config"));
    }
    ModelSpec m;
    m.name = name;
    std::string model_type = r.get_string_or("model_type", "");
    if (model_type.empty()) {
        // Old GPT-2 style configs carry no model_type; recognise them by their keys.
        model_type = r.has("n_embd") ? "gpt2" : "llama";
    }
    m.family = model_type;
    const Family fam = family_of(model_type, file, r.field("model_type"));
    double mpt_attention_dropout = 0;  // MPT states it inside attn_config

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
    } else if (fam == Family::Mpt) {
        mpt_attention_dropout = read_mpt(r, m);
    } else {
        m.hidden_size = r.get_int("hidden_size", 1, kMaxWidth);
        m.num_layers = static_cast<int>(r.get_int("num_hidden_layers", 1, kMaxLayers));
        m.num_heads = static_cast<int>(r.get_int("num_attention_heads", 1, kMaxHeads));
        m.num_kv_heads =
            static_cast<int>(r.get_int_or("num_key_value_heads", m.num_heads, 1, kMaxHeads));
        m.vocab_size = r.get_int("vocab_size", 1, kMaxVocab);
        m.max_position_embeddings = r.get_int_or("max_position_embeddings", 4096, 1, kMaxPositions);
        // Llama 4: intermediate_size is the experts' width, intermediate_size_mlp the dense one.
        m.ffn_hidden_size = fam == Family::Llama4 ? r.get_int_or("intermediate_size_mlp", 16384, 1, kMaxWidth)
                                                  : r.get_int("intermediate_size", 1, kMaxWidth);
        // transformers' default: Gemma ties the LM head to the embedding, the others do not.
        m.tie_embeddings = r.get_bool_or("tie_word_embeddings", fam == Family::Gemma);
        if (fam == Family::GptNeoX) {
            m.norm = NormKind::LayerNorm;
            m.mlp = MlpKind::Dense;
            m.linear_bias = true;
            m.qkv_bias = true;
        } else if (fam == Family::GptOss) {
            // gpt-oss: Q, K, V and O carry biases (attention_bias, default true), and so do the
            // router and every expert's projections.
            m.norm = NormKind::RmsNorm;
            m.mlp = MlpKind::Gated;
            // transformers' GptOssExperts always carry biases; Megatron-LM's gpt-oss with
            // --disable-bias-linear (examples/gptoss/02_train.sh:128 at d98e8a64) has none at
            // all: no attention, expert or router bias (moe/router.py:67-72). Meshwork spells
            // that model "attention_bias": false with "mlp_bias": false, a key transformers'
            // GptOssConfig does not have; the half-biased forms are one ModelSpec cannot hold.
            m.qkv_bias = r.get_bool_or("attention_bias", true);
            m.linear_bias = r.get_bool_or("mlp_bias", true);
            if (m.qkv_bias != m.linear_bias) {
                throw InputError(file, r.field(m.qkv_bias ? "mlp_bias" : "attention_bias"),
                                 m.qkv_bias ? "gpt-oss with attention biases but no expert biases is not supported"
                                            : "gpt-oss without attention biases is supported only without expert "
                                              "biases too (add \"mlp_bias\": false, as Megatron-LM's "
                                              "--disable-bias-linear builds it)");
            }
        } else if (fam == Family::NemotronH) {
            // Squared-ReLU MLPs and experts, up and down only (mlp_hidden_act "relu2"); GELU
            // (transformers' ACT2FN "gelu") is Megatron-LM's default for a hybrid model's MLP
            // layers without --squared-relu (examples/mamba/train.sh at d98e8a64).
            m.norm = NormKind::RmsNorm;
            m.mlp = MlpKind::Dense;
            const std::string act = r.get_string_or("mlp_hidden_act", "relu2");
            if (act != "relu2" && act != "gelu") throw InputError(file, r.field("mlp_hidden_act"), "expected relu2 or gelu");
            m.mlp_activation = act == "gelu" ? "" : act;
            m.qkv_bias = r.get_bool_or("attention_bias", false);
            if (r.get_bool_or("mlp_bias", false)) throw InputError(file, r.field("mlp_bias"), "MLP biases are not modelled");
        } else {
            m.norm = NormKind::RmsNorm;
            m.mlp = MlpKind::Gated;
            m.qkv_bias = model_type == "qwen2" || model_type == "qwen2_moe" ||
                         r.get_bool_or("attention_bias", false);
        }
    }
    if (m.num_kv_heads > m.num_heads || m.num_heads % m.num_kv_heads != 0) {
        throw InputError(file, fam == Family::Mpt ? r.field("attn_config") + ".kv_n_heads" : r.field("num_key_value_heads"),
                         std::to_string(m.num_kv_heads) + " KV heads do not divide " +
                             std::to_string(m.num_heads) + " attention heads");
    }
    if (stated(config, "head_dim")) {
        m.head_dim = r.get_int("head_dim", 1, kMaxWidth);
    } else if (fam == Family::NemotronH && r.has("attention_head_dim")) {
        m.head_dim = r.get_int("attention_head_dim", 1, kMaxWidth);  // Nemotron-H's first configs
    } else {
        check_divides(m.hidden_size, m.num_heads, file, r.field("hidden_size"),
                      "hidden size must be a multiple of the number of attention heads");
        m.head_dim = m.hidden_size / m.num_heads;
    }

    if (fam == Family::NemotronH) {
        read_nemotron_h_layers(r, config, m);
        // Experts only where the pattern has E: the config class's n_routed_experts default
        // (8) says nothing for a model without MoE layers.
        bool any_moe = false;
        for (const auto& k : m.block_kinds) any_moe = any_moe || k.ffn == FfnKind::Moe;
        if (any_moe) {
            m.moe.num_experts = static_cast<int>(r.get_int("n_routed_experts", 1, kMaxExperts));
            m.moe.top_k = static_cast<int>(r.get_int("num_experts_per_tok", 1, kMaxExperts));
            m.moe.expert_ffn_hidden = r.get_int("moe_intermediate_size", 1, kMaxWidth);
            m.moe.num_shared_experts = static_cast<int>(r.get_int_or("n_shared_experts", 1, 0, 64));
            m.moe.shared_ffn_hidden = m.moe.num_shared_experts > 0
                                          ? r.get_int_or("moe_shared_expert_intermediate_size", 7688, 1, kMaxWidth)
                                          : 0;
            // NemotronHTopkRouter: sigmoid scores with e_score_correction_bias.
            m.moe.router_score = "sigmoid";
            m.moe.router_bias = true;
            if (stated(config, "moe_latent_size")) {
                throw InputError(file, r.field("moe_latent_size"), "latent MoE projections are not modelled");
            }
        }
        m.mtp_layers = static_cast<int>(r.get_int_or("num_nextn_predict_layers", 0, 0, 64));
    } else if (fam == Family::MiniMaxM2) {
        // MiniMaxM2SparseMoeBlock: num_local_experts of width intermediate_size, sigmoid
        // scores with e_score_correction_bias (use_routing_bias), no shared expert.
        m.moe.num_experts = static_cast<int>(r.get_int("num_local_experts", 1, kMaxExperts));
        m.moe.top_k = static_cast<int>(r.get_int("num_experts_per_tok", 1, kMaxExperts));
        m.moe.expert_ffn_hidden = m.ffn_hidden_size;
        m.moe.router_score = r.get_string_or("scoring_func", "sigmoid");
        m.moe.router_bias = r.get_bool_or("use_routing_bias", true);
        if (r.get_int_or("shared_intermediate_size", 0, 0, kMaxWidth) != 0) {
            throw InputError(file, r.field("shared_intermediate_size"), "a shared expert is not modelled for minimax_m2");
        }
        if (r.has("attn_type_list")) {
            const Json& v = r.raw("attn_type_list");
            for (std::size_t i = 0; v.is_array() && i < v.size(); ++i) {
                if (v[i] != Json(1)) {
                    throw InputError(file, r.field("attn_type_list") + "[" + std::to_string(i) + "]",
                                     "only full softmax attention (1) is modelled; 0 is MiniMax's lightning attention");
                }
            }
        }
        m.qk_norm = r.get_bool_or("use_qk_norm", true);
        m.qk_norm_full_width = r.get_string_or("qk_norm_type", "per_layer") == "per_layer";
        // The multi-token-prediction modules (use_mtp, num_mtp_modules) are not in the shipped
        // checkpoint (the card's 230B counts the main model), so they are not read.
        r.ignore("use_mtp");
        r.ignore("num_mtp_modules");
    } else if (fam == Family::Mixtral || fam == Family::GptOss) {
        m.moe.num_experts = static_cast<int>(r.get_int("num_local_experts", 1, kMaxExperts));
        // gpt-oss's config.json also states experts_per_token (the same number).
        if (fam == Family::GptOss && !r.has("num_experts_per_tok")) {
            m.moe.top_k = static_cast<int>(r.get_int("experts_per_token", 1, kMaxExperts));
        } else {
            m.moe.top_k = static_cast<int>(r.get_int("num_experts_per_tok", 1, kMaxExperts));
        }
        if (fam == Family::GptOss) r.ignore("experts_per_token");
        m.moe.expert_ffn_hidden = m.ffn_hidden_size;
    } else if (fam == Family::Llama4) {
        // One routed expert (sigmoid of its top-k logit) plus one shared expert, both of
        // width intermediate_size; MoE blocks interleave_moe_layer_step - 1, 2·step - 1, ...
        m.moe.num_experts = static_cast<int>(r.get_int_or("num_local_experts", 16, 1, kMaxExperts));
        m.moe.top_k = static_cast<int>(r.get_int_or("num_experts_per_tok", 1, 1, kMaxExperts));
        m.moe.expert_ffn_hidden = r.get_int_or("intermediate_size", 8192, 1, kMaxWidth);
        m.moe.num_shared_experts = 1;
        m.moe.shared_ffn_hidden = m.moe.expert_ffn_hidden;
        m.moe.router_score = "sigmoid";
        const int step = static_cast<int>(r.get_int_or("interleave_moe_layer_step", 1, 1, kMaxLayers));
        m.moe.first_k_dense = step - 1;
        m.moe.layer_freq = step;
        if (stated(config, "moe_layers")) {
            const Json& v = r.raw("moe_layers");
            std::vector<int> expected;
            for (int b = 0; b < m.num_layers; ++b) {
                if (m.is_moe_block(b)) expected.push_back(b);
            }
            if (!v.is_array() || v != Json(expected)) {
                throw InputError(file, r.field("moe_layers"),
                                 "only MoE blocks every interleave_moe_layer_step (" + std::to_string(step) +
                                     ") blocks are supported, starting at block " + std::to_string(step - 1));
            }
        }
    } else if (fam == Family::Qwen2Moe || fam == Family::Qwen3Next) {
        m.moe.num_experts = static_cast<int>(r.get_int("num_experts", 1, kMaxExperts));
        m.moe.top_k = static_cast<int>(r.get_int("num_experts_per_tok", 1, kMaxExperts));
        m.moe.expert_ffn_hidden = r.get_int("moe_intermediate_size", 1, kMaxWidth);
        m.moe.shared_ffn_hidden = r.get_int_or("shared_expert_intermediate_size", 0, 0, kMaxWidth);
        m.moe.num_shared_experts = m.moe.shared_ffn_hidden > 0 ? 1 : 0;
        m.moe.shared_expert_gate = m.moe.shared_ffn_hidden > 0;
        m.moe.layer_freq = static_cast<int>(r.get_int_or("decoder_sparse_step", 1, 1, kMaxLayers));
        // Qwen2-MoE counts sparse layers from (block + 1) % step == 0 (modeling_qwen2_moe.py):
        // blocks step-1, 2·step-1, ...; with step 1 that is all.
        m.moe.first_k_dense = m.moe.layer_freq - 1;
        if (r.has("mlp_only_layers")) {
            const Json& only = r.raw("mlp_only_layers");
            if (!only.is_array() || !only.empty()) {
                throw InputError(file, r.field("mlp_only_layers"),
                                 "dense-only layer lists are not supported; expected []");
            }
        }
    } else if (fam == Family::DeepSeek || fam == Family::DeepSeekMoe) {
        const bool default_noaux = model_type == "deepseek_v3" || model_type == "deepseek_v32" ||
                                   model_type == "glm_moe_dsa";
        m.moe.num_experts = static_cast<int>(r.get_int("n_routed_experts", 1, kMaxExperts));
        m.moe.top_k = static_cast<int>(r.get_int("num_experts_per_tok", 1, kMaxExperts));
        m.moe.expert_ffn_hidden = r.get_int("moe_intermediate_size", 1, kMaxWidth);
        m.moe.num_shared_experts = static_cast<int>(r.get_int_or("n_shared_experts", 0, 0, 64));
        m.moe.shared_ffn_hidden = m.moe.num_shared_experts * m.moe.expert_ffn_hidden;
        m.moe.first_k_dense = static_cast<int>(r.get_int_or("first_k_dense_replace", 0, 0, kMaxLayers));
        m.moe.layer_freq = static_cast<int>(r.get_int_or("moe_layer_freq", 1, 1, kMaxLayers));
        // noaux_tc routing adds e_score_correction_bias (modeling_deepseek_v3's MoEGate).
        m.moe.router_bias = r.get_string_or("topk_method", default_noaux ? "noaux_tc" : "greedy") == "noaux_tc";
    }
    if (fam == Family::DeepSeek) {
        m.uses_mla = true;
        m.mla.q_lora_rank = r.get_int_or("q_lora_rank", 0, 0, kMaxWidth);
        m.mla.kv_lora_rank = r.get_int("kv_lora_rank", 1, kMaxWidth);
        m.mla.qk_nope_head_dim = r.get_int("qk_nope_head_dim", 1, kMaxWidth);
        m.mla.qk_rope_head_dim = r.get_int("qk_rope_head_dim", 0, kMaxWidth);
        m.mla.v_head_dim = r.get_int("v_head_dim", 1, kMaxWidth);
        m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
        if (model_type == "deepseek_v32" || model_type == "glm_moe_dsa") read_sparse_attention(r, config, m);
    }
    if (fam == Family::Qwen3Next) {
        read_qwen3_next_layers(r, config, m);
        // Qwen3NextAttention: q_proj gives query and gate per head; Q and K are RMS-normed.
        m.attention_output_gate = true;
    }
    read_glu_activation(r, config, fam, m);
    // Position, norm and attention details (defaults as transformers' config classes).
    if (!m.learned_position_embeddings) {
        // transformers 5 moves rope_theta (and partial_rotary_factor) into rope_parameters.
        const Json* params = r.has("rope_parameters") && config.at("rope_parameters").is_object()
                                 ? &config.at("rope_parameters") : nullptr;
        const auto from_params = [&](const char* key, double fallback) {
            if (params == nullptr || !params->contains(key)) return fallback;
            return JsonObjectReader::as_number(params->at(key), file, r.field("rope_parameters") + "." + key, 0.0, 1e12);
        };
        // MPT states its base in attn_config (read_mpt).
        m.rope.theta = r.get_number_or("rope_theta", fam == Family::Mpt ? m.rope.theta : from_params("rope_theta", 10000.0),
                                       1.0, 1e12);
        // Qwen3-Next's default is a quarter (configuration_qwen3_next.py, __post_init__).
        const double percent_default = from_params("partial_rotary_factor", fam == Family::Qwen3Next ? 0.25 : 1.0);
        if (fam == Family::GptNeoX) m.rope.percent = r.get_number_or("rotary_pct", 1.0, 0.0, 1.0);
        else if (fam == Family::MiniMaxM2 && stated(config, "rotary_dim"))
            m.rope.percent = static_cast<double>(r.get_int("rotary_dim", 1, m.head_dim)) / static_cast<double>(m.head_dim);
        else m.rope.percent = r.get_number_or("partial_rotary_factor", percent_default, 0.0, 1.0);
        if (stated(config, "rope_scaling")) {
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
    const char* eps_key = fam == Family::Gpt2 || fam == Family::NemotronH ? "layer_norm_epsilon"
                          : fam == Family::GptNeoX ? "layer_norm_eps" : "rms_norm_eps";
    m.norm_eps = r.get_number_or(eps_key, eps_default, 0.0, 1.0);
    // Dropout: GPT-2 names them resid_pdrop / attn_pdrop (GPT2Config defaults 0.1), GPT-NeoX
    // and others hidden_dropout / attention_dropout (defaults 0.0; Llama-family configs carry
    // only attention_dropout).
    const double pdrop_default = fam == Family::Gpt2 ? 0.1 : 0.0;
    m.hidden_dropout = r.get_number_or("hidden_dropout", r.get_number_or("resid_pdrop", pdrop_default, 0.0, 1.0), 0.0, 1.0);
    m.attention_dropout = r.get_number_or("attention_dropout", r.get_number_or("attn_pdrop", pdrop_default, 0.0, 1.0), 0.0, 1.0);
    if (fam == Family::Mpt) m.attention_dropout = mpt_attention_dropout;
    m.qk_norm = m.qk_norm || model_type == "qwen3" || model_type == "qwen3_moe" || model_type == "gemma3_text" ||
                model_type == "qwen3_next";
    m.sandwich_norms = fam == Family::Gemma;
    read_local_attention(r, config, fam, model_type, m);
    if (model_type == "gemma4_text") read_gemma4_text(r, config, m);
    m.attention_sinks = fam == Family::GptOss;  // one learned logit per head (GptOssAttention.sinks)
    // Gemma 2's tanh soft-caps (Gemma 3 states them as null).
    for (auto [key, out] : {std::pair<const char*, double*>{"attn_logit_softcapping", &m.attn_logit_softcap},
                            {"final_logit_softcapping", &m.final_logit_softcap}}) {
        if (stated(config, key)) *out = r.get_number(key, 0.0, 1e6);
    }
    if (fam == Family::DeepSeek) {
        m.mtp_layers = static_cast<int>(r.get_int_or("num_nextn_predict_layers", 0, 0, 64));
    }
    if (fam == Family::Qwen3Next) {
        // The card's 80B counts the main model; a stated MTP count is read, none otherwise.
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
    if (m.family == "mpt") {
        write_mpt(m, j);
        return j;
    }
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
    if (m.mlp == MlpKind::Gated) {
        j["hidden_act"] = m.glu_activation.empty()            ? "silu"
                          : m.glu_activation == "gelu_tanh" ? "gelu_pytorch_tanh"
                                                            : m.glu_activation;
        if (m.family == "gpt_oss") j["swiglu_limit"] = m.glu_clamp;
    }
    if (!m.learned_position_embeddings) {
        j["rope_theta"] = m.rope.theta;
        j[m.family == "gpt_neox" ? "rotary_pct" : "partial_rotary_factor"] = m.rope.percent;
        if (!m.rope.scaling.empty()) j["rope_scaling"] = {{"rope_type", m.rope.scaling}, {"factor", m.rope.factor}};
    }
    j[m.family == "gpt_neox" ? "layer_norm_eps" : "rms_norm_eps"] = m.norm_eps;
    j["hidden_dropout"] = m.hidden_dropout;
    j["attention_dropout"] = m.attention_dropout;
    // Local attention as transformers' layer_types, which every family's reader takes; the
    // families whose defaults are local get the list even when all blocks are full.
    const bool local_default = m.family == "gemma2" || m.family == "gemma3_text" || m.family == "gemma4_text" ||
                               m.family == "gpt_oss" || m.family == "llama4_text";
    if (m.sliding_window > 0 || m.attention_chunk > 0 || local_default) {
        Json types = Json::array();
        for (int b = 0; b < m.num_layers; ++b) {
            types.push_back(!m.is_local_attention_block(b) ? "full_attention"
                            : m.attention_chunk > 0        ? "chunked_attention"
                                                           : "sliding_attention");
        }
        j["layer_types"] = types;
    }
    if (m.sliding_window > 0) {
        j["sliding_window"] = m.sliding_window;
        j["use_sliding_window"] = true;
    }
    if (m.attention_chunk > 0) j["attention_chunk_size"] = m.attention_chunk;
    else if (m.family == "llama4_text") j["attention_chunk_size"] = nullptr;
    if (m.attn_logit_softcap > 0) j["attn_logit_softcapping"] = m.attn_logit_softcap;
    if (m.final_logit_softcap > 0) j["final_logit_softcapping"] = m.final_logit_softcap;
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
    if (m.family == "gpt_oss" && !m.linear_bias) j["mlp_bias"] = false;  // Meshwork's key (reader above)
    if (m.family == "mixtral" || m.family == "gpt_oss") {
        j["num_local_experts"] = m.moe.num_experts;
        j["num_experts_per_tok"] = m.moe.top_k;
    } else if (m.family == "llama4_text") {
        j["num_local_experts"] = m.moe.num_experts;
        j["num_experts_per_tok"] = m.moe.top_k;
        j["intermediate_size"] = m.moe.expert_ffn_hidden;
        j["intermediate_size_mlp"] = m.ffn_hidden_size;
        j["interleave_moe_layer_step"] = m.moe.layer_freq;
    } else if (m.family == "minimax_m2") {
        j["num_local_experts"] = m.moe.num_experts;
        j["num_experts_per_tok"] = m.moe.top_k;
        j["scoring_func"] = m.moe.router_score;
        j["use_routing_bias"] = m.moe.router_bias;
        j["use_qk_norm"] = m.qk_norm;
        j["qk_norm_type"] = m.qk_norm_full_width ? "per_layer" : "per_head";
    } else if (m.family == "nemotron_h") {
        j["mlp_hidden_act"] = m.mlp_activation.empty() ? "gelu" : m.mlp_activation;
        j["layer_norm_epsilon"] = m.norm_eps;
        j.erase("rms_norm_eps");
        if (m.is_moe()) {
            j["n_routed_experts"] = m.moe.num_experts;
            j["num_experts_per_tok"] = m.moe.top_k;
            j["moe_intermediate_size"] = m.moe.expert_ffn_hidden;
            j["n_shared_experts"] = m.moe.num_shared_experts;
            j["moe_shared_expert_intermediate_size"] = m.moe.shared_ffn_hidden;
        }
        j["num_nextn_predict_layers"] = m.mtp_layers;
    } else if (m.family == "qwen2_moe" || m.family == "qwen3_moe" || m.family == "qwen3_next") {
        j["num_experts"] = m.moe.num_experts;
        j["num_experts_per_tok"] = m.moe.top_k;
        j["moe_intermediate_size"] = m.moe.expert_ffn_hidden;
        j["shared_expert_intermediate_size"] = m.moe.shared_ffn_hidden;
        j["decoder_sparse_step"] = m.moe.layer_freq;
    } else if (m.family == "deepseek_v3" || m.family == "deepseek_v2" || m.family == "kimi_k2" ||
               m.family == "deepseek" || m.family == "deepseek_v32" || m.family == "glm_moe_dsa") {
        j["n_routed_experts"] = m.moe.num_experts;
        j["num_experts_per_tok"] = m.moe.top_k;
        j["moe_intermediate_size"] = m.moe.expert_ffn_hidden;
        j["n_shared_experts"] = m.moe.num_shared_experts;
        j["first_k_dense_replace"] = m.moe.first_k_dense;
        j["moe_layer_freq"] = m.moe.layer_freq;
        j["scoring_func"] = m.moe.router_score;
        j["topk_method"] = m.moe.router_bias ? "noaux_tc" : "greedy";
        if (m.family == "deepseek") return j;
        j["num_nextn_predict_layers"] = m.mtp_layers;
        j.erase("head_dim");
        j["q_lora_rank"] = m.mla.q_lora_rank;
        j["kv_lora_rank"] = m.mla.kv_lora_rank;
        j["qk_nope_head_dim"] = m.mla.qk_nope_head_dim;
        j["qk_rope_head_dim"] = m.mla.qk_rope_head_dim;
        j["v_head_dim"] = m.mla.v_head_dim;
    }
    if (m.family == "qwen3_next") j["num_nextn_predict_layers"] = m.mtp_layers;
    write_hybrid_fields(m, j);
    if (m.family == "gemma4_text") write_gemma4_text(m, j);
    return j;
}

}  // namespace meshwork
