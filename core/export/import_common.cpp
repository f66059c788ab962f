#include "core/export/import_common.h"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "core/cluster/cluster_spec.h"
#include "core/common/error.h"

namespace meshwork {

bool list_has_word(const char* list, const std::string& word) {
    std::istringstream in(list);
    std::string w;
    while (in >> w) {
        if (w == word) return true;
    }
    return false;
}

void apply_import_defaults(Layout& l, const ImportOptions& o, const std::string& file,
                           const std::string& format_name, std::vector<std::string>& notes) {
    if (o.cluster) {
        l.cluster_ref = *o.cluster;
        l.cluster = load_cluster(*o.cluster, "<flags>", "--cluster");
    } else {
        // A production config runs on GPUs: the stated default, never a guess from the model.
        l.cluster_ref = "dgx-h100";
        l.cluster = load_cluster(l.cluster_ref, "<flags>", "--cluster");
        notes.push_back("no --cluster given: assumed dgx-h100 (the default; pass --cluster)");
    }
    if (!o.name.empty()) {
        l.name = o.name;
    } else {
        const std::string stem = std::filesystem::path(file).stem().string();
        l.name = stem.empty() || file == "<stdin>" ? "imported" : stem;
    }
    l.description = !o.description.empty() ? o.description
                                           : "Imported from " + file + " (" + format_name + ")";
}

std::optional<int> world_from_options(const ImportOptions& o, int gpus_per_host) {
    if (o.gpus && *o.gpus < 1) throw InputError("<flags>", "--gpus", "must be at least 1");
    if (o.nodes && *o.nodes < 1) throw InputError("<flags>", "--nodes", "must be at least 1");
    if (o.nodes) {
        const long long world = static_cast<long long>(*o.nodes) * gpus_per_host;
        if (world > (1 << 22)) throw InputError("<flags>", "--nodes", "absurd number of nodes");
        if (o.gpus && *o.gpus != world) {
            throw InputError("<flags>", "--nodes",
                             std::to_string(*o.nodes) + " nodes × " + std::to_string(gpus_per_host) +
                                 " GPUs per node disagrees with --gpus " + std::to_string(*o.gpus));
        }
        return static_cast<int>(world);
    }
    return o.gpus;
}

bool parse_int_text(const std::string& text, long long min_value, long long max_value,
                    long long& out) {
    if (text.empty() || text.size() > 20) return false;
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end == nullptr || *end != '\0' || v < min_value || v > max_value) return false;
    out = v;
    return true;
}

}  // namespace meshwork
