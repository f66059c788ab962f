// The layout flags of CLI.md, parsed in one place for every verb that takes a layout.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "core/layout/layout.h"
#include "core/layout/layout_overrides.h"

namespace meshwork::cli {

// --nodes on the layout verbs, search and the importers: nodes as SLURM and torchrun count
// them (ClusterSpec::allocation_gpus).
inline constexpr const char* kNodesFlagHelp =
    "World size in nodes (× GPUs per node; a node is a host, e.g. one 4-GPU compute tray of a GB200 "
    "NVL72 rack: the cluster's gpus_per_host where it has one)";

class LayoutFlags {
public:
    // Adds LAYOUT.json (positional, optional) and --model ... --layers-per-stage to `command`.
    explicit LayoutFlags(CLI::App* command);

    // The layout from the file (if any) with the flags applied; not validated.
    [[nodiscard]] Layout build() const;
    // The file name for messages: the layout file or "<flags>".
    [[nodiscard]] std::string source() const;
    [[nodiscard]] LayoutOverrides overrides() const;

private:
    struct Values;
    std::shared_ptr<Values> v_;
};

}  // namespace meshwork::cli
