#include "core/engine/model/moe_dispatch_plan.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "core/engine/model/index.h"

namespace meshwork::engine {

ExpertPlacement::ExpertPlacement(std::vector<std::vector<int>> experts_per_ep_rank, int experts)
    : experts_of_rank(std::move(experts_per_ep_rank)), owner(ix(experts), 0), slot(ix(experts), 0) {
    for (std::size_t r = 0; r < experts_of_rank.size(); ++r) {
        for (std::size_t j = 0; j < experts_of_rank[r].size(); ++j) {
            owner[ix(experts_of_rank[r][j])] = static_cast<int>(r);
            slot[ix(experts_of_rank[r][j])] = static_cast<int>(j);
        }
    }
}

DispatchPlan plan_dispatch(const std::vector<Assignment>& kept, const std::vector<float>& weights,
                           int top_k, const ExpertPlacement& placement) {
    const auto place = [&](const Assignment& a) {
        return std::make_pair(placement.owner[ix(a.expert)], placement.slot[ix(a.expert)]);
    };
    DispatchPlan plan;
    plan.rows = kept;
    std::stable_sort(plan.rows.begin(), plan.rows.end(),
                     [&](const Assignment& a, const Assignment& b) { return place(a) < place(b); });
    plan.rows_to_rank.assign(ix(placement.ranks()), 0);
    for (const auto& experts : placement.experts_of_rank) plan.rows_to_expert.emplace_back(experts.size(), 0);
    plan.weights.reserve(plan.rows.size());
    for (const Assignment& a : plan.rows) {
        const auto [rank, slot] = place(a);
        plan.weights.push_back(weights[ix(a.token, top_k, a.slot)]);
        ++plan.rows_to_rank[ix(rank)];
        ++plan.rows_to_expert[ix(rank)][ix(slot)];
    }
    return plan;
}

ReceivePlan plan_receive(const std::vector<int>& counts, int ranks, int local_experts) {
    ReceivePlan plan;
    plan.rows_from_rank.assign(ix(ranks), 0);
    for (int q = 0; q < ranks; ++q) {
        for (int j = 0; j < local_experts; ++j) plan.rows_from_rank[ix(q)] += counts[ix(q, local_experts, j)];
    }
    plan.rows = std::accumulate(plan.rows_from_rank.begin(), plan.rows_from_rank.end(), 0);
    // Rows arrive by source rank, then the source's order of this rank's experts.
    std::vector<int> at(ix(ranks), 0);  // next received row of each source
    for (int q = 1; q < ranks; ++q) at[ix(q)] = at[ix(q - 1)] + plan.rows_from_rank[ix(q - 1)];
    plan.expert_rows.assign(ix(local_experts), 0);
    plan.perm.reserve(ix(plan.rows));
    for (int j = 0; j < local_experts; ++j) {
        for (int q = 0; q < ranks; ++q) {
            const int rows = counts[ix(q, local_experts, j)];
            for (int i = 0; i < rows; ++i) plan.perm.push_back(at[ix(q)] + i);
            at[ix(q)] += rows;
            plan.expert_rows[ix(j)] += rows;
        }
    }
    return plan;
}

}  // namespace meshwork::engine
