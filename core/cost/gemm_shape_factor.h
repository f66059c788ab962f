// How far below the largest GEMMs a GEMM of a given shape runs, from a published per-shape
// kernel table (one owner: the grid in gemm_shape_factor.cpp, with its source;
// docs/cost-model.md, "GEMM efficiency by shape").
//
// The GEMM efficiency of a precision (gemm_efficiency.h) is the fraction of peak the largest
// GEMMs reach. A GEMM with a short inner dimension (k) or a narrow output (n) reaches less:
// fewer tiles to fill the SMs and a fixed prologue and epilogue per tile against less work in
// its main loop. This factor scales the large-GEMM efficiency to the shape; it replaces the
// `d/(d + gemm_half_dim)` curve on GPUs with a table (Hopper and Blackwell).
#pragma once

#include <string>

namespace meshwork::cost {

// Whether a GPU kind (resources/gpus) has a per-shape table; false for the A100, CPUs and
// GPUs no table covers (they keep the gemm_half_dim curve).
bool has_gemm_shape_table(const std::string& gpu_kind);

// The factor, in (0, 1], for a GEMM whose output has `rows` × `n` elements and whose inner
// dimension is `k`. `rows` is the output rows of all the GEMMs that run together (a batched or
// grouped GEMM's total: tokens per expert × local experts). Interpolated in log2 between the
// table's points; outside them the nearest edge (rows below 4096 take the 4096-row figures,
// which makes smaller GEMMs optimistic; dimensions above 4096 count as 4096, where the table
// has saturated).
double gemm_shape_factor(double rows, double n, double k);

}  // namespace meshwork::cost
