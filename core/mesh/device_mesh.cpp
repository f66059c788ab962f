#include "core/mesh/device_mesh.h"

#include <algorithm>
#include <set>

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
    }
    return "?";
}

std::vector<std::string> parse_axis_order(const std::string& order) {
    std::vector<std::string> names;
    std::string cur;
    for (char ch : order + "-") {
        if (ch == '-') {
            names.push_back(cur);
            cur.clear();
        } else {
            cur += ch;
        }
    }
    const std::set<std::string> expected{"tp", "cp", "ep", "dp", "pp"};
    const std::set<std::string> got(names.begin(), names.end());
    if (names.size() != expected.size() || got != expected) return {};
    return names;
}

int DeviceMesh::Grid::index(const std::string& name) const {
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i] == name) return static_cast<int>(i);
    }
    return -1;
}

DeviceMesh::DeviceMesh(MeshShape shape, int gpus_per_node, const std::string& file)
    : shape_(std::move(shape)), gpus_per_node_(std::max(1, gpus_per_node)) {
    const auto order = parse_axis_order(shape_.order);
    if (order.empty()) {
        throw InputError(file, "parallel.order",
                         "'" + shape_.order +
                             "' is not an order of the axes tp, cp, ep, dp, pp joined by '-'");
    }
    const long long world = shape_.world_size();
    if (world < 1 || world > (1 << 22)) {
        throw InputError(file, "parallel", "world size " + std::to_string(world) + " is absurd");
    }
    world_ = static_cast<int>(world);
    const long long fold = static_cast<long long>(shape_.tp) * shape_.cp * shape_.dp;
    const long long expert_model = static_cast<long long>(shape_.etp) * shape_.ep;
    if (expert_model < 1 || fold % expert_model != 0) {
        throw InputError(file, "parallel.ep",
                         "etp×ep = " + std::to_string(expert_model) +
                             " must divide tp×cp×dp = " + std::to_string(fold) +
                             " (expert layers fold onto the same ranks)");
    }
    edp_ = static_cast<int>(fold / expert_model);

    // Dense mesh: ep is not an axis of dense layers (size 1); expert mesh: tp becomes etp,
    // cp folds away (size 1), dp becomes edp.
    for (const auto& name : order) {
        int dense_size = 1, expert_size = 1;
        if (name == "tp") { dense_size = shape_.tp; expert_size = shape_.etp; }
        if (name == "cp") { dense_size = shape_.cp; expert_size = 1; }
        if (name == "ep") { dense_size = 1; expert_size = shape_.ep; }
        if (name == "dp") { dense_size = shape_.dp; expert_size = edp_; }
        if (name == "pp") { dense_size = shape_.pp; expert_size = shape_.pp; }
        dense_.names.push_back(name);
        dense_.sizes.push_back(dense_size);
        expert_.names.push_back(name);
        expert_.sizes.push_back(expert_size);
    }
    for (Grid* g : {&dense_, &expert_}) {
        int stride = 1;
        for (int size : g->sizes) {
            g->strides.push_back(stride);
            stride *= size;
        }
    }
}

RankCoords DeviceMesh::coords(int rank) const {
    auto coord = [rank](const Grid& g, const std::string& name) {
        const int i = g.index(name);
        return (rank / g.strides[i]) % g.sizes[i];
    };
    RankCoords c;
    c.tp = coord(dense_, "tp");
    c.cp = coord(dense_, "cp");
    c.dp = coord(dense_, "dp");
    c.pp = coord(dense_, "pp");
    c.etp = coord(expert_, "tp");
    c.ep = coord(expert_, "ep");
    c.edp = coord(expert_, "dp");
    return c;
}

int DeviceMesh::rank_of(const RankCoords& c) const {
    return c.tp * dense_.strides[dense_.index("tp")] + c.cp * dense_.strides[dense_.index("cp")] +
           c.dp * dense_.strides[dense_.index("dp")] + c.pp * dense_.strides[dense_.index("pp")];
}

std::vector<std::vector<int>> DeviceMesh::grid_groups(const Grid& grid,
                                                      const std::vector<std::string>& axes) const {
    // Ranks that agree on every coordinate outside `axes` form one group. Within a group,
    // ranks are ordered by their coordinates on `axes` (the first listed varies fastest in
    // the order string), which is ascending rank order.
    std::vector<int> outside;
    int num_groups = 1;
    for (std::size_t i = 0; i < grid.names.size(); ++i) {
        if (std::find(axes.begin(), axes.end(), grid.names[i]) == axes.end()) {
            outside.push_back(static_cast<int>(i));
            num_groups *= grid.sizes[i];
        }
    }
    // Key = the outside coordinates in mixed radix; groups are numbered by first appearance,
    // which sorts them by their first rank.
    std::vector<int> slot_of_key(static_cast<std::size_t>(num_groups), -1);
    std::vector<std::vector<int>> out;
    out.reserve(static_cast<std::size_t>(num_groups));
    for (int r = 0; r < world_; ++r) {
        int key = 0;
        for (int i : outside) key = key * grid.sizes[i] + (r / grid.strides[i]) % grid.sizes[i];
        int& slot = slot_of_key[static_cast<std::size_t>(key)];
        if (slot < 0) {
            slot = static_cast<int>(out.size());
            out.emplace_back();
        }
        out[static_cast<std::size_t>(slot)].push_back(r);
    }
    return out;
}

std::vector<std::vector<int>> DeviceMesh::groups(Axis axis) const {
    switch (axis) {
        case Axis::Tp: return grid_groups(dense_, {"tp"});
        case Axis::Cp: return grid_groups(dense_, {"cp"});
        case Axis::Dp: return grid_groups(dense_, {"dp"});
        case Axis::Pp: return grid_groups(dense_, {"pp"});
        case Axis::DpCp: return grid_groups(dense_, {"dp", "cp"});
        case Axis::Etp: return grid_groups(expert_, {"tp"});
        case Axis::Ep: return grid_groups(expert_, {"ep"});
        case Axis::Edp: return grid_groups(expert_, {"dp"});
    }
    return {};
}

std::vector<int> DeviceMesh::group_of(int rank, Axis axis) const {
    for (auto& g : groups(axis)) {
        if (std::find(g.begin(), g.end(), rank) != g.end()) return g;
    }
    return {};
}

int DeviceMesh::axis_size(Axis axis) const {
    switch (axis) {
        case Axis::Tp: return shape_.tp;
        case Axis::Cp: return shape_.cp;
        case Axis::Dp: return shape_.dp;
        case Axis::Pp: return shape_.pp;
        case Axis::Ep: return shape_.ep;
        case Axis::Etp: return shape_.etp;
        case Axis::Edp: return edp_;
        case Axis::DpCp: return shape_.dp * shape_.cp;
    }
    return 1;
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
