// The order and grouping of ranks by mesh coordinates that the rank overview and the
// timeline's lane groups share: pipeline stage, then data-parallel replica, then the ranks
// of one replica (cp, then tp). Coordinates come from the DeviceMesh of the layout a trace
// carries (profiler::trace_layout); without one the ranks stay in rank order, ungrouped.
#pragma once

#include <string>
#include <vector>

#include "core/mesh/device_mesh.h"

namespace meshwork::gui {

struct RankGroup {
    Axis axis = Axis::Pp;  // Pp: a pipeline stage; Dp: a data-parallel replica within one
    int coordinate = 0;    // the stage's pp or the replica's dp
    int depth = 0;         // 0 for the outermost level shown
    int parent = -1;       // index into RankGrouping::groups; -1 at depth 0
    int first_row = 0;     // rows [first_row, last_row] of RankGrouping::ranks
    int last_row = 0;
    [[nodiscard]] int size() const { return last_row - first_row + 1; }
};

struct RankGrouping {
    std::vector<int> ranks;           // display order
    std::vector<RankCoords> coords;   // per row; all zero when not grouped by a mesh
    std::vector<RankGroup> groups;    // pre-order: a stage, then its replicas, then the next stage
    bool by_mesh = false;             // coordinates came from a mesh
    int depth_count = 0;              // levels of groups (0: flat)
    // Ranks the trace holds but the mesh does not (a rank ≥ its world size): rows after the groups.
    int unplaced_first_row = 0;

    [[nodiscard]] int row_of(int rank) const;  // -1 when the rank is not in the grouping
    [[nodiscard]] std::vector<int> ranks_of(const RankGroup& group) const;
    // The innermost group holding `row`; -1 when none does.
    [[nodiscard]] int innermost_group_of_row(int row) const;
    // "pp 2", "dp 5".
    [[nodiscard]] static std::string label(const RankGroup& group);
};

// Groups `ranks` (any order, each once) by `mesh`: an axis of size 1 makes no level.
// `mesh` null: rank order, no groups.
RankGrouping group_ranks(std::vector<int> ranks, const DeviceMesh* mesh);

}  // namespace meshwork::gui
