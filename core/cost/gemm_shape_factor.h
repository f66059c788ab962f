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

#include "core/cluster/cluster_spec.h"

namespace meshwork::cost {

// Which published per-shape table a GPU and precision read (gemm_shape_factor.cpp holds them
// with their sources). None: the A100, CPUs and GPUs no table covers (the gemm_half_dim curve).
enum class GemmShapeTable { None, HopperBf16, BlackwellBf16, BlackwellFp8 };

// The table for a GPU kind (resources/gpus) and training dtype. Hopper reads its bf16 table
// for every precision (OpenXLA's sm_90 fp8 entries exceed the H100's dense fp8 peak, so they
// are not used); Blackwell reads its fp8 table for fp8 (every recipe) and its bf16 table
// otherwise.
GemmShapeTable gemm_shape_table(const std::string& gpu_kind, DType dtype);

// The factor, in (0, 1], for `together` equal GEMMs running side by side (1: a lone GEMM; a
// batched call: its batch; Transformer Engine's grouped experts: the GEMMs its compute
// streams run at once), each with `m` output rows, `n` output columns and inner dimension
// `k`: the table's rate at that shape over the rate the precision's large-GEMM figure reads
// from it (gemm_efficiency.h), at most 1. Interpolated in log2
// between the table's points over batch, m, n and k; GEMMs of 4,096 rows or more each are
// read by total rows (the table's b × 4096 entries); concurrency beyond the table's batch of 4
// counts as more rows. Outside the grid the nearest edge: dimensions above 4096 count as 4096
// (where the tables reach their largest entry), fewer than 256 rows, columns or inner length
// as 256 (optimistic for such slivers). GemmShapeTable::None gives 1.
double gemm_shape_factor(GemmShapeTable table, double m, double n, double k, double together = 1);

}  // namespace meshwork::cost
