// meshwork-cli import-args: a Megatron-LM command line, a DeepSpeed config, a torchtitan
// job config or a Megatron-Bridge recipe as a Meshwork layout (docs/export.md).
#include <iostream>
#include <map>
#include <optional>

#include "core/common/error.h"
#include "core/common/printable.h"
#include "core/common/json_reader.h"
#include "app/cli/layout_flags.h"
#include "app/cli/exit_codes.h"
#include "core/export/importer.h"
#include "core/export/text_file.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_validate.h"
#include "app/cli/verb.h"

namespace meshwork::cli {

namespace {

struct ImportArgs {
    std::string input = "-";
    std::string format = "auto";
    std::string cluster, model, name, out, config;
    int gpus = 0, nodes = 0, seq = 0;
    long long vocab = 0;
    int stages = 0;
    CLI::Option* stages_opt = nullptr;
    std::vector<std::string> set, sources;
    CLI::Option* vocab_opt = nullptr;
    bool json = false;
    bool strict = false;
    CLI::Option* cluster_opt = nullptr;
    CLI::Option* model_opt = nullptr;
    CLI::Option* gpus_opt = nullptr;
    CLI::Option* nodes_opt = nullptr;
    CLI::Option* seq_opt = nullptr;
    CLI::Option* config_opt = nullptr;
};

nlohmann::json ignored_json(const std::vector<IgnoredInput>& ignored) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& i : ignored) {
        out.push_back({{"where", i.where}, {"argument", i.text}, {"reason", i.reason}});
    }
    return out;
}

}  // namespace

