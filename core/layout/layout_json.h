// The versioned layout file format (docs/layout-format.md).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/layout/layout.h"

namespace meshwork {

inline constexpr int kLayoutFormatVersion = 1;

// Parses a layout document; type, range and unknown-key errors raise InputError naming
// `file` and the field. Semantic rules are checked separately by validate_layout().
Layout layout_from_json(const nlohmann::json& j, const std::string& file);
// Serialises a layout; layout_from_json(layout_to_json(L)) == L.
nlohmann::json layout_to_json(const Layout& layout);
Layout load_layout(const std::string& path);
// Writes atomically (temporary file + rename).
void save_layout(const Layout& layout, const std::string& path);

}  // namespace meshwork
