#include "core/mesh/device_mesh.h"

#include <algorithm>

#include "core/common/error.h"

namespace meshwork {

std::string to_string(Axis axis) {
    switch (axis) {
        case Axis::Tp: return "tp";
        case Axis::Cp: return "cp";
        case Axis::Dp: return "dp";
        case Axis::Pp: return "pp";
        case Axis::Ep: return "ep";
        case Axis::Etp: return "etp";
        case Axis::Edp: return "edp";
        case Axis::DpCp: return "dp-cp";
        case Axis::World: return "world";
    }
    return "?";
}

DeviceMesh::DeviceMesh(MeshShape shape, int gpus_per_node, const std::string& file)
    : shape_(std::move(shape)), gpus_per_node_(std::max(1, gpus_per_node)) {
    if (!is_axis_order(shape_.order)) {
        throw InputError(file, "parallel.order", axis_order_error(shape_.order));
    }
    const long long world = shape_.world_size();
    if (world < 1 || world > (1 << 22)) {
        throw InputError(file, "parallel", "world size " + std::to_string(world) + " is absurd");
    }
    world_ = static_cast<int>(world);
    if (!shape_.experts_fold()) {
        throw InputError(file, "parallel.ep",
                         "etp×ep = " + std::to_string(static_cast<long long>(shape_.etp) * shape_.ep) +
                             " must divide tp×cp×dp = " + std::to_string(shape_.expert_fold()) +
                             " (expert layers fold onto the same ranks)");
    }
    edp_ = shape_.expert_data_parallel();
    strides_ = *mesh_strides(shape_);
}

DeviceMesh::AxisGeometry DeviceMesh::geometry(Axis axis) const {
    switch (axis) {
        case Axis::Tp: return {shape_.tp, strides_.tp};
        case Axis::Cp: return {shape_.cp, strides_.cp};
        case Axis::Dp: return {shape_.dp, strides_.dp};
        case Axis::Pp: return {shape_.pp, strides_.pp};
        case Axis::Ep: return {shape_.ep, strides_.ep};
        case Axis::Etp: return {shape_.etp, strides_.etp};
        case Axis::Edp: return {edp_, strides_.edp};
        case Axis::DpCp:
        case Axis::World: break;
    }
    return {};
}

RankCoords DeviceMesh::coords(int rank) const {
    auto coord = [rank, this](Axis axis) {
        const AxisGeometry g = geometry(axis);
        return (rank / g.stride) % std::max(1, g.size);
    };
    RankCoords c;
    c.tp = coord(Axis::Tp);
    c.cp = coord(Axis::Cp);
    c.dp = coord(Axis::Dp);
    c.pp = coord(Axis::Pp);
    c.etp = coord(Axis::Etp);
    c.ep = coord(Axis::Ep);
    c.edp = coord(Axis::Edp);
    return c;
}

int DeviceMesh::rank_of(const RankCoords& c) const {
    return c.tp * strides_.tp + c.cp * strides_.cp + c.dp * strides_.dp + c.pp * strides_.pp;
}

std::pair<DeviceMesh::AxisGeometry, DeviceMesh::AxisGeometry> DeviceMesh::group_axes(Axis axis) const {
    // DpCp is two axes, dp first; a one-axis group pairs its axis with a unit one.
    if (axis == Axis::DpCp) return {geometry(Axis::Dp), geometry(Axis::Cp)};
    return {geometry(axis), AxisGeometry{1, 1}};
}

std::vector<int> DeviceMesh::group_from(int first, AxisGeometry ga, AxisGeometry gb) {
    // A group is the ranks reached from its first rank by steps along its axes. Members are
    // listed in ascending rank order (dp and cp strides compare either way by rank order).
    std::vector<int> g;
    g.reserve(static_cast<std::size_t>(ga.size * gb.size));
    for (int j = 0; j < gb.size; ++j) {
        for (int i = 0; i < ga.size; ++i) g.push_back(first + i * ga.stride + j * gb.stride);
    }
    std::sort(g.begin(), g.end());
    return g;
}

std::vector<std::vector<int>> DeviceMesh::axis_groups(Axis axis) const {
    // First ranks are those whose coordinates on the group's axes are all 0.
    const auto [ga, gb] = group_axes(axis);
    std::vector<std::vector<int>> out;
    out.reserve(static_cast<std::size_t>(world_ / std::max(1, ga.size * gb.size)));
    for (int r = 0; r < world_; ++r) {
        if (group_first_rank(r, axis) == r) out.push_back(group_from(r, ga, gb));
    }
    return out;
}

std::vector<std::vector<int>> DeviceMesh::groups(Axis axis) const {
    if (axis == Axis::World) return {group_of(0, Axis::World)};
    return axis_groups(axis);
}

int DeviceMesh::group_first_rank(int rank, Axis axis) const {
    if (rank < 0 || rank >= world_) return -1;
    if (axis == Axis::World) return 0;
    const auto [ga, gb] = group_axes(axis);
    return rank - ((rank / ga.stride) % ga.size) * ga.stride - ((rank / gb.stride) % gb.size) * gb.stride;
}

std::vector<int> DeviceMesh::group_of(int rank, Axis axis) const {
    if (rank < 0 || rank >= world_) return {};
    if (axis == Axis::World) {
        std::vector<int> all(static_cast<std::size_t>(world_));
        for (int r = 0; r < world_; ++r) all[static_cast<std::size_t>(r)] = r;
        return all;
    }
    const auto [ga, gb] = group_axes(axis);
    return group_from(group_first_rank(rank, axis), ga, gb);
}

int DeviceMesh::axis_size(Axis axis) const {
    if (axis == Axis::DpCp) return shape_.dp * shape_.cp;
    if (axis == Axis::World) return world_;
    return geometry(axis).size;
}

bool DeviceMesh::axis_crosses_nodes(Axis axis) const {
    // Groups are translates of one another up to node boundaries; the first group's span
    // is enough when gpus_per_node is a multiple of the strides, which it usually is, but
    // check all groups so odd shapes are exact too.
    for (const auto& g : groups(axis)) {
        if (node_of(g.front()) != node_of(g.back())) return true;
    }
    return false;
}

}  // namespace meshwork
