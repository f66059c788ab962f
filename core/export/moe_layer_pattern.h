// Megatron-LM's --moe-layer-freq: an integer N (every N-th layer is MoE, starting with layer
// 0) or a Python list expression over 0/1 such as "([0]*3+[1]*58)" (arguments.py,
// moe_freq_type). Meshwork's ModelSpec says the same with first_k_dense and layer_freq.
#pragma once

#include <string>

#include "core/model/model_spec.h"

namespace meshwork {

// The value for --moe-layer-freq; empty when every block is MoE (Megatron's default, 1).
std::string moe_layer_freq_value(const ModelSpec& model);

// Reads an integer or a list expression for `num_layers` blocks into first_k_dense and
// layer_freq. False with `error` set when the text is malformed, has the wrong length, or
// describes a pattern that first_k_dense + layer_freq cannot express.
bool parse_moe_layer_freq(const std::string& text, int num_layers, int& first_k_dense,
                          int& layer_freq, std::string& error);

}  // namespace meshwork
