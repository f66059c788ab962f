#include "core/export/model_match.h"

#include <vector>

#include "core/common/error.h"
#include "core/common/resources.h"
#include "core/model/hf_config.h"

namespace meshwork {

namespace {

bool same_architecture(ModelSpec a, ModelSpec b, bool vocab_known) {
    a.name = b.name = "";
    a.family = b.family = "";
    if (!vocab_known) a.vocab_size = b.vocab_size = 0;
    return a == b;
}

// The Hugging Face model_type that spells this architecture (hf_config.cpp's families).
std::string infer_family(const ModelSpec& m) {
    // Per-block kinds: the family whose config spells them (hf_hybrid_config.h).
    if (m.has_mixer(MixerKind::Mamba2)) return "nemotron_h";
    if (m.has_mixer(MixerKind::LinearAttention)) return "qwen3_next";
    if (m.uses_mla) return m.moe.router_bias ? "deepseek_v3" : "deepseek_v2";
    if (m.is_moe()) {
        if (m.attention_sinks) return "gpt_oss";
        if (m.attention_chunk > 0) return "llama4_text";
        if (m.moe.shared_expert_gate) return "qwen2_moe";
        if (m.qk_norm && m.moe.num_shared_experts == 0) return "qwen3_moe";
        // Experts every N-th block from block N-1 (Megatron-DeepSpeed's --expert-interval):
        // Qwen2-MoE's decoder_sparse_step.
        if (m.moe.layer_freq > 1 && m.moe.first_k_dense == m.moe.layer_freq - 1 && m.moe.num_shared_experts == 0 &&
            m.moe.router_score == "softmax" && !m.moe.router_bias) {
            return "qwen2_moe";
        }
        // DeepSeek-MoE spells shared experts, dense first layers and sigmoid scores.
        if (m.moe.num_shared_experts > 0 || m.moe.first_k_dense > 0 || m.moe.router_score != "softmax") return "deepseek";
        return "mixtral";
    }
    if (m.mlp == MlpKind::Gated) {
        if (m.qk_norm) return "qwen3";
        return m.qkv_bias && !m.linear_bias ? "qwen2" : "llama";
    }
    return m.learned_position_embeddings ? "gpt2" : "gpt_neox";
}

}  // namespace

ModelMatch resolve_model(const ModelSpec& model, bool vocab_known, const std::string& inline_name,
                         const std::string& file, const std::string& field) {
    std::vector<ModelMatch> matches;
    for (const auto& name : list_presets(PresetKind::Model)) {
        ModelSpec preset;
        try {
            preset = load_model(name);
        } catch (const InputError&) {
            continue;  // a broken preset is validate's business, not a reason to fail here
        }
        if (same_architecture(model, preset, vocab_known)) matches.push_back({name, preset});
    }
    if (!matches.empty()) {
        for (const auto& m : matches) {
            if (m.model.vocab_size != matches.front().model.vocab_size) {
                throw InputError(file, field,
                                 "the vocabulary size is not stated and the presets '" +
                                     matches.front().preset + "' and '" + m.preset +
                                     "' differ in it: add --vocab-size");
            }
        }
        return matches.front();
    }
    if (!vocab_known) {
        throw InputError(file, field,
                         "the vocabulary size is not stated and no bundled preset has this "
                         "architecture: add --vocab-size (Megatron-LM takes it from the tokenizer)");
    }
    ModelSpec spec = model;
    spec.family = infer_family(spec);
    spec.name = inline_name;
    ModelSpec back;
    try {
        back = model_from_hf_config(model_to_hf_config(spec), file, spec.name, field);
    } catch (const InputError& e) {
        throw InputError(file, field,
                         "no Hugging Face config.json that Meshwork reads describes this model (" +
                             e.issues().front().message + ")");
    }
    if (!(back == spec)) {
        throw InputError(file, field,
                         "no Hugging Face config.json that Meshwork reads describes this "
                         "combination of norm, MLP, biases, position embeddings and experts "
                         "(closest: model_type '" + spec.family + "')");
    }
    return {"", spec};
}

}  // namespace meshwork
