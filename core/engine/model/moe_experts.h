// The local experts of an EP rank: SwiGLU MLPs (w_gate, w_up: hidden × expert_ffn; w_down:
// expert_ffn × hidden), each over its contiguous block of the expert-major rows.
#pragma once

#include <string>
#include <vector>

#include "core/engine/params.h"
#include "core/engine/rank_context.h"
#include "core/engine/tensor.h"

namespace meshwork::engine {

struct MoeExpert {
    int id = 0;
    int w_gate = 0, w_up = 0, w_down = 0;  // ParamStore ids
};

// What the forward keeps for the backward: the inputs and the SwiGLU's intermediates.
struct ExpertActivations {
    Tensor x, gate, up, act;
};

struct ExpertBlock {
    const std::vector<MoeExpert>& experts;
    const std::vector<int>& rows;  // rows of each expert, in order
    int ffn = 0;                   // expert_ffn
    std::string op_name;           // the traced op
    int layer = 0;
};

// Takes the expert-major input rows into `keep`; returns the outputs, row for row.
[[nodiscard]] Tensor experts_forward(RankContext& ctx, ParamStore& store, const ExpertBlock& block, Tensor x,
                                     ExpertActivations& keep);
// Input gradients from output gradients; accumulates the weight gradients in `store`.
[[nodiscard]] Tensor experts_backward(RankContext& ctx, ParamStore& store, const ExpertBlock& block,
                                      const ExpertActivations& keep, const Tensor& dout);

}  // namespace meshwork::engine
