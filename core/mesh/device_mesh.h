// The device mesh: named parallel axes, Megatron-LM's rank order, and the process groups
// of each axis.
//
// Dense layers use the mesh tp × cp × dp × pp. Expert layers fold the same ranks into
// etp × ep × edp × pp (Megatron-Core's "MoE parallel folding"), edp = tp·cp·dp / (etp·ep).
// Both meshes read the same order string; the first axis varies fastest, as in Megatron's
// RankGenerator (default "tp-cp-ep-dp-pp").
#pragma once

#include <array>
#include <string>
#include <vector>

namespace meshwork {

enum class Axis {
    Tp,   // tensor parallel (dense layers)
    Cp,   // context parallel
    Dp,   // data parallel (dense layers)
    Pp,   // pipeline parallel
    Ep,   // expert parallel
    Etp,  // tensor parallel inside an expert
    Edp,  // data parallel of expert weights
    DpCp  // dp × cp: the group that reduces dense gradients when cp > 1
};

std::string to_string(Axis axis);

struct MeshShape {
    int tp = 1, cp = 1, dp = 1, pp = 1, ep = 1, etp = 1;
    std::string order = "tp-cp-ep-dp-pp";
    [[nodiscard]] long long world_size() const {
        return static_cast<long long>(tp) * cp * dp * pp;
    }
    bool operator==(const MeshShape&) const = default;
};

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

    [[nodiscard]] RankCoords coords(int rank) const;
    [[nodiscard]] int rank_of(const RankCoords& dense_coords) const;  // uses tp, cp, dp, pp
    [[nodiscard]] int node_of(int rank) const { return rank / gpus_per_node_; }
    [[nodiscard]] int local_gpu_of(int rank) const { return rank % gpus_per_node_; }
    [[nodiscard]] int num_nodes() const {
        return (world_ + gpus_per_node_ - 1) / gpus_per_node_;
    }

    // Every group of `axis`, each sorted by the axis coordinate, groups sorted by first rank.
    [[nodiscard]] std::vector<std::vector<int>> groups(Axis axis) const;
    // The group of `axis` that holds `rank`.
    [[nodiscard]] std::vector<int> group_of(int rank, Axis axis) const;
    // Size of one group of `axis`.
    [[nodiscard]] int axis_size(Axis axis) const;
    // Whether a group of `axis` spans more than one node.
    [[nodiscard]] bool axis_crosses_nodes(Axis axis) const;

private:
    // One of the two meshes: sizes in order and the name of each position.
    struct Grid {
        std::vector<std::string> names;  // in order, fastest first
        std::vector<int> sizes;
        std::vector<int> strides;
        [[nodiscard]] int index(const std::string& name) const;
    };
    [[nodiscard]] std::vector<std::vector<int>> grid_groups(const Grid& grid,
                                                            const std::vector<std::string>& axes) const;

    MeshShape shape_;
    int gpus_per_node_;
    int world_;
    int edp_;
    Grid dense_;
    Grid expert_;
};

// Splits "tp-cp-ep-dp-pp" into names; empty when the string is not such a permutation.
std::vector<std::string> parse_axis_order(const std::string& order);

}  // namespace meshwork
