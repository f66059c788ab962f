// Reading Hugging Face config.json files (Llama, Mistral, Mixtral, Qwen2, Qwen2-MoE,
// GPT-2/GPT-3, GPT-NeoX, DeepSeek-V3) into a ModelSpec.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/model/model_spec.h"

namespace meshwork {

// `file` names the source in error messages; `name` becomes ModelSpec::name.
ModelSpec model_from_hf_config(const nlohmann::json& config, const std::string& file,
                               const std::string& name, const std::string& field_prefix = "");
// A preset name (resources/models) or a path to a config.json.
ModelSpec load_model(const std::string& name_or_path, const std::string& file = "<flags>",
                     const std::string& field = "model");
// A config.json for `spec`, readable again by model_from_hf_config.
nlohmann::json model_to_hf_config(const ModelSpec& spec);

}  // namespace meshwork
