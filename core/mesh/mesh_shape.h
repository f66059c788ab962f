// The shape of the device mesh and Megatron-LM's rank order: the one owner of how a rank
// number maps to coordinates (DeviceMesh builds on it; the cost model and the simulator read
// strides from it without building a mesh, because a search estimates millions of layouts).
//
// Dense layers use the mesh tp × cp × dp × pp. Expert layers fold the same ranks into
// etp × ep × edp × pp (Megatron-Core's "MoE parallel folding"), edp = tp·cp·dp / (etp·ep).
// Both meshes read the same order string; the first axis varies fastest, as in Megatron-Core's
// RankGenerator (default "tp-cp-ep-dp-pp"; docs/upstream-megatron.md has the file:line).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace meshwork {

// Megatron-Core's default rank order, and the one --use-tp-pp-dp-mapping selects.
inline constexpr std::string_view kDefaultAxisOrder = "tp-cp-ep-dp-pp";
inline constexpr std::string_view kTpPpDpAxisOrder = "tp-cp-ep-pp-dp";

// The folding rule: etp·ep divides tp·cp·dp (Megatron-Core's RankGenerator asserts it).
[[nodiscard]] constexpr bool experts_fold(int tp, int cp, int dp, int ep, int etp) {
    const long long expert_model = static_cast<long long>(etp) * ep;
    return expert_model >= 1 && (static_cast<long long>(tp) * cp * dp) % expert_model == 0;
}

// The sizes of the parallel axes: the one declaration of tp, cp, dp, pp, ep and etp, with the
// figures derived from them. MeshShape adds the rank order; the search's candidates and the
// cost model's per-layout figures hold the same sizes by deriving from it.
struct AxisSizes {
    int tp = 1, cp = 1, dp = 1, pp = 1, ep = 1, etp = 1;

    [[nodiscard]] long long world_size() const {
        return static_cast<long long>(tp) * cp * dp * pp;
    }
    // The ranks of one pipeline stage, into which expert layers fold: tp·cp·dp.
    [[nodiscard]] long long expert_fold() const { return static_cast<long long>(tp) * cp * dp; }
    [[nodiscard]] bool experts_fold() const { return meshwork::experts_fold(tp, cp, dp, ep, etp); }
    // Data-parallel size of expert weights (edp); 0 when the experts do not fold.
    [[nodiscard]] int expert_data_parallel() const {
        return experts_fold() ? static_cast<int>(expert_fold() / (static_cast<long long>(etp) * ep)) : 0;
    }
    bool operator==(const AxisSizes&) const = default;
};

struct MeshShape : AxisSizes {
    std::string order{kDefaultAxisOrder};
    bool operator==(const MeshShape&) const = default;
};

// Rank distance between neighbours on each axis: coordinate = (rank / stride) % size.
struct MeshStrides {
    int tp = 1, cp = 1, dp = 1, pp = 1;  // dense mesh
    int etp = 1, ep = 1, edp = 1;        // expert mesh (same pp)
};

// Whether `order` names tp, cp, ep, dp and pp once each, joined by '-'.
[[nodiscard]] bool is_axis_order(std::string_view order);

// The strides of `shape` in the numbering of `shape.order`; empty when the order is not an
// axis order or the experts do not fold. No allocation.
[[nodiscard]] std::optional<MeshStrides> mesh_strides(const MeshShape& shape);

// The message both validation and DeviceMesh give for a bad order (field "parallel.order").
[[nodiscard]] std::string axis_order_error(const std::string& order);

}  // namespace meshwork
