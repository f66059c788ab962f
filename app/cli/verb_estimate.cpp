// meshwork-cli estimate: the analytical cost model of a layout (docs/cost-model.md).
#include <iostream>

#include "core/cost/cost_model.h"
#include "core/cost/estimate_json.h"
#include "core/cost/estimate_report.h"
#include "app/cli/exit_codes.h"
#include "core/layout/layout_validate.h"
#include "app/cli/layout_flags.h"
#include "app/cli/verb.h"

namespace meshwork::cli {

namespace {

Verb make_estimate_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "estimate", "Predict memory per stage, step time, MFU and bubble of a layout (cost model)");
    auto flags = std::make_shared<LayoutFlags>(cmd);
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json,
                  "Print JSON: step_time_s, tokens_per_s, model_tflops_per_gpu, "
                  "hardware_tflops_per_gpu, mfu, bubble_fraction, exposed_comm_s, fits, stages[], time{}");
    cmd->footer("A layout that is valid but does not fit is costed and reported with fits: false.\n"
                "Exit codes: 0 success, 2 bad input (an invalid layout; the message names the field).");
    return {cmd, [flags, json]() {
                const Layout layout = flags->build();
                const auto result = validate_layout(layout, flags->source());
                for (const auto& w : result.warnings) std::cerr << "warning: " << w.to_string() << "\n";
                if (!result.valid()) throw InputError(result.errors);
                const CostModel model(layout);
                Estimate e;
                model.estimate(layout, e);
                if (*json) {
                    std::cout << estimate_to_json(e).dump(2) << "\n";
                } else {
                    std::cout << format_estimate_report(e, static_cast<double>(layout.cluster.gpu.hbm_bytes));
                }
                return kExitOk;
            }};
}

}  // namespace

MESHWORK_REGISTER_VERB(40, make_estimate_verb);

}  // namespace meshwork::cli
