// Layout <-> torchtitan: a config module for current main (Python, --module/--config) and a
// job config TOML for v0.2.x (--job.config_file). The facts both rely on are in
// torchtitan_facts.h; docs/export.md says which upstream lines they come from.
#pragma once

#include <string>

#include "core/export/export_types.h"
#include "core/layout/layout.h"

namespace meshwork {

// --format torchtitan: a Python module defining one function that returns Trainer.Config.
ExportResult export_torchtitan(const Layout& layout);
// --format torchtitan-toml: a v0.2.x job config ([job], [model], [training], [parallelism],
// [activation_checkpoint], key names of v0.2.2).
ExportResult export_torchtitan_toml(const Layout& layout);
// The function name export_torchtitan() gives the layout's config (a Python identifier).
std::string torchtitan_function_name(const std::string& layout_name);

// Either form, told apart by content (a TOML table header, or Python).
ImportResult import_torchtitan(const std::string& text, const std::string& file,
                               const ImportOptions& options);
ImportResult import_torchtitan_toml(const std::string& text, const std::string& file,
                                    const ImportOptions& options);
ImportResult import_torchtitan_module(const std::string& text, const std::string& file,
                                      const ImportOptions& options);
// True when `text` looks like a torchtitan Python config module (imports torchtitan and
// returns a Trainer.Config).
bool is_torchtitan_module(const std::string& text);

}  // namespace meshwork
