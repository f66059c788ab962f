// Moving activations between the tensor-parallel regions (Megatron-LM's f/g operators, and
// their sequence-parallel forms). Activations between blocks live in the "region" layout:
// replicated over TP ranks, or under sequence parallelism split by rows over them.
//   gather_for_tp:   region → full rows   (fwd: identity | all-gather;  bwd: reduce_tp_input)
//   reduce_from_tp:  partial full rows → region (fwd: all-reduce | reduce-scatter;
//                    bwd: gather_for_tp)
#pragma once

#include "core/engine/model/dims.h"
#include "core/engine/rank_context.h"
#include "core/engine/tensor.h"

namespace meshwork::engine {

// The full rows × cols input of a column-parallel layer from the region tensor.
Tensor gather_for_tp(RankContext& ctx, const ModelDims& d, const Tensor& region);
// Sums partial outputs of a row-parallel layer into the region layout.
Tensor reduce_from_tp(RankContext& ctx, const ModelDims& d, Tensor& partial);
// Backward of gather_for_tp: the gradients of a column-parallel input, partial on each TP
// rank, into the region layout.
Tensor reduce_tp_input_grad(RankContext& ctx, const ModelDims& d, Tensor& partial);
// A copy of a tensor on the compute stream.
Tensor clone(RankContext& ctx, const Tensor& t);

}  // namespace meshwork::engine
