// Finding the bundled presets (models, clusters, GPU kinds, example layouts) at run time.
#pragma once

#include <string>
#include <vector>

namespace meshwork {

enum class PresetKind { Model, Cluster, Gpu, Layout };

// The folder holding models/, clusters/, gpus/, layouts/: $MESHWORK_RESOURCES if set,
// else the source tree's resources/ (builds), else the install prefix's share/meshwork.
std::string resource_dir();
// "models", "clusters", "gpus" or "layouts".
std::string preset_folder(PresetKind kind);
// Sorted preset names (file names without .json) of one kind.
std::vector<std::string> list_presets(PresetKind kind);
// A preset name or a path: an existing file (or anything with a '/' or ending in .json) is
// taken as a path; otherwise the preset of that name. Unknown names raise an InputError
// naming `field` and listing the presets that exist.
std::string resolve_preset_path(PresetKind kind, const std::string& name_or_path,
                                const std::string& file, const std::string& field);
// True when `name_or_path` names a bundled preset rather than a file.
bool is_preset_name(PresetKind kind, const std::string& name_or_path);

// While one lives (on this thread), resolve_preset_path takes bundled preset names only and
// refuses anything else with an InputError saying that `source` may name presets only: for
// text from another machine (a remote trace's layout), which must never make this one open
// a local file it names.
class PresetNamesOnly {
public:
    explicit PresetNamesOnly(const char* source);
    ~PresetNamesOnly();
    PresetNamesOnly(const PresetNamesOnly&) = delete;
    PresetNamesOnly& operator=(const PresetNamesOnly&) = delete;

private:
    const char* previous_;
};

}  // namespace meshwork
