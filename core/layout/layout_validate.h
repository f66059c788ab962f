// Semantic validation of a layout: every rule a real training framework would enforce,
// each failure naming the field and the rule.
#pragma once

#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/layout/layout.h"

namespace meshwork {

struct ValidationResult {
    std::vector<InputIssue> errors;
    std::vector<InputIssue> warnings;
    [[nodiscard]] bool valid() const { return errors.empty(); }
};

ValidationResult validate_layout(const Layout& layout, const std::string& file);
// Throws InputError carrying every error when the layout is invalid.
void require_valid_layout(const Layout& layout, const std::string& file);

}  // namespace meshwork