Verb add_import_args_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "import-args", "Read a Megatron-LM command line (or a DeepSpeed/torchtitan config, or a Megatron-Bridge recipe) as a layout");
    auto a = std::make_shared<ImportArgs>();
    cmd->add_option("input", a->input,
                    "File with the command line or config; '-' or nothing reads standard input");
    cmd->add_option("--format", a->format,
                    "auto (default), megatron, deepspeed, torchtitan or bridge (a Megatron-Bridge recipe module)");
    a->cluster_opt = cmd->add_option("--cluster", a->cluster, "Cluster preset or JSON (default: dgx-h100)");
    a->model_opt = cmd->add_option("--model", a->model,
                                   "Model preset or config.json (required for DeepSpeed configs, and for Megatron-Bridge recipes whose Hugging Face model no bundled preset is made from)");
    a->gpus_opt = cmd->add_option("--gpus", a->gpus, "World size when the input does not carry it");
    a->nodes_opt = cmd->add_option("--nodes", a->nodes, kNodesFlagHelp);
    a->seq_opt = cmd->add_option("--seq", a->seq, "Sequence length (DeepSpeed configs have none)");
    a->config_opt = cmd->add_option("--config", a->config,
                                    "torchtitan main or Megatron-Bridge: the config (recipe) function to read from a module with several");
    a->vocab_opt = cmd->add_option("--vocab-size", a->vocab,
                                   "Vocabulary size when the command line takes it from a tokenizer");
    a->stages_opt = cmd->add_option("--pipeline-stages", a->stages,
                                    "DeepSpeed: PipelineModule(num_stages) of the training script (the config has none)");
    cmd->add_option("--set", a->set,
                    "NAME=VALUE: a value the launch script cannot know (a variable set from the "
                    "environment or a command, or an argument: --set 1=VALUE for $1); repeatable");
    cmd->add_option("--source", a->sources,
                    "NAME=PATH: the file that the script's '. NAME' or 'source NAME' reads; repeatable");
    cmd->add_option("--name", a->name, "Layout name (default: the input file's stem)");
    cmd->add_option("--out", a->out, "Write the layout to LAYOUT.json (atomically)");
    cmd->add_flag("--strict", a->strict,
                  "Refuse flags and keys that upstream itself does not define (forks' and unknown ones) "
                  "instead of listing them as ignored with a warning");
    cmd->add_flag("--json", a->json,
                  "Print JSON: format, layout, ignored[] (where, argument, reason), notes[], warnings[], out");
    cmd->footer("Exit codes: 0 success, 1 runtime failure (cannot write --out), 2 bad input (an "
                "unknown or conflicting argument, named with its position such as "
                "'argv[17] --tensor-model-parallel-size', a value the script cannot know "
                "(named with its variable and line: give it with --set), or a layout that fails "
                "validation).");
    return {cmd, [a]() {
                ImportFormat format{};
                if (!parse_import_format(a->format, format)) {
                    throw InputError("<flags>", "--format",
                                     "unknown format '" + a->format +
                                         "' (auto, megatron, deepspeed, torchtitan, bridge)");
                }
                ImportOptions options;
                if (a->cluster_opt->count()) options.cluster = a->cluster;
                if (a->model_opt->count()) options.model = a->model;
                if (a->gpus_opt->count()) options.gpus = a->gpus;
                if (a->nodes_opt->count()) options.nodes = a->nodes;
                if (a->seq_opt->count()) options.seq = a->seq;
                if (a->config_opt->count()) options.config_function = a->config;
                if (a->stages_opt->count()) options.pipeline_stages = a->stages;
                if (a->vocab_opt->count()) {
                    if (a->vocab < 1 || a->vocab > (1 << 24)) {
                        throw InputError("<flags>", "--vocab-size", "must be in [1, 16777216]");
                    }
                    options.vocab_size = a->vocab;
                }
                const auto pairs = [](const std::vector<std::string>& items, const char* flag,
                                      std::map<std::string, std::string>& out) {
                    for (const auto& item : items) {
                        const auto eq = item.find('=');
                        if (eq == std::string::npos || eq == 0) {
                            throw InputError("<flags>", flag, "'" + item + "': expected NAME=VALUE");
                        }
                        out[item.substr(0, eq)] = item.substr(eq + 1);
                    }
                };
                pairs(a->set, "--set", options.set);
                pairs(a->sources, "--source", options.sources);
                options.name = a->name;
                options.strict = a->strict;
                const std::string file = a->input == "-" ? "<stdin>" : a->input;
                const std::string text = read_text_input(a->input);
                const ImportResult result = import_config(text, file, format, options);
                const auto checked = validate_layout(result.layout, file);
                if (!checked.valid()) {
                    // What the import assumed (a cluster, a world size) often explains the error.
                    for (const auto& w : result.warnings) std::cerr << "warning: " << printable_text(w) << "\n";
                    for (const auto& n : result.notes) std::cerr << "note: " << printable_text(n) << "\n";
                    throw InputError(checked.errors);
                }

                const nlohmann::json layout = layout_to_json(result.layout);
                if (!a->out.empty()) save_json_file(layout, a->out);
                if (a->json) {
                    std::cout << nlohmann::json{{"format", to_string(result.format)},
                                                {"layout", layout},
                                                {"ignored", ignored_json(result.ignored)},
                                                {"notes", result.notes},
                                                {"warnings", result.warnings},
                                                {"out", a->out.empty() ? nlohmann::json()
                                                                       : nlohmann::json(a->out)}}
                                     .dump(2)
                              << "\n";
                    return kExitOk;
                }
                for (const auto& w : checked.warnings) std::cerr << "warning: " << w.to_string() << "\n";
                // Warnings, notes and ignored inputs quote the file: its control characters are escaped.
                for (const auto& w : result.warnings) std::cerr << "warning: " << printable_text(w) << "\n";
                for (const auto& n : result.notes) std::cerr << "note: " << printable_text(n) << "\n";
                for (const auto& i : result.ignored) {
                    std::cerr << "ignored: " << printable_text(i.where + " " + i.text + " (" + i.reason + ")") << "\n";
                }
                if (a->out.empty()) {
                    std::cout << layout.dump(2) << "\n";
                } else {
                    const auto& m = result.layout.parallel.mesh;
                    std::cout << "wrote " << a->out << ": " << result.layout.model.name << " on "
                              << result.layout.gpus << " GPUs, tp " << m.tp << " pp " << m.pp
                              << " dp " << m.dp << " cp " << m.cp << " ep " << m.ep << " ("
                              << result.ignored.size() << " inputs ignored)\n";
                }
                return kExitOk;
            }};
}

namespace {
Verb make_import_args_verb(CLI::App& app) { return add_import_args_verb(app); }
}  // namespace
MESHWORK_REGISTER_VERB(150, make_import_args_verb);

}  // namespace meshwork::cli
