// The Estimate dock's numbers (figure_text.h).
#include "gui/estimate/figure_text.h"

#include <cmath>

namespace meshwork::gui {

namespace {
const QString kMinus = QString::fromUtf8("\u2212");

NumberScale fraction_scale() { return {0.01, " %", 1}; }  // 0.453 -> "45.3 %"
}  // namespace

NumberScale figure_scale(const Figure& f, const std::vector<Figure>& figures) {
    switch (f.unit) {
        case Figure::Unit::Count: return count_scale(f.value);
        case Figure::Unit::Bytes: return bytes_scale(f.value);
        case Figure::Unit::Seconds: {
            // Every duration in the unit of the step time, the one they are parts of.
            for (const auto& g : figures) {
                if (g.key == "step_time_s") return duration_scale(g.value * 1e9);
            }
            return duration_scale(f.value * 1e9);
        }
        case Figure::Unit::Fraction: return fraction_scale();
        case Figure::Unit::Plain: return plain_scale(f.value);
    }
    return {};
}

QString figure_text(const Figure& f, const NumberScale& scale) {
    const double v = f.unit == Figure::Unit::Seconds ? f.value * 1e9 : f.value;
    // A duration far below the step time's unit would read 0.00 s: it takes its own.
    if (f.unit == Figure::Unit::Seconds && v != 0 && std::abs(v / scale.divisor) < 0.01) {
        return format_duration_ns(v);
    }
    return format_scaled(v, scale);
}

QString change_text(const Figure& f, double before, const NumberScale& scale) {
    if (f.value == before) return {};
    double d = f.value - before;
    if (f.unit == Figure::Unit::Seconds) d *= 1e9;
    NumberScale s = scale;
    if (f.unit == Figure::Unit::Fraction) s.suffix = " pt";
    // Integers (plain counts such as micro-batches) change by integers.
    if (f.unit == Figure::Unit::Plain && d == std::round(d)) s.decimals = 0;
    const QString sign = d > 0 ? "+" : kMinus;
    const double last_decimal = std::pow(10.0, -s.decimals);
    if (std::abs(d / s.divisor) < last_decimal / 2) {
        return sign + "<" + QString::number(last_decimal, 'f', s.decimals) + s.suffix;
    }
    return sign + format_scaled(std::abs(d), s);
}

}  // namespace meshwork::gui
