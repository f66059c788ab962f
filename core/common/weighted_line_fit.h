// Weighted least-squares line y = intercept + slope · x: the one fit behind both GEMM
// curves (core/cost/gemm_curve_fit from timed host GEMMs, profiler/analysis/gemm_size_fit
// from a measured trace's operations), which differ in their points and weights only.
#pragma once

#include <span>

namespace meshwork {

struct WeightedPoint {
    double x = 0, y = 0, w = 0;
};

struct WeightedLine {
    double slope = 0, intercept = 0;
    double weight_sum = 0;  // Σw, for weighted means of residuals
};

// Needs two or more distinct x with positive weight (the caller checks the count of sizes);
// otherwise the slope is not finite.
inline WeightedLine fit_weighted_line(std::span<const WeightedPoint> pts) {
    double sw = 0, sx = 0, sy = 0;
    for (const auto& p : pts) sw += p.w, sx += p.w * p.x, sy += p.w * p.y;
    const double mx = sx / sw, my = sy / sw;
    double sxx = 0, sxy = 0;
    for (const auto& p : pts) sxx += p.w * (p.x - mx) * (p.x - mx), sxy += p.w * (p.x - mx) * (p.y - my);
    WeightedLine line;
    line.slope = sxy / sxx;
    line.intercept = my - line.slope * mx;
    line.weight_sum = sw;
    return line;
}

}  // namespace meshwork
