#include "core/common/resources.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/common/error.h"

namespace fs = std::filesystem;

namespace meshwork {

std::string resource_dir() {
    if (const char* env = std::getenv("MESHWORK_RESOURCES"); env && *env) return env;
    std::error_code ec;
    if (fs::is_directory(MESHWORK_SOURCE_RESOURCE_DIR "/models", ec)) {
        return MESHWORK_SOURCE_RESOURCE_DIR;
    }
    return MESHWORK_INSTALL_RESOURCE_DIR;
}

std::string preset_folder(PresetKind kind) {
    switch (kind) {
        case PresetKind::Model: return "models";
        case PresetKind::Cluster: return "clusters";
        case PresetKind::Gpu: return "gpus";
        case PresetKind::Layout: return "layouts";
    }
    return "";
}

std::vector<std::string> list_presets(PresetKind kind) {
    std::vector<std::string> names;
    std::error_code ec;
    const fs::path dir = fs::path(resource_dir()) / preset_folder(kind);
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() == ".json") names.push_back(it->path().stem().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

namespace {
// The source named by the innermost live PresetNamesOnly; null when none.
thread_local const char* names_only_source = nullptr;
}  // namespace

PresetNamesOnly::PresetNamesOnly(const char* source) : previous_(names_only_source) { names_only_source = source; }
PresetNamesOnly::~PresetNamesOnly() { names_only_source = previous_; }

bool is_preset_name(PresetKind kind, const std::string& name_or_path) {
    if (name_or_path.find('/') != std::string::npos) return false;
    std::error_code ec;
    return fs::is_regular_file(
        fs::path(resource_dir()) / preset_folder(kind) / (name_or_path + ".json"), ec);
}

std::string resolve_preset_path(PresetKind kind, const std::string& name_or_path,
                                const std::string& file, const std::string& field) {
    std::error_code ec;
    if (name_or_path.empty()) throw InputError(file, field, "empty preset name or path");
    if (is_preset_name(kind, name_or_path)) {
        return (fs::path(resource_dir()) / preset_folder(kind) / (name_or_path + ".json"))
            .string();
    }
    if (names_only_source) {
        throw InputError(file, field,
                         "'" + name_or_path + "' is not a bundled " +
                             preset_folder(kind).substr(0, preset_folder(kind).size() - 1) + " preset; " +
                             names_only_source + " may name bundled presets only (no file it names is opened)");
    }
    const bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                                 name_or_path.ends_with(".json") ||
                                 fs::exists(name_or_path, ec);
    if (looks_like_path) {
        fs::path p(name_or_path);
        // Relative paths inside a file are relative to that file's folder.
        if (p.is_relative() && !file.empty() && file != "<flags>" && !fs::exists(p, ec)) {
            fs::path beside = fs::path(file).parent_path() / p;
            if (fs::exists(beside, ec)) return beside.string();
        }
        if (!fs::exists(p, ec)) throw InputError(file, field, "file not found: " + name_or_path);
        return p.string();
    }
    std::string known;
    for (const auto& n : list_presets(kind)) known += (known.empty() ? "" : ", ") + n;
    throw InputError(file, field,
                     "unknown " + preset_folder(kind).substr(0, preset_folder(kind).size() - 1) +
                         " preset '" + name_or_path + "' (known: " + known + ")");
}

}  // namespace meshwork
