// meshwork-cli import-args: a Megatron-LM command line, a DeepSpeed config or a torchtitan
// job config -> Layout, with the inputs that were ignored and the assumptions made.
#pragma once

#include <string>

#include "core/export/export_types.h"

namespace meshwork {

// Auto: JSON (first non-blank character '{') is DeepSpeed, TOML with a [parallelism] or
// [training] table is torchtitan, anything else a command line. The layout is canonical
// (canonical_layout()) and not yet validated.
ImportResult import_config(const std::string& text, const std::string& file, ImportFormat format,
                           const ImportOptions& options);
// The format Auto resolves to for `text`.
ImportFormat detect_import_format(const std::string& text);

}  // namespace meshwork
