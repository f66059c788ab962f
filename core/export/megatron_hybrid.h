// Megatron-LM's hybrid (Mamba / attention) layer patterns as import-args reads them: the
// letters of Symbols in megatron/core/models/hybrid/hybrid_layer_allocation.py (:14-25 at
// d98e8a64) and the deprecated ratio arguments of core_v0.12 … core_v0.16
// (--hybrid-attention-ratio, --hybrid-mlp-ratio) turned into a pattern as
// pattern_from_ratios (:74-125) does. megatron_import_model.cpp reads the flags; this file owns
// the pattern's alphabet.
#pragma once

#include <string>

namespace meshwork {

// Why `pattern` is not read into ModelSpec block kinds, or "" when it is (M Mamba-2,
// * attention, - MLP, E MoE). Upstream's other letters and separators are named: G Gated
// DeltaNet, D DeepSeek sparse attention and + MLA (their dimension flags are not read yet),
// '|' pipeline segments and '/' MTP depths.
std::string megatron_hybrid_pattern_problem(const std::string& pattern);

// The pattern Megatron-LM builds from the ratios: attention layers evenly spaced between
// Mamba layers, then MLP layers evenly among the Mamba ones. Ratios in [0, 1], summing to
// at most 1; `num_layers` > 0.
std::string megatron_pattern_from_ratios(int num_layers, double attention_ratio, double mlp_ratio);

}  // namespace meshwork
