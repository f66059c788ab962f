// Summaries of a model and a mesh as JSON (the keys of `meshwork-cli describe --json`).
#pragma once

#include <nlohmann/json.hpp>

#include "core/layout/layout.h"

namespace meshwork {

// params_total, params_active, params_embedding, flops_per_token (forward+backward,
// 6·N-style: 3× forward, causal attention), forward_flops_per_token, shape fields.
nlohmann::json model_summary_json(const ModelSpec& model, int seq_length);
// world_size, axes, nodes, groups per axis and, when `with_ranks`, ranks[] with coordinates.
nlohmann::json mesh_summary_json(const Layout& layout, bool with_ranks);

}  // namespace meshwork
