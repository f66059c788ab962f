// What every importer does the same way: the cluster, the name and description, and the
// world size when the config itself does not carry it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/export/export_types.h"
#include "core/layout/layout.h"

namespace meshwork {

// Sets cluster/cluster_ref (the option, else dgx-h100 with a note), name (the option, else
// the file's stem) and description.
void apply_import_defaults(Layout& layout, const ImportOptions& options, const std::string& file,
                           const std::string& format_name, std::vector<std::string>& notes);

// The world size from --gpus / --nodes (× GPUs per node of `cluster_gpus_per_node`); empty
// when neither is given. InputError("<flags>", "--nodes", ...) when they disagree.
// `gpus_per_host`: a launcher's node (ClusterSpec::allocation_gpus).
std::optional<int> world_from_options(const ImportOptions& options, int gpus_per_host);

// Whether `word` is one of the space-separated words of `list` (the importers' key tables).
bool list_has_word(const char* list, const std::string& word);

// Strict integer of a text value; false when it is not an integer in [min_value, max_value].
bool parse_int_text(const std::string& text, long long min_value, long long max_value,
                    long long& out);

}  // namespace meshwork
