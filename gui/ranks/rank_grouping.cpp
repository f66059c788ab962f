#include "gui/ranks/rank_grouping.h"

#include <algorithm>
#include <tuple>

namespace meshwork::gui {

int RankGrouping::row_of(int rank) const {
    const auto it = std::find(ranks.begin(), ranks.end(), rank);
    return it == ranks.end() ? -1 : static_cast<int>(it - ranks.begin());
}

std::vector<int> RankGrouping::ranks_of(const RankGroup& group) const {
    return {ranks.begin() + group.first_row, ranks.begin() + group.last_row + 1};
}

int RankGrouping::innermost_group_of_row(int row) const {
    int found = -1;
    for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
        const auto& group = groups[static_cast<std::size_t>(g)];
        if (row >= group.first_row && row <= group.last_row &&
            (found < 0 || group.depth > groups[static_cast<std::size_t>(found)].depth)) {
            found = g;
        }
    }
    return found;
}

std::string RankGrouping::label(const RankGroup& group) {
    return (group.axis == Axis::Pp ? "pp " : "dp ") + std::to_string(group.coordinate);
}

RankGrouping group_ranks(std::vector<int> ranks, const DeviceMesh* mesh) {
    RankGrouping g;
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    if (!mesh) {
        g.ranks = std::move(ranks);
        g.coords.resize(g.ranks.size());
        g.unplaced_first_row = static_cast<int>(g.ranks.size());
        return g;
    }
    g.by_mesh = true;
    auto placed = [mesh](int r) { return r >= 0 && r < mesh->world_size(); };
    const auto unplaced = std::stable_partition(ranks.begin(), ranks.end(), placed);
    // Stage, replica, then cp and tp inside the replica: what a reader of a 1,024-rank job
    // scans for ("which stage, which replica").
    auto key = [mesh](int r) {
        const auto c = mesh->coords(r);
        return std::make_tuple(c.pp, c.dp, c.cp, c.tp, r);
    };
    std::sort(ranks.begin(), unplaced, [&](int a, int b) { return key(a) < key(b); });
    g.ranks = std::move(ranks);
    const int placed_count = static_cast<int>(std::count_if(g.ranks.begin(), g.ranks.end(), placed));
    g.unplaced_first_row = placed_count;
    g.coords.reserve(g.ranks.size());
    for (int r : g.ranks) g.coords.push_back(placed(r) ? mesh->coords(r) : RankCoords{});

    const bool stages = mesh->axis_size(Axis::Pp) > 1;
    const bool replicas = mesh->axis_size(Axis::Dp) > 1;
    g.depth_count = (stages ? 1 : 0) + (replicas ? 1 : 0);
    int stage_group = -1;
    int replica_group = -1;
    for (int row = 0; row < placed_count; ++row) {
        const auto& c = g.coords[static_cast<std::size_t>(row)];
        const auto& prev = row > 0 ? g.coords[static_cast<std::size_t>(row - 1)] : RankCoords{};
        const bool new_stage = stages && (row == 0 || c.pp != prev.pp);
        if (new_stage) {
            g.groups.push_back({Axis::Pp, c.pp, 0, -1, row, row});
            stage_group = static_cast<int>(g.groups.size()) - 1;
            replica_group = -1;
        }
        if (replicas && (row == 0 || new_stage || c.dp != prev.dp)) {
            g.groups.push_back({Axis::Dp, c.dp, stages ? 1 : 0, stage_group, row, row});
            replica_group = static_cast<int>(g.groups.size()) - 1;
        }
        if (stage_group >= 0) g.groups[static_cast<std::size_t>(stage_group)].last_row = row;
        if (replica_group >= 0) g.groups[static_cast<std::size_t>(replica_group)].last_row = row;
    }
    return g;
}

}  // namespace meshwork::gui
