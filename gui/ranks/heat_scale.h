// The rank overview's colour scale: which metric of a RankStepCell a cell shows, and the
// sequential colour ramp (viridis: ordered by lightness, readable on both themes and by
// colour-blind readers) from the fastest present cell to the slowest.
#pragma once

#include <QColor>
#include <QString>

#include "profiler/analysis/rank_steps.h"

namespace meshwork::gui {

enum class RankMetric { StepTime, ExposedComm };

[[nodiscard]] double metric_seconds(const profiler::RankStepCell& cell, RankMetric metric);
[[nodiscard]] QString metric_name(RankMetric metric);

class HeatScale {
public:
    HeatScale() = default;
    HeatScale(double low_s, double high_s) : low_s_(low_s), high_s_(high_s) {}
    // From the smallest to the largest value of `metric` over the present cells.
    [[nodiscard]] static HeatScale over(const profiler::RankStepMatrix& matrix, RankMetric metric);

    [[nodiscard]] double low_s() const { return low_s_; }
    [[nodiscard]] double high_s() const { return high_s_; }
    // 0 at low, 1 at high, clamped; 0.5 when every value is the same.
    [[nodiscard]] double fraction(double seconds) const;
    [[nodiscard]] QColor colour(double seconds) const { return ramp(fraction(seconds)); }
    // The ramp itself, `f` in [0, 1].
    [[nodiscard]] static QColor ramp(double f);

private:
    double low_s_ = 0;
    double high_s_ = 0;
};

}  // namespace meshwork::gui
