// MosaicML's MPT (model_type "mpt": llm-foundry llmfoundry/models/mpt/configuration_mpt.py,
// the config class of the mosaicml/mpt-* checkpoints and of every MPT model llm-foundry
// trains). Its keys are its own (d_model, n_heads, n_layers, expansion_ratio, attn_config,
// ffn_config), so this reads them into a ModelSpec; hf_config.cpp reads the rest as for every
// family (norm epsilon, dropout of the residual, head dim).
#pragma once

#include <nlohmann/json.hpp>

#include "core/common/json_reader.h"
#include "core/model/model_spec.h"

namespace meshwork {

// Geometry, positions, biases, norm and MLP of an MPT config, with MPTConfig's defaults where a
// key is absent: expansion_ratio 4, learned_pos_emb true, no_bias false, LayerNorm
// (low_precision_layernorm and layernorm are LayerNorm run in different precisions), the
// ungated GELU MLP (ffn_type mptmlp; mptglu is SwiGLU), multi-head attention (attn_type
// grouped_query_attention / multiquery_attention with kv_n_heads), tied embeddings. ALiBi adds
// a bias inside the attention kernel and is not priced; RoPE (attn_config.rope) is read as
// rotary positions. Refused by name: attention over a prefix-LM mask (prefix_lm), MoE FFNs
// (ffn_type mb_moe / mb_dmoe), which Meshwork's block model does not hold.
// Returns the attention dropout (attn_config.attn_pdrop), which the caller applies after its
// own dropout defaults.
double read_mpt(JsonObjectReader& r, ModelSpec& m);

// The same keys written back for model_to_hf_config (family "mpt").
void write_mpt(const ModelSpec& m, nlohmann::json& j);

}  // namespace meshwork
