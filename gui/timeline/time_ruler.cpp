#include "gui/timeline/time_ruler.h"

#include <algorithm>
#include <cmath>

namespace meshwork::gui {

double ruler_step_ns(double ns_per_px, double min_px) {
    const double wanted = std::max(ns_per_px * min_px, 1e-3);
    const double decade = std::pow(10.0, std::floor(std::log10(wanted)));
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        if (m * decade >= wanted) return m * decade;
    }
    return 10 * decade;
}

}  // namespace meshwork::gui

namespace meshwork::gui {

QString ruler_label(double t_ns, double step_ns) {
    const double magnitude = std::max(std::abs(t_ns), step_ns);
    double unit = 1;
    const char* name = " ns";
    if (magnitude >= 1e9) { unit = 1e9; name = " s"; }
    else if (magnitude >= 1e6) { unit = 1e6; name = " ms"; }
    else if (magnitude >= 1e3) { unit = 1e3; name = " \u00b5s"; }
    const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step_ns / unit) - 1e-9)), 0, 6);
    return QString::number(t_ns / unit, 'f', decimals) + QString::fromUtf8(name);
}

}  // namespace meshwork::gui
