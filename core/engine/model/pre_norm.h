// The pre-norm residual branch shared by the attention and MLP sub-layers of a block:
//   forward   h  = gather_for_tp(rmsnorm(x) · w)          (the full rows the TP GEMMs read)
//   backward  dx = rmsnorm_backward(reduce_tp_input_grad(dh)) + dout   (dout: the residual)
// The ops are named "<prefix>.norm.fwd" / "<prefix>.norm.bwd" in the profile.
#pragma once

#include <string>

#include "core/engine/model/dims.h"
#include "core/engine/params.h"
#include "core/engine/rank_context.h"
#include "core/engine/tensor.h"

namespace meshwork::engine {

struct PreNorm {
    const ModelDims& d;
    int norm;            // the norm's weight in the ParamStore
    int block;           // for the op names and the profile's layer column
    std::string prefix;  // "block.3.attention"

    // Keeps x and the per-row 1/rms for backward (cached_x, rstd); returns h.
    Tensor forward(RankContext& ctx, ParamStore& store, const Tensor& x, Tensor& cached_x, Floats& rstd) const;
    // dh: the partial gradient of h on this TP rank (consumed); dout: the block output's
    // gradient, which also flows through the residual.
    Tensor backward(RankContext& ctx, ParamStore& store, const Tensor& cached_x, const Floats& rstd, Tensor& dh,
                    const Tensor& dout) const;
};

}  // namespace meshwork::engine
