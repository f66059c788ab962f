// The cost model's GEMM efficiency curve (core/cost/kernel_time.h)
//     t = F / (peak · gemm · d / (d + gemm_half_dim)),   d = min(m, n, k)
// fitted to timed GEMMs of known shape: peak · t / F = 1/gemm + (gemm_half_dim/gemm) · 1/d
// is a straight line in 1/d, fitted by least squares on relative error. `calibrate
// --measure-gemm` times the host's sgemm over a grid of shapes (core/engine/cpu/gemm_pace.h)
// and takes the curve's shape from it (docs/cost-model.md, "Ranks sharing a host"); this
// file holds only the arithmetic, so that it can be tested without a clock.
#pragma once

#include <span>
#include <string>

namespace meshwork::cost {

// One timed GEMM: (m × k)·(k × n), seconds per call.
struct GemmTiming {
    double m = 0, n = 0, k = 0;
    double seconds = 0;
};

struct GemmCurve {
    bool fitted = false;
    std::string reason;        // why not, when not fitted
    int samples = 0;           // timings used (positive shape and time)
    int sizes = 0;             // distinct d = min(m, n, k) among them
    double gemm_efficiency = 0;  // the asymptote, fraction of `peak`
    double gemm_half_dim = 0;    // d at which the efficiency is half the asymptote
    double rms_error = 0;        // relative rms of the fitted times over the samples
    double worst_error = 0;      // largest relative miss
};

// Fits the curve to `timings` against `peak_flops_per_s`. Not fitted (reason says why) with
// fewer than two distinct sizes d, or when the line has no positive asymptote. A negative
// slope (larger d slower per FLOP) is fitted as a flat curve (gemm_half_dim 0): the cost
// model's curve cannot rise with 1/d.
GemmCurve fit_gemm_curve(std::span<const GemmTiming> timings, double peak_flops_per_s);

}  // namespace meshwork::cost
