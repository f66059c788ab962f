// Tick spacing for a time axis: 1-2-5 steps chosen so labels stay at least a given number
// of pixels apart at any zoom, from nanoseconds to hours.
#pragma once

#include <cstdint>

namespace meshwork::gui {

// The tick step in ns for `ns_per_px` that leaves at least `min_px` between ticks.
double ruler_step_ns(double ns_per_px, double min_px);

}  // namespace meshwork::gui

#include <QString>

namespace meshwork::gui {

// A tick label for time `t_ns` on a ruler with ticks `step_ns` apart: the unit follows the
// magnitude of t, the decimals the step, so neighbouring ticks never print the same text
// ("969.2 ms", "969.4 ms" rather than "969 ms" twice).
QString ruler_label(double t_ns, double step_ns);

}  // namespace meshwork::gui
