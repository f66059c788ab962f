// The rank overview's colour scale: which metric of a RankStepCell a cell shows, and the
// sequential colour ramp (viridis: ordered by lightness, readable on both themes and by
// colour-blind readers) from the fastest present cell to the slowest. With more than two
// steps the first is left out of the range, as the trace statistics leave it out (warm-up:
// allocations, first-touch, autotuning): its cells take the ramp's end instead of pressing
// every later step into one colour.
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
    // From the smallest to the largest value of `metric` over the present cells (of the
    // steps after the first when there are more than two).
    [[nodiscard]] static HeatScale over(const profiler::RankStepMatrix& matrix, RankMetric metric);
    // Whether some present cell lies outside [low, high] (the legend marks its ends ≤ / ≥).
    [[nodiscard]] bool clamps_low() const { return clamps_low_; }
    [[nodiscard]] bool clamps_high() const { return clamps_high_; }
    // Steps left out of the range at the start (0 or 1).
    [[nodiscard]] int warmup_steps() const { return warmup_steps_; }

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
    bool clamps_low_ = false, clamps_high_ = false;
    int warmup_steps_ = 0;
};

}  // namespace meshwork::gui
