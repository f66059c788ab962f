#include "core/cost/gemm_shape_factor.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/cost/gemm_efficiency.h"

namespace meshwork::cost {

namespace {

// OpenXLA's default matmul performance table for sm_90 (H100 SXM, cuBLAS through XLA),
// tensorflow/tensorflow third_party/xla/xla/service/gpu/model/matmul_interpolator_data.h at
// 372d578b (kDefaultMatmulPTable, key "bf16xbf16->bf16"): the entries with m = 4096 and
// batch b = 1, 2, 4 (4,096, 8,192 and 16,384 output rows in all), every n and k of 256 … 4096,
// in TFLOP/s. Indices: [rows][n][k], each of n and k 256, 512, 1024, 2048, 4096.
constexpr std::array<double, 3> kRows{4096, 8192, 16384};
constexpr std::array<double, 5> kDims{256, 512, 1024, 2048, 4096};
constexpr double kTflops[3][5][5] = {
    // b = 1, m = 4096
    {{82.24, 137.24, 217.18, 304.69, 376.22},
     {142.48, 238.82, 370.77, 521.74, 649.96},
     {216.48, 343.71, 488.06, 631.98, 738.47},
     {304.00, 447.02, 593.23, 716.07, 758.43},
     {392.16, 543.12, 677.44, 738.74, 783.33}},
    // b = 2, m = 4096
    {{135.03, 234.65, 366.21, 508.40, 584.19},
     {211.03, 340.65, 487.18, 622.82, 729.69},
     {301.61, 445.54, 598.18, 713.45, 750.61},
     {394.47, 546.43, 680.88, 733.30, 783.19},
     {464.02, 607.67, 692.97, 763.01, 807.67}},
    // b = 4, m = 4096
    {{206.49, 335.13, 477.64, 588.67, 622.46},
     {298.59, 441.51, 589.00, 703.63, 728.59},
     {393.31, 542.04, 673.84, 720.52, 777.59},
     {458.47, 607.49, 687.86, 759.30, 808.70},
     {503.87, 619.86, 725.51, 764.58, 793.13}},
};
// The largest GEMMs of the table: 16,384 rows, n = k = 4096 (4·4096×4096×4096). The kernel
// tables behind gemm_efficiency.h time GEMMs of that size, so a GEMM this large or larger
// keeps the large-GEMM efficiency (factor 1).
constexpr double kReferenceTflops = 793.13;

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

bool has_gemm_shape_table(const std::string& gpu_kind) {
    // Hopper is the table's GPU. Blackwell (B200, GB200) takes the same factors: no per-shape
    // table of its own was found (OpenXLA's sm_100 table has the 4096-sized entries of
    // gemm_efficiency.h only as far as they were read); its larger SM count makes small shapes
    // fill it worse, so for it the factor is an upper bound.
    return !gpu_architecture(gpu_kind).empty();
}

double gemm_shape_factor(double rows, double n, double k) {
    if (!(rows > 0) || !(n > 0) || !(k > 0)) return 1.0;
    const auto [ri, rw] = locate(kRows, rows);
    const auto [ni, nw] = locate(kDims, n);
    const auto [ki, kw] = locate(kDims, k);
    double v = 0;
    for (int dr = 0; dr < 2; ++dr) {
        for (int dn = 0; dn < 2; ++dn) {
            for (int dk = 0; dk < 2; ++dk) {
                const double w = (dr ? rw : 1 - rw) * (dn ? nw : 1 - nw) * (dk ? kw : 1 - kw);
                if (w > 0) v += w * kTflops[ri + dr][ni + dn][ki + dk];
            }
        }
    }
    return std::clamp(v / kReferenceTflops, 1e-3, 1.0);
}

}  // namespace meshwork::cost
