#include "core/cost/gemm_shape_factor.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/cost/gemm_efficiency.h"

namespace meshwork::cost {

namespace {

// OpenXLA's default matmul performance tables (kDefaultMatmulPTable), measured by the XLA team
// with cuBLAS on each GPU: batch b = 1, 2, 4 and each of m, n, k = 256, 512, 1024, 2048, 4096,
// in TFLOP/s (the file's FLOP/s over 1e12, rounded to 0.01). Indices: [b][m][n][k]. A batch of
// b GEMMs runs as one cuBLAS batched call, its tiles side by side on the SMs.
constexpr std::array<double, 3> kBatches{1, 2, 4};
constexpr std::array<double, 5> kDims{256, 512, 1024, 2048, 4096};
using Grid = double[3][5][5][5];

// Hopper: key "sm_90" (H100 SXM), flops "bf16xbf16->bf16", all 375 entries, at
// tensorflow/tensorflow third_party/xla/xla/service/gpu/model/matmul_interpolator_data.h
// 372d578b. (OpenXLA's later sm_90 table adds f8e4m3fn entries, but its largest reach 2,593
// TFLOP/s, above the H100 SXM's dense fp8 peak of 1,979: not used.)
constexpr Grid kSm90Bf16 = {
    // b = 1
    {
     {  // m = 256
      {6.45, 11.46, 19.46, 31.13, 84.31},
      {11.46, 21.96, 39.11, 62.37, 91.68},
      {22.67, 41.84, 72.47, 118.99, 172.29},
      {41.84, 78.22, 138.08, 215.78, 285.87},
      {78.03, 138.08, 225.20, 324.59, 412.03},
     },
     {  // m = 512
      {11.46, 21.79, 39.29, 60.13, 91.06},
      {21.62, 40.72, 71.24, 114.72, 174.54},
      {43.46, 80.47, 138.65, 216.48, 309.61},
      {79.32, 143.40, 232.61, 342.39, 430.53},
      {134.22, 236.30, 373.35, 522.25, 644.12},
     },
     {  // m = 1024
      {21.96, 40.92, 68.34, 113.17, 169.68},
      {42.91, 82.24, 141.28, 220.03, 298.93},
      {82.04, 145.57, 236.30, 349.98, 470.11},
      {139.52, 237.55, 373.35, 524.29, 653.53},
      {209.72, 338.93, 490.29, 634.22, 738.47},
     },
     {  // m = 2048
      {43.58, 77.31, 135.85, 216.13, 307.49},
      {83.89, 142.78, 235.88, 347.71, 451.15},
      {141.58, 238.40, 373.35, 523.27, 653.13},
      {213.04, 345.48, 493.90, 631.98, 737.97},
      {299.26, 450.40, 594.21, 715.35, 753.64},
     },
     {  // m = 4096
      {82.24, 137.24, 217.18, 304.69, 376.22},
      {142.48, 238.82, 370.77, 521.74, 649.96},
      {216.48, 343.71, 488.06, 631.98, 738.47},
      {304.00, 447.02, 593.23, 716.07, 758.43},
      {392.16, 543.12, 677.44, 738.74, 783.33},
     },
    },
    // b = 2
    {
     {  // m = 256
      {11.55, 21.56, 36.95, 60.35, 91.30},
      {22.31, 42.05, 72.94, 119.62, 175.22},
      {43.02, 80.66, 138.65, 216.13, 295.31},
      {81.84, 142.18, 226.34, 332.25, 418.78},
      {142.48, 228.26, 358.39, 462.82, 587.71},
     },
     {  // m = 512
      {21.73, 40.33, 66.58, 112.60, 168.62},
      {43.35, 81.05, 139.81, 216.48, 312.13},
      {82.04, 141.28, 235.06, 349.53, 461.23},
      {138.65, 235.47, 371.28, 525.31, 644.12},
      {206.81, 335.54, 486.74, 627.19, 734.68},
     },
     {  // m = 1024
      {43.69, 76.43, 136.40, 209.72, 306.43},
      {81.44, 146.21, 237.55, 347.71, 449.64},
      {140.40, 238.40, 373.87, 519.22, 649.57},
      {211.70, 339.79, 493.45, 631.24, 739.00},
      {298.26, 445.91, 596.52, 714.64, 747.74},
     },
     {  // m = 2048
      {78.77, 139.23, 217.18, 309.97, 378.63},
      {141.88, 234.24, 371.79, 518.72, 645.28},
      {215.78, 342.39, 488.95, 629.39, 737.21},
      {299.59, 447.02, 600.19, 717.74, 756.70},
      {393.89, 542.29, 678.72, 729.08, 779.35},
     },
     {  // m = 4096
      {135.03, 234.65, 366.21, 508.40, 584.19},
      {211.03, 340.65, 487.18, 622.82, 729.69},
      {301.61, 445.54, 598.18, 713.45, 750.61},
      {394.47, 546.43, 680.88, 733.30, 783.19},
      {464.02, 607.67, 692.97, 763.01, 807.67},
     },
    },
    // b = 4
    {
     {  // m = 256
      {22.55, 41.22, 71.39, 117.73, 171.63},
      {43.13, 80.66, 135.03, 204.60, 286.48},
      {81.44, 140.10, 228.26, 327.76, 430.53},
      {140.40, 228.65, 358.87, 478.49, 588.03},
      {206.49, 335.13, 481.93, 602.89, 664.03},
     },
     {  // m = 512
      {42.37, 77.85, 132.36, 210.37, 293.05},
      {77.49, 142.18, 237.13, 343.27, 442.23},
      {139.23, 236.30, 375.43, 518.22, 641.81},
      {209.06, 336.39, 487.18, 629.39, 737.48},
      {294.98, 442.23, 592.25, 699.73, 730.06},
     },
     {  // m = 1024
      {80.85, 135.85, 218.24, 313.96, 384.05},
      {134.49, 236.72, 371.79, 514.24, 642.19},
      {214.75, 337.65, 489.85, 626.09, 735.94},
      {300.28, 442.23, 598.18, 712.74, 743.59},
      {391.31, 541.75, 674.88, 718.70, 773.53},
     },
     {  // m = 2048
      {136.12, 235.47, 368.22, 493.90, 561.87},
      {213.38, 335.54, 487.18, 621.38, 730.44},
      {300.94, 443.33, 596.54, 710.62, 745.02},
      {394.76, 542.29, 674.04, 725.75, 779.14},
      {458.86, 607.32, 688.63, 752.46, 801.94},
     },
     {  // m = 4096
      {206.49, 335.13, 477.64, 588.67, 622.46},
      {298.59, 441.51, 589.00, 703.63, 728.59},
      {393.31, 542.04, 673.84, 720.52, 777.59},
      {458.47, 607.49, 687.86, 759.30, 808.70},
      {503.87, 619.86, 725.51, 764.58, 793.13},
     },
    },
};
// Blackwell: key "sm_100" (B200), flops "bf16xbf16->bf16" (kSm100Bf16) and
// "f8e4m3fnxf8e4m3fn->bf16" (kSm100Fp8, per-tensor scales; every fp8 recipe reads it), all 375
// entries each, at openxla/xla 71feeddf7c (generated file, its source in its first lines).
// Blackwell fills later than Hopper: bf16 1·4096×4096×1024 runs at 78 % of the reference
// below on B200, 87 % on H100.
#include "core/cost/gemm_shape_tables_sm100.inc"

// Output rows of the table's largest GEMMs of each batch: b × 4096.
constexpr std::array<double, 3> kRows{4096, 8192, 16384};
constexpr std::size_t kLargestM = 4;  // index of m = 4096

// A table and its reference: the rate the precision's row of gemm_efficiency.cpp (kRows) reads
// from the same table for its large-GEMM figure, which is factor 1. sm_90 bf16: 783.3, 786.0,
// 783.2, 764.1 (mean 779.2); sm_100 bf16: 1·4096×4096×4096 1,416.9 and 1·4096×2048×4096
// 1,343.5 (mean 1,380.2); sm_100 e4m3: the same entries, 2,765.0 and 2,499.4 (mean 2,632.2).
struct ShapeTable {
    const Grid& tflops;
    double reference_tflops;
};

ShapeTable shape_table(GemmShapeTable t) {
    switch (t) {
        case GemmShapeTable::BlackwellBf16: return {kSm100Bf16, 1380.2};
        case GemmShapeTable::BlackwellFp8: return {kSm100Fp8, 2632.2};
        case GemmShapeTable::HopperBf16:
        case GemmShapeTable::None: break;
    }
    return {kSm90Bf16, 779.2};
}

// Position of x on a log2 grid: lower index and weight of the upper point, clamped to the grid.
template <std::size_t N>
std::pair<std::size_t, double> locate(const std::array<double, N>& grid, double x) {
    if (!(x > grid.front())) return {0, 0.0};
    if (x >= grid.back()) return {N - 2, 1.0};
    std::size_t i = 0;
    while (i + 2 < N && x >= grid[i + 1]) ++i;
    const double w = (std::log2(x) - std::log2(grid[i])) / (std::log2(grid[i + 1]) - std::log2(grid[i]));
    return {i, w};
}

}  // namespace

GemmShapeTable gemm_shape_table(const std::string& gpu_kind, DType dtype) {
    const std::string arch = gpu_architecture(gpu_kind);
    if (arch == "hopper") return GemmShapeTable::HopperBf16;
    // NVFP4 takes the fp8 table's shape factors: no fp4 shape table is published (an assumption).
    if (arch == "blackwell") return quantized_gemms(dtype) ? GemmShapeTable::BlackwellFp8 : GemmShapeTable::BlackwellBf16;
    return GemmShapeTable::None;
}

double gemm_shape_factor(GemmShapeTable table, double m, double n, double k, double together) {
    if (table == GemmShapeTable::None || !(m > 0) || !(n > 0) || !(k > 0)) return 1.0;
    // Factor 1 is the rate the precision's row of gemm_efficiency.cpp reads from the same table
    // (its largest b = 1 and 2 entries), so a GEMM that large or larger keeps the large-GEMM
    // efficiency and the two tables never count the same shortfall twice.
    const auto [tflops, reference] = shape_table(table);
    together = std::max(1.0, together);
    const auto [ni, nw] = locate(kDims, n);
    const auto [ki, kw] = locate(kDims, k);
    // Concurrency beyond the table's largest batch (4) is folded into the rows: b GEMMs of
    // m rows side by side fill the SMs like one of b·m rows once each has a full tile row.
    const double batch = std::min(together, kBatches.back());
    const double rows_per_gemm = m * together / batch;
    double v = 0;
    if (rows_per_gemm >= kDims.back()) {
        // 4,096 rows or more each: the table's m = 4096 entries, by total rows (b × 4096).
        const auto [ri, rw] = locate(kRows, rows_per_gemm * batch);
        for (int dr = 0; dr < 2; ++dr) {
            for (int dn = 0; dn < 2; ++dn) {
                for (int dk = 0; dk < 2; ++dk) {
                    const double w = (dr ? rw : 1 - rw) * (dn ? nw : 1 - nw) * (dk ? kw : 1 - kw);
                    if (w > 0) v += w * tflops[ri + dr][kLargestM][ni + dn][ki + dk];
                }
            }
        }
    } else {
        // Fewer rows: the table's own small-m entries at the batch that runs together.
        const auto [bi, bw] = locate(kBatches, batch);
        const auto [mi, mw] = locate(kDims, rows_per_gemm);
        for (int db = 0; db < 2; ++db) {
            for (int dm = 0; dm < 2; ++dm) {
                for (int dn = 0; dn < 2; ++dn) {
                    for (int dk = 0; dk < 2; ++dk) {
                        const double w = (db ? bw : 1 - bw) * (dm ? mw : 1 - mw) *
                                         (dn ? nw : 1 - nw) * (dk ? kw : 1 - kw);
                        if (w > 0) v += w * tflops[bi + db][mi + dm][ni + dn][ki + dk];
                    }
                }
            }
        }
    }
    return std::clamp(v / reference, 1e-3, 1.0);
}

}  // namespace meshwork::cost
