// Layout <-> DeepSpeed config JSON (deepspeed.initialize(config=...)). The config holds the
// batch sizes, ZeRO stage, precision, AutoTP size, pipeline stages and Ulysses sequence-
// parallel size; the model lives in the user's script, so import needs --model.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/export/export_types.h"
#include "core/layout/layout.h"

namespace meshwork {

ExportResult export_deepspeed(const Layout& layout);
nlohmann::json deepspeed_config_json(const Layout& layout, std::vector<std::string>& lost);
ImportResult import_deepspeed(const std::string& text, const std::string& file,
                              const ImportOptions& options);

}  // namespace meshwork
