// What the exporters and importers of core/export exchange: formats, options, results.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/layout/layout.h"

namespace meshwork {

enum class ExportFormat { Megatron, DeepSpeed, Torchtitan, TorchtitanToml, Slurm, Layout };
std::string to_string(ExportFormat format);  // "megatron", "deepspeed", ...
bool parse_export_format(const std::string& text, ExportFormat& out);

// The training program a SLURM job launches.
enum class SlurmTrainer { Megatron, Torchtitan, Meshwork };
std::string to_string(SlurmTrainer trainer);
bool parse_slurm_trainer(const std::string& text, SlurmTrainer& out);

struct ExportOptions {
    SlurmTrainer slurm_trainer = SlurmTrainer::Megatron;
};

// An exported config: the text, and every part of the layout that the target framework
// cannot express (empty for a lossless export). Each entry is one sentence.
struct ExportResult {
    std::string text;
    std::vector<std::string> lost;
    [[nodiscard]] bool lossless() const { return lost.empty(); }
};

enum class ImportFormat { Auto, Megatron, DeepSpeed, Torchtitan, Bridge };
std::string to_string(ImportFormat format);
bool parse_import_format(const std::string& text, ImportFormat& out);

// What an imported config does not say and the caller supplies.
struct ImportOptions {
    std::optional<std::string> cluster;  // preset or path; default as build_layout()
    std::optional<std::string> model;    // preset or config.json; required for DeepSpeed
    std::optional<int> gpus;             // world size when the config does not carry it
    std::optional<int> nodes;
    std::optional<int> seq;              // sequence length when the config has none (DeepSpeed)
    std::optional<std::string> config_function;  // torchtitan main: the config function of a module
    std::optional<int> pipeline_stages;  // DeepSpeed: PipelineModule(num_stages) of the script
    std::string name;                    // layout name; default: the file's stem
    std::string description;             // default: "Imported from FILE (FORMAT)"
    std::optional<long long> vocab_size; // when the config does not state it (a tokenizer)
    // Launch scripts: values of what the script cannot know (--set NAME=VALUE, "1" for $1)
    // and the files that `. NAME` reads (--source NAME=PATH).
    std::map<std::string, std::string> set;
    std::map<std::string, std::string> sources;
    // Refuse what upstream itself does not define (a fork's or an unknown flag or key)
    // instead of listing it as ignored with a warning.
    bool strict = false;
};

// An input item that was read and deliberately not used (a learning rate, a data path).
struct IgnoredInput {
    std::string where;   // "argv[12]", "optimizer.params.lr", "[metrics]"
    std::string text;    // the argument with its values, or the key
    std::string reason;  // why it does not affect the layout
};

struct ImportResult {
    Layout layout;
    ImportFormat format = ImportFormat::Megatron;
    std::vector<IgnoredInput> ignored;
    std::vector<std::string> notes;  // assumptions made (defaults, approximations)
    // Inputs taken on trust (a flag no known release or fork defines, read as not changing
    // the layout); each is also in `ignored`. --strict refuses them instead.
    std::vector<std::string> warnings;
};

}  // namespace meshwork
