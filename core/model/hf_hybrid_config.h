// The per-block kinds of hybrid and sparse-attention families in Hugging Face config.json
// files: Qwen3-Next's Gated DeltaNet / attention layers, Nemotron-H's Mamba-2 / attention /
// MLP / MoE pattern, DeepSeek sparse attention's indexer (deepseek_v32, glm_moe_dsa).
// hf_config.cpp reads the rest of each config; these fill ModelSpec::block_kinds and the
// mixer dimensions, and write them back.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/common/json_reader.h"
#include "core/model/model_spec.h"

namespace meshwork {

// Qwen3-Next: layer_types ("linear_attention" / "full_attention"), or full_attention_interval
// (configuration_qwen3_next.py: block i is full when (i + 1) % interval == 0, default 4),
// and the linear_* dimensions with their defaults.
void read_qwen3_next_layers(JsonObjectReader& r, const nlohmann::json& config, ModelSpec& m);

// Nemotron-H: hybrid_override_pattern (M Mamba-2, * attention, - MLP, E MoE), or the list
// layers_block_type / layer_types; the pattern's length is the number of layers (as
// configuration_nemotron_h.py derives num_hidden_layers). Mamba dims with their defaults.
void read_nemotron_h_layers(JsonObjectReader& r, const nlohmann::json& config, ModelSpec& m);

// A Megatron-LM hybrid pattern (M, *, -, E; G Gated DeltaNet and S sparse attention as
// ModelSpec::block_letters writes them) into block kinds; `field` names it in errors.
std::vector<BlockKind> block_kinds_from_pattern(const std::string& pattern, const std::string& file,
                                                const std::string& field);
// The pattern of `m`, one letter per Megatron layer (Nemotron-H's one-sublayer blocks), or
// "" when a block has both a mixer and an MLP, which Megatron's pattern cannot spell.
std::string hybrid_pattern(const ModelSpec& m);

// DeepSeek sparse attention: index_n_heads, index_head_dim, index_topk; every block's
// mixer becomes SparseAttention. GLM-5's indexer_types marks blocks that reuse the previous
// block's top-k ("shared": no indexer scores of their own) and mlp_layer_types the dense ones.
void read_sparse_attention(JsonObjectReader& r, const nlohmann::json& config, ModelSpec& m);

// Writes the fields above back for model_to_hf_config.
void write_hybrid_fields(const ModelSpec& m, nlohmann::json& j);

}  // namespace meshwork
