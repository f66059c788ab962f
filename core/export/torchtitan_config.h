// Layout <-> torchtitan job config TOML ([model], [training], [parallelism],
// [activation_checkpoint]; torchtitan/config/job_config.py).
#pragma once

#include <string>

#include "export/export_types.h"
#include "layout/layout.h"

namespace meshwork {

// torchtitan's model name and flavor for a bundled preset; false when torchtitan has no
// flavor of that architecture.
bool torchtitan_flavor(const std::string& preset, std::string& name, std::string& flavor);
// The bundled preset of a torchtitan model name and flavor; empty when none.
std::string preset_of_torchtitan_flavor(const std::string& name, const std::string& flavor);

ExportResult export_torchtitan(const Layout& layout);
ImportResult import_torchtitan(const std::string& text, const std::string& file,
                               const ImportOptions& options);

}  // namespace meshwork
