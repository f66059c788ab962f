// The fraction of a GPU's dense peak that large GEMMs reach, by GPU architecture and GEMM
// precision, from published kernel tables (one owner: the table in gemm_efficiency.cpp, each
// row with its source; docs/cost-model.md, "GEMM efficiency by GPU and precision").
//
// The cost model takes `efficiency.gemm` of the cluster when the cluster (or the layout's
// inline cluster) states one: a user's or `calibrate`'s figure wins. Otherwise it takes the
// sustained figure for the cluster's GPU and the layout's precision: the table's ratios
// between precisions, scaled to one fitted figure per architecture (sustained_gemm_efficiency);
// where there is no row (a GPU or precision nobody published a table for) the old default,
// kUntabledGemm.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "core/cluster/cluster_spec.h"
#include "core/layout/speed_knobs.h"

namespace meshwork::cost {

// What a GEMM's operands are, as the kernel tables key them.
enum class GemmPrecision { Fp32, Tf32, Bf16, Fp16, Fp8Tensorwise, Fp8Blockwise, Mxfp8, Nvfp4 };

std::string to_string(GemmPrecision p);

// Training precision and fp8 recipe → GEMM precision (the recipe is read only for fp8; fp4 is
// NVFP4, the one fp4 recipe Megatron-LM trains with).
GemmPrecision gemm_precision(DType dtype, Fp8Recipe recipe);

struct GemmEfficiencyRow {
    const char* architecture;    // "hopper", "blackwell", "blackwell-ultra" (gpu_table_architecture)
    GemmPrecision precision;
    double fraction_of_peak;     // achieved TFLOP/s over the dense peak of that precision
    const char* source;          // the published table and the entries it is taken from
};

std::span<const GemmEfficiencyRow> gemm_efficiency_table();

// The architecture a GPU kind (resources/gpus) belongs to in the table; empty when none.
std::string gpu_architecture(const std::string& gpu_kind);

// The kernel tables a GPU kind reads: its architecture's, but "blackwell-ultra" for B300 and
// GB300, which have GEMM and attention timings of their own and are Blackwell everywhere else
// (shape tables, the fp8 transpose). The one place that tells Blackwell Ultra apart.
std::string gpu_table_architecture(const std::string& gpu_kind);

// The kernel table's figure for a GPU kind and precision; nullopt without a row.
std::optional<double> tabled_gemm_efficiency(const std::string& gpu_kind, GemmPrecision p);

// What a training step sustains: the architecture's fitted per-tensor fp8 figure (one number
// per architecture, fitted on designated rows, docs/cost-model.md) times the kernel table's
// ratio of `p` to per-tensor fp8. nullopt without a row.
std::optional<double> sustained_gemm_efficiency(const std::string& gpu_kind, GemmPrecision p);

// The default of a cluster that states no GEMM efficiency and whose GPU has no row (the
// figure every preset carried before the table, set on the A100 rows of tst_cost_published).
inline constexpr double kUntabledGemm = 0.7;

// The GEMM efficiency the cost model uses: the cluster's stated `efficiency.gemm` (> 0)
// wins, else sustained_gemm_efficiency, else kUntabledGemm.
double gemm_efficiency(const ClusterSpec& cluster, DType dtype, Fp8Recipe recipe);

}  // namespace meshwork::cost
