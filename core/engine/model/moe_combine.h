// MoE combine on the device: the experts' output rows sent back to the ranks of their
// tokens by all-to-all (the dispatch reversed) and summed per token with the routing
// weights. Its backward gives the experts' output gradients and ∂L/∂weight of every row sent.
#pragma once

#include <string>

#include "core/engine/model/moe_dispatch.h"
#include "core/engine/rank_context.h"
#include "core/engine/tensor.h"

namespace meshwork::engine {

struct CombineOp {
    std::string op_name;  // the traced weighted sum
    int layer = 0;
};

// `expert_out`: expert-major rows. Returns `tokens` rows; `returned` keeps each sent row's
// expert output (for the weights' gradient).
[[nodiscard]] Tensor combine_forward(RankContext& ctx, const MoeExchange& x, const Tensor& expert_out,
                                     int tokens, const CombineOp& op, Tensor& returned);

struct CombineGrad {
    Tensor d_expert_out;  // expert-major rows
    Floats d_weights;     // per sent row
};
// `dy`: the gradient of the `tokens` rows combine_forward returned (row-major, hidden wide).
[[nodiscard]] CombineGrad combine_backward(RankContext& ctx, const MoeExchange& x, const float* dy,
                                           const Tensor& returned);

}  // namespace meshwork::engine
