// Communication running at the same time as compute: what it still costs. Two effects, both
// as Calculon models them (calculon-ai/calculon caa4b11f, calculon/llm/layers.py:549-592,
// LinearOverlapped.compute_processing_time; the per-network `processor_usage` of
// systems/*.json):
//  - interference: a collective running beside compute takes a share `u` of the GPU (the SMs
//    its kernels occupy, memory bandwidth), so the compute it overlaps slows down;
//  - tiling: a tensor-parallel collective split into tiles, each overlapping one tile of the
//    GEMM beside it (Transformer Engine's userbuffers, Megatron-LM's --tp-comm-overlap).
// See docs/cost-model.md, "TP communication overlap" and "Interference".
#pragma once

#include "core/layout/layout.h"

namespace meshwork::cost {

// Wall time of `compute_s` of compute and a `comm_s` transfer started together, the
// transfer taking a share `interference` (0..1) of the GPU while it runs: the compute runs at
// 1 − u beside the transfer and at full speed after it, so the pair takes
// max(comm, compute + u·comm) (Calculon's two cases of layers.py:571-581 in one formula).
double overlapped_s(double compute_s, double comm_s, double interference);

// Time a GEMM of `gemm_s` and the TP collective `comm_s` beside it take beyond the GEMM
// alone, tiled into `tiles` pieces (TE's ring exchange splits into tp chunks): the first
// GEMM tile runs alone, the other tiles − 1 each overlap one transfer tile; `Pipe` leaves one
// more transfer tile exposed (Calculon, layers.py:583-591), `Ring` none, `None` the whole
// collective.
double tiled_collective_extra_s(double gemm_s, double comm_s, int tiles, TpOverlap mode,
                                double interference);

}  // namespace meshwork::cost
