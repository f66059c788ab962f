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
// Why DeepSpeed's AutoEP refuses the layout's expert parallelism at initialize
// (module_inject/auto_ep_folding.py validate_folding_global, called from engine.py:594-617),
// or empty when it accepts it.
std::string deepspeed_autoep_refusal(const Layout& layout);
ImportResult import_deepspeed(const std::string& text, const std::string& file,
                              const ImportOptions& options);

}  // namespace meshwork
