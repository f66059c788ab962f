// MoE dispatch on the device: the plan uploaded, the per-expert row counts exchanged over
// the EP group, each routed token row sent to its expert's rank by all-to-all, and the rows
// that arrive regrouped expert-major. Its backward returns the experts' input gradients to
// the tokens they came from.
#pragma once

#include <cstddef>
#include <vector>

#include "core/engine/model/moe_dispatch_plan.h"
#include "core/engine/rank_context.h"
#include "core/engine/tensor.h"

namespace meshwork::engine {

// What one micro-batch's dispatch leaves for the combine and the backward.
struct MoeExchange {
    Ints token_index;  // sent row → its token
    Ints identity;     // sent row → itself (the weighted scatter of the backward)
    Floats weights;    // sent row → its combine weight
    Ints perm;         // expert-major row → received row
    std::vector<std::size_t> send_counts, recv_counts;  // floats per EP rank
    std::vector<int> expert_rows;                       // rows of each local expert
    int sent = 0, received = 0;
};

// Sends the rows of `tokens` (one per routed token) as `plan` says; returns the received
// rows, expert-major, and fills `x`.
[[nodiscard]] Tensor dispatch_tokens(RankContext& ctx, const DispatchPlan& plan, int local_experts,
                                     const Tensor& tokens, MoeExchange& x);

// The gradient of the expert-major rows back to the `tokens` routed rows (summed over a
// token's experts).
[[nodiscard]] Tensor dispatch_backward(RankContext& ctx, const MoeExchange& x, const Tensor& d_expert_rows,
                                       int tokens);

}  // namespace meshwork::engine
