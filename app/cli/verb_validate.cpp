// meshwork-cli validate: every rule a layout breaks, each naming the file and field.
#include <iostream>

#include "core/common/error.h"
#include "app/cli/exit_codes.h"
#include "core/layout/layout_validate.h"
#include "app/cli/layout_flags.h"
#include "app/cli/verb.h"

namespace meshwork::cli {

namespace {
nlohmann::json issues_json(const std::vector<InputIssue>& issues) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& i : issues) {
        out.push_back({{"file", i.file}, {"field", i.field}, {"message", i.message}});
    }
    return out;
}
}  // namespace

Verb add_validate_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand("validate", "Check a layout against every rule");
    auto flags = std::make_shared<LayoutFlags>(cmd);
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "Print JSON: valid, errors[] (field, message), warnings[]");
    cmd->footer("Exit codes: 0 valid, 2 invalid or unreadable (each error on its own line: "
                "FILE: FIELD: RULE).");
    return {cmd, [flags, json]() {
                ValidationResult result;
                try {
                    const Layout layout = flags->build();
                    result = validate_layout(layout, flags->source());
                } catch (const InputError& e) {
                    result.errors = e.issues();  // unreadable: report as validation errors
                }
                if (*json) {
                    std::cout << nlohmann::json{{"valid", result.valid()},
                                                {"errors", issues_json(result.errors)},
                                                {"warnings", issues_json(result.warnings)}}
                                     .dump(2)
                              << "\n";
                } else {
                    for (const auto& w : result.warnings) {
                        std::cerr << "warning: " << w.to_string() << "\n";
                    }
                    for (const auto& e : result.errors) std::cerr << e.to_string() << "\n";
                    if (result.valid()) std::cout << flags->source() << ": valid\n";
                }
                return result.valid() ? kExitOk : kExitBadInput;
            }};
}

namespace {
Verb make_validate_verb(CLI::App& app) { return add_validate_verb(app); }
}  // namespace
MESHWORK_REGISTER_VERB(30, make_validate_verb);

}  // namespace meshwork::cli
