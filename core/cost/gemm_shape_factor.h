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

// The factor, in (0, 1], for `together` equal GEMMs running side by side (1: a lone GEMM; a
// batched call: its batch; Transformer Engine's grouped experts: the GEMMs its compute
// streams run at once), each with `m` output rows, `n` output columns and inner dimension
// `k`. Interpolated in log2 between the table's points over batch, m, n and k; GEMMs of 4,096
// rows or more each are read by total rows (the table's b × 4096 entries); concurrency beyond
// the table's batch of 4 counts as more rows. Outside the grid the nearest edge: dimensions
// above 4096 count as 4096 (where the table has saturated), fewer than 256 rows, columns or
// inner length as 256 (optimistic for such slivers).
double gemm_shape_factor(double m, double n, double k, double together = 1);

}  // namespace meshwork::cost
