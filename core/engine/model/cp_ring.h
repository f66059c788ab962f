// Context parallelism's ring exchange: the cp ranks of a sequence pass their K/V blocks
// around the ring (cp−1 send/recv steps) so that each holds every block, and pass the
// key/value gradients back around it (a ring reduce-scatter) so that each gets the sum for
// its own block.
#pragma once

#include "core/engine/rank_context.h"
#include "core/engine/tensor.h"

namespace meshwork::engine {

// out[r·n .. (r+1)·n) = rank r's `mine` (n floats), for every cp rank r.
void ring_all_gather(RankContext& ctx, const float* mine, std::size_t n, float* out);
// blocks holds cp consecutive blocks of n floats (partial sums); out = Σ over ranks of
// block (this rank).
void ring_reduce_scatter(RankContext& ctx, const float* blocks, std::size_t n, float* out);

}  // namespace meshwork::engine
