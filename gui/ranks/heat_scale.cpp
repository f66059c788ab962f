#include "gui/ranks/heat_scale.h"

#include <QCoreApplication>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace meshwork::gui {

double metric_seconds(const profiler::RankStepCell& cell, RankMetric metric) {
    return metric == RankMetric::StepTime ? cell.step_s : cell.exposed_comm_s;
}

QString metric_name(RankMetric metric) {
    return metric == RankMetric::StepTime ? QCoreApplication::translate("RankOverview", "step time")
                                          : QCoreApplication::translate("RankOverview", "exposed communication");
}

HeatScale HeatScale::over(const profiler::RankStepMatrix& matrix, RankMetric metric) {
    const std::size_t steps = matrix.steps.size();
    const int warmup = steps > 2 ? 1 : 0;
    double low = std::numeric_limits<double>::infinity();
    double high = -low;
    double all_low = low, all_high = high;
    for (std::size_t i = 0; i < matrix.cells.size(); ++i) {
        const auto& cell = matrix.cells[i];
        if (!cell.present) continue;
        const double v = metric_seconds(cell, metric);
        all_low = std::min(all_low, v);
        all_high = std::max(all_high, v);
        if (static_cast<int>(i % steps) < warmup) continue;
        low = std::min(low, v);
        high = std::max(high, v);
    }
    if (low > high) return {};  // no present cell
    HeatScale scale(low, high);
    scale.warmup_steps_ = warmup;
    scale.clamps_low_ = all_low < low;
    scale.clamps_high_ = all_high > high;
    return scale;
}

double HeatScale::fraction(double seconds) const {
    if (!(high_s_ > low_s_)) return 0.5;
    return std::clamp((seconds - low_s_) / (high_s_ - low_s_), 0.0, 1.0);
}

QColor HeatScale::ramp(double f) {
    // Matplotlib's viridis at 0, 1/8, ..., 1 (its published table), interpolated linearly.
    static constexpr std::array<std::array<int, 3>, 9> kStops{{{68, 1, 84},
                                                               {71, 44, 122},
                                                               {59, 81, 139},
                                                               {44, 113, 142},
                                                               {33, 144, 141},
                                                               {39, 173, 129},
                                                               {92, 200, 99},
                                                               {170, 220, 50},
                                                               {253, 231, 37}}};
    const double x = std::clamp(std::isfinite(f) ? f : 0.0, 0.0, 1.0) * (kStops.size() - 1);
    const auto i = std::min(static_cast<std::size_t>(x), kStops.size() - 2);
    const double t = x - static_cast<double>(i);
    auto lerp = [t](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * t)); };
    return {lerp(kStops[i][0], kStops[i + 1][0]), lerp(kStops[i][1], kStops[i + 1][1]),
            lerp(kStops[i][2], kStops[i + 1][2])};
}

}  // namespace meshwork::gui
