// A Megatron-Bridge recipe (a Python function that builds and returns a ConfigContainer,
// src/megatron/bridge/recipes/ and perf_recipes/ at NVIDIA-NeMo/Megatron-Bridge 067f987d) ->
// Layout. Nothing is run: the reader follows the function, the base configs it calls and the
// helpers it passes the config to (in the same module, or in the modules it imports from when
// the recipe sits in a Megatron-Bridge checkout), collects the `cfg.section.field = constant`
// settings, and reads them as the Megatron-LM arguments they are (Bridge's model and training
// fields are Megatron-LM's argument names) through import_megatron's parser, so that every rule
// of that import holds here too. The model comes from --model, or from the bundled preset made
// from the Hugging Face repository the recipe names (AutoBridge.from_hf_pretrained).
#pragma once

#include <string>

#include "core/export/export_types.h"

namespace meshwork {

// A module that builds Megatron-Bridge configs: it imports from megatron.bridge and assigns
// cfg.<section>.<field>.
bool is_bridge_recipe(const std::string& text);

ImportResult import_bridge_recipe(const std::string& text, const std::string& file, const ImportOptions& options);

}  // namespace meshwork
