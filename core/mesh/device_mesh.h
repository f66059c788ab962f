// The device mesh: named parallel axes over the rank numbering of core/mesh/mesh_shape.h,
// and the process groups of each axis. Building one allocates nothing; only groups() does.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/mesh/mesh_shape.h"

namespace meshwork {

enum class Axis {
    Tp,   // tensor parallel (dense layers)
    Cp,   // context parallel
    Dp,   // data parallel (dense layers)
    Pp,   // pipeline parallel
    Ep,   // expert parallel
    Etp,  // tensor parallel inside an expert
    Edp,  // data parallel of expert weights
    DpCp,  // dp × cp: the group that reduces dense gradients when cp > 1
    World  // every rank
};
inline constexpr std::size_t kAxisCount = static_cast<std::size_t>(Axis::World) + 1;

std::string to_string(Axis axis);

struct RankCoords {
    int tp = 0, cp = 0, dp = 0, pp = 0;  // dense mesh
    int etp = 0, ep = 0, edp = 0;        // expert mesh (same pp)
    bool operator==(const RankCoords&) const = default;
};

class DeviceMesh {
public:
    // Throws InputError (field "parallel.order" or the axis) when the order string is not a
    // permutation of tp, cp, ep, dp, pp or the expert axes do not fold into tp·cp·dp.
    DeviceMesh(MeshShape shape, int gpus_per_node, const std::string& file = "<flags>");

    [[nodiscard]] const MeshShape& shape() const { return shape_; }
    [[nodiscard]] int world_size() const { return world_; }
    [[nodiscard]] int edp() const { return edp_; }
    [[nodiscard]] int gpus_per_node() const { return gpus_per_node_; }
    [[nodiscard]] const MeshStrides& strides() const { return strides_; }

    [[nodiscard]] RankCoords coords(int rank) const;
    [[nodiscard]] int rank_of(const RankCoords& dense_coords) const;  // uses tp, cp, dp, pp
    [[nodiscard]] int node_of(int rank) const { return rank / gpus_per_node_; }
    [[nodiscard]] int local_gpu_of(int rank) const { return rank % gpus_per_node_; }
    [[nodiscard]] int num_nodes() const {
        return (world_ + gpus_per_node_ - 1) / gpus_per_node_;
    }

    // Every group of `axis`, each sorted by the axis coordinate, groups sorted by first rank.
    [[nodiscard]] std::vector<std::vector<int>> groups(Axis axis) const;
    // The group of `axis` that holds `rank` (empty for a rank outside the mesh), built alone.
    [[nodiscard]] std::vector<int> group_of(int rank, Axis axis) const;
    // The lowest rank of that group (-1 for a rank outside the mesh), without allocation: it
    // names the group, e.g. to tell apart the disjoint groups of one axis.
    [[nodiscard]] int group_first_rank(int rank, Axis axis) const;
    // Size of one group of `axis`.
    [[nodiscard]] int axis_size(Axis axis) const;
    // Whether a group of `axis` spans more than one node.
    [[nodiscard]] bool axis_crosses_nodes(Axis axis) const;

private:
    // Size and stride of each axis of the dense (tp, cp, dp, pp) or expert (etp, ep, edp, pp)
    // mesh that holds `axis`; DpCp is two axes (group_axes).
    struct AxisGeometry {
        int size = 1;
        int stride = 1;
    };
    [[nodiscard]] AxisGeometry geometry(Axis axis) const;
    // The one or two axes (DpCp: dp, cp) whose steps span a group of `axis` (not World).
    [[nodiscard]] std::pair<AxisGeometry, AxisGeometry> group_axes(Axis axis) const;
    [[nodiscard]] static std::vector<int> group_from(int first, AxisGeometry ga, AxisGeometry gb);
    [[nodiscard]] std::vector<std::vector<int>> axis_groups(Axis axis) const;

    MeshShape shape_;
    MeshStrides strides_;
    int gpus_per_node_;
    int world_;
    int edp_;
};

}  // namespace meshwork
