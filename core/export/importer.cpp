#include "core/export/importer.h"

#include <regex>

#include "core/export/bridge_recipe_import.h"
#include "core/export/deepspeed_config.h"
#include "core/export/megatron_import.h"
#include "core/export/torchtitan_config.h"

namespace meshwork {

ImportFormat detect_import_format(const std::string& text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] == '{') return ImportFormat::DeepSpeed;
    // A shell script (a shebang, #SBATCH lines) is a launch script, whatever its
    // here-documents hold (a SLURM job writes its torchtitan config with one).
    if (text.compare(first == std::string::npos ? 0 : first, 2, "#!") == 0 ||
        text.find("\n#SBATCH") != std::string::npos) {
        return ImportFormat::Megatron;
    }
    // A TOML table header on a line of its own; command lines have no such line.
    static const std::regex table(R"((^|\n)[ \t]*\[(parallelism|training|model|job)\][ \t]*(#[^\n]*)?(\r?\n|$))");
    if (std::regex_search(text, table) || is_torchtitan_module(text)) return ImportFormat::Torchtitan;
    if (is_bridge_recipe(text)) return ImportFormat::Bridge;
    return ImportFormat::Megatron;
}

ImportResult import_config(const std::string& text, const std::string& file, ImportFormat format,
                           const ImportOptions& options) {
    if (format == ImportFormat::Auto) format = detect_import_format(text);
    switch (format) {
        case ImportFormat::DeepSpeed: return import_deepspeed(text, file, options);
        case ImportFormat::Torchtitan: return import_torchtitan(text, file, options);
        case ImportFormat::Bridge: return import_bridge_recipe(text, file, options);
        case ImportFormat::Megatron:
        case ImportFormat::Auto: break;
    }
    return import_megatron(text, file, options);
}

}  // namespace meshwork
