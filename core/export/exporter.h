// meshwork-cli export: one entry point for every format.
#pragma once

#include "core/export/export_types.h"
#include "core/layout/layout.h"

namespace meshwork {

// The config text for `format` and what it loses. ExportFormat::Layout writes the layout's
// own JSON (after any flags were applied) and loses nothing.
ExportResult export_layout(const Layout& layout, ExportFormat format, const ExportOptions& options = {});

}  // namespace meshwork
