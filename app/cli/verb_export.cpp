// meshwork-cli export: a layout as a production job config (docs/export.md).
#include <iostream>

#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "app/cli/exit_codes.h"
#include "core/export/exporter.h"
#include "core/export/text_file.h"
#include "core/layout/layout_validate.h"
#include "app/cli/layout_flags.h"
#include "app/cli/verb.h"

namespace meshwork::cli {

namespace {

struct ExportArgs {
    std::string format;
    std::string trainer = "megatron";
    std::string out;
    bool allow_lossy = false;
    bool json = false;
};

}  // namespace

Verb add_export_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "export", "Write a layout as Megatron-LM arguments, a DeepSpeed or torchtitan config, a "
                  "SLURM job, or a layout file");
    auto flags = std::make_shared<LayoutFlags>(cmd);
    auto a = std::make_shared<ExportArgs>();
    cmd->add_option("--format", a->format, "megatron, deepspeed, torchtitan (a config module for torchtitan main), torchtitan-toml (v0.2.x), slurm or layout")
        ->required();
    cmd->add_option("--trainer", a->trainer,
                    "What the SLURM job runs: megatron (default), torchtitan or meshwork "
                    "(meshwork-cli run --launcher mpi)");
    cmd->add_option("--out", a->out, "Write to FILE (atomically) instead of standard output");
    cmd->add_flag("--allow-lossy", a->allow_lossy,
                  "Write the config even when the format cannot express part of the layout");
    cmd->add_flag("--json", a->json, "Print JSON: format, lossless, lost[], out, content");
    cmd->footer("Exit codes: 0 success, 1 runtime failure (cannot write --out), 2 bad input (an "
                "invalid layout, an unknown --format, or a lossy export without --allow-lossy; "
                "each lost setting is named on stderr).");
    return {cmd, [flags, a]() {
                ExportFormat format{};
                if (!parse_export_format(a->format, format)) {
                    throw InputError("<flags>", "--format",
                                     "unknown format '" + a->format +
                                         "' (megatron, deepspeed, torchtitan, torchtitan-toml, slurm, layout)");
                }
                ExportOptions options;
                if (!parse_slurm_trainer(a->trainer, options.slurm_trainer)) {
                    throw InputError("<flags>", "--trainer",
                                     "unknown trainer '" + a->trainer + "' (megatron, torchtitan, meshwork)");
                }
                const Layout layout = flags->build();
                const auto checked = validate_layout(layout, flags->source());
                for (const auto& w : checked.warnings) std::cerr << "warning: " << w.to_string() << "\n";
                if (!checked.valid()) throw InputError(checked.errors);

                const ExportResult result = export_layout(layout, format, options);
                for (const auto& lost : result.lost) {
                    std::cerr << (a->allow_lossy ? "lost: " : "error: lost: ") << a->format << ": "
                              << lost << "\n";
                }
                if (!result.lossless() && !a->allow_lossy) {
                    std::cerr << "error: " << flags->source() << ": --format " << a->format
                              << " cannot express the whole layout; --allow-lossy writes it anyway\n";
                    return kExitBadInput;
                }
                if (!a->out.empty()) {
                    if (format == ExportFormat::Layout || format == ExportFormat::DeepSpeed) {
                        save_json_file(nlohmann::json::parse(result.text), a->out);
                    } else {
                        save_text_file(result.text, a->out);
                    }
                }
                if (a->json) {
                    nlohmann::json j{{"format", a->format},
                                     {"lossless", result.lossless()},
                                     {"lost", result.lost},
                                     {"out", a->out.empty() ? nlohmann::json() : nlohmann::json(a->out)}};
                    if (a->out.empty()) j["content"] = result.text;
                    std::cout << j.dump(2) << "\n";
                } else if (a->out.empty()) {
                    std::cout << result.text;
                } else {
                    std::cout << "wrote " << a->out << " (" << a->format << ")\n";
                }
                return kExitOk;
            }};
}

namespace {
Verb make_export_verb(CLI::App& app) { return add_export_verb(app); }
}  // namespace
MESHWORK_REGISTER_VERB(140, make_export_verb);

}  // namespace meshwork::cli
