// Gemma 4 (transformers configuration_gemma4.py, modeling_gemma4.py; model_type
// "gemma4_text", or "gemma4" wrapping it in text_config): Gemma 3's block with wider
// full-attention blocks (ModelSpec::global_attention) and, in the MoE models, the experts
// beside the dense MLP. hf_config.cpp reads the rest of the config (Gemma's norms, GeGLU,
// tied head, sliding/full layer_types, soft-cap); these read and write what is Gemma 4's own.
#pragma once

#include <nlohmann/json.hpp>

#include "core/common/json_reader.h"
#include "core/model/model_spec.h"

namespace meshwork {

// The full-attention blocks' geometry (global_head_dim, default 512; with attention_k_eq_v
// num_global_key_value_heads and no v_proj), the MoE block (enable_moe_block: num_experts,
// top_k_experts, moe_intermediate_size, softmax router; the dense MLP of intermediate_size
// runs beside the experts on every token, so it is a shared expert), and the rotary base of
// the sliding blocks. Refused by name: per-layer input embeddings (hidden_size_per_layer_input,
// default 256), KV shared across layers (num_kv_shared_layers) and bidirectional attention
// over all tokens, which Meshwork's block model does not hold.
void read_gemma4_text(JsonObjectReader& r, const nlohmann::json& config, ModelSpec& m);

// Writes the fields above back for model_to_hf_config (family "gemma4_text").
void write_gemma4_text(const ModelSpec& m, nlohmann::json& j);

}  // namespace meshwork
