#include "core/export/export_types.h"

#include <array>
#include <utility>

namespace meshwork {

namespace {
constexpr std::array<std::pair<ExportFormat, const char*>, 6> kExportFormats{{
    {ExportFormat::Megatron, "megatron"},
    {ExportFormat::DeepSpeed, "deepspeed"},
    {ExportFormat::Torchtitan, "torchtitan"},
    {ExportFormat::TorchtitanToml, "torchtitan-toml"},
    {ExportFormat::Slurm, "slurm"},
    {ExportFormat::Layout, "layout"},
}};
constexpr std::array<std::pair<SlurmTrainer, const char*>, 3> kTrainers{{
    {SlurmTrainer::Megatron, "megatron"},
    {SlurmTrainer::Torchtitan, "torchtitan"},
    {SlurmTrainer::Meshwork, "meshwork"},
}};
constexpr std::array<std::pair<ImportFormat, const char*>, 5> kImportFormats{{
    {ImportFormat::Auto, "auto"},
    {ImportFormat::Megatron, "megatron"},
    {ImportFormat::DeepSpeed, "deepspeed"},
    {ImportFormat::Torchtitan, "torchtitan"},
    {ImportFormat::Bridge, "bridge"},
}};

template <typename E, std::size_t N>
std::string name_of(const std::array<std::pair<E, const char*>, N>& table, E value) {
    for (const auto& [v, name] : table) {
        if (v == value) return name;
    }
    return "?";
}

template <typename E, std::size_t N>
bool parse_name(const std::array<std::pair<E, const char*>, N>& table, const std::string& text,
                E& out) {
    for (const auto& [v, name] : table) {
        if (text == name) {
            out = v;
            return true;
        }
    }
    return false;
}
}  // namespace

std::string to_string(ExportFormat format) { return name_of(kExportFormats, format); }
bool parse_export_format(const std::string& text, ExportFormat& out) {
    return parse_name(kExportFormats, text, out);
}
std::string to_string(SlurmTrainer trainer) { return name_of(kTrainers, trainer); }
bool parse_slurm_trainer(const std::string& text, SlurmTrainer& out) {
    return parse_name(kTrainers, text, out);
}
std::string to_string(ImportFormat format) { return name_of(kImportFormats, format); }
bool parse_import_format(const std::string& text, ImportFormat& out) {
    return parse_name(kImportFormats, text, out);
}

}  // namespace meshwork
