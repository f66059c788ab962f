#include "core/cost/gemm_curve_fit.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "core/common/weighted_line_fit.h"

namespace meshwork::cost {

GemmCurve fit_gemm_curve(std::span<const GemmTiming> timings, double peak) {
    GemmCurve c;
    // y = peak · t / F against u = 1/d; each sample weighted by 1/y², so that the fit
    // minimises relative error (small GEMMs count as much as large ones).
    std::vector<WeightedPoint> pts;  // x = u = 1/d
    std::set<double> sizes;
    for (const auto& t : timings) {
        if (!(t.m > 0 && t.n > 0 && t.k > 0 && t.seconds > 0)) continue;
        const double d = std::min({t.m, t.n, t.k});
        const double flops = 2.0 * t.m * t.n * t.k;
        const double y = peak * t.seconds / flops;
        pts.push_back({.x = 1.0 / d, .y = y, .w = 1.0 / (y * y)});
        sizes.insert(d);
    }
    c.samples = static_cast<int>(pts.size());
    c.sizes = static_cast<int>(sizes.size());
    if (!(peak > 0)) {
        c.reason = "no peak FLOP/s to refer the efficiency to";
        return c;
    }
    if (c.sizes < 2) {
        c.reason = "the timings have " + std::to_string(c.sizes) + " distinct size d = min(m, n, k); the curve needs two or more";
        return c;
    }
    const WeightedLine line = fit_weighted_line(pts);
    double slope = line.slope;          // gemm_half_dim / gemm
    double intercept = line.intercept;  // 1 / gemm
    if (slope < 0) {
        // Larger GEMMs no faster per FLOP: the flat curve through the weighted mean.
        double sy = 0;
        for (const auto& p : pts) sy += p.w * p.y;
        slope = 0;
        intercept = sy / line.weight_sum;
    }
    if (!(intercept > 0)) {
        c.reason = "the timings give no positive asymptote (1/gemm = " + std::to_string(intercept) + ")";
        return c;
    }
    double se = 0;
    for (const auto& p : pts) {
        const double rel = (intercept + slope * p.x) / p.y - 1;
        se += rel * rel;
        c.worst_error = std::max(c.worst_error, std::fabs(rel));
    }
    c.rms_error = std::sqrt(se / static_cast<double>(pts.size()));
    // The cluster reader's ranges: gemm in (0, 1], gemm_half_dim in [0, 1e6].
    c.gemm_efficiency = std::clamp(1.0 / intercept, 1e-3, 1.0);
    c.gemm_half_dim = std::clamp(slope / intercept, 0.0, 1e6);
    c.fitted = true;
    return c;
}

}  // namespace meshwork::cost
