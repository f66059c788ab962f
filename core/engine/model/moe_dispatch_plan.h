// Where each routed token goes, on the host: the EP rank and expert of every assignment
// kept by routing, in the order the all-to-all sends them (by owner EP rank, then the
// owner's expert order, then token), with the row counts the exchange needs; and on the
// receiving side, how the rows that arrive (by source rank, then expert) are regrouped so
// that each local expert's rows are contiguous. Pure functions: unit-tested on their own
// (tests/core/engine/tst_moe_plan.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "core/engine/model/moe_route.h"

namespace meshwork::engine {

// The experts of each EP rank, as the layout places them (Layout::ep_experts()).
struct ExpertPlacement {
    std::vector<std::vector<int>> experts_of_rank;  // per EP rank, in its order
    std::vector<int> owner;                         // per expert: its EP rank
    std::vector<int> slot;                          // per expert: its place among the owner's

    ExpertPlacement() = default;
    ExpertPlacement(std::vector<std::vector<int>> experts_per_ep_rank, int experts);
    [[nodiscard]] int ranks() const { return static_cast<int>(experts_of_rank.size()); }
};

struct DispatchPlan {
    std::vector<Assignment> rows;                   // one per row sent, in send order
    std::vector<float> weights;                     // the combine weight of each row
    std::vector<int> rows_to_rank;                  // rows sent to each EP rank
    std::vector<std::vector<int>> rows_to_expert;   // [EP rank][owner's slot]: rows sent
    [[nodiscard]] int size() const { return static_cast<int>(rows.size()); }
};

// `weights`: tokens × top_k, the routing's renormalised weights.
[[nodiscard]] DispatchPlan plan_dispatch(const std::vector<Assignment>& kept, const std::vector<float>& weights,
                                         int top_k, const ExpertPlacement& placement);

struct ReceivePlan {
    std::vector<int> rows_from_rank;   // rows received from each EP rank
    std::vector<int> expert_rows;      // rows of each local expert
    std::vector<std::int32_t> perm;    // expert-major row → received row
    int rows = 0;
};

// `counts[q · local_experts + j]`: the rows EP rank q sends to this rank's expert j.
[[nodiscard]] ReceivePlan plan_receive(const std::vector<int>& counts, int ranks, int local_experts);

}  // namespace meshwork::engine
