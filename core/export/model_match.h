// The model of an imported config: a bundled preset when the architecture matches one
// exactly, else an inline model that layout files can hold ({"name", "hf_config"}).
#pragma once

#include <optional>
#include <string>

#include "core/model/model_spec.h"

namespace meshwork {

struct ModelMatch {
    std::string preset;  // the preset's name; empty when `model` is inline
    ModelSpec model;
};

// Compares every ModelSpec field except name and family (and vocab_size when the config did
// not state it). Without a preset match the model is made inline: its Hugging Face
// model_type is inferred from the architecture and the config.json round trip is checked.
// InputError(file, field, ...) when no config.json can describe the model, or when the
// vocabulary is unknown and no single preset settles it.
ModelMatch resolve_model(const ModelSpec& model, bool vocab_known, const std::string& inline_name,
                         const std::string& file, const std::string& field);

}  // namespace meshwork
