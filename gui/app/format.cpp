#include "gui/app/format.h"

#include <cmath>

namespace meshwork::gui {

namespace {
// Three significant figures for a magnitude already in its unit.
int decimals_for(double scaled) {
    const double m = std::abs(scaled);
    return m < 10 ? 2 : (m < 100 ? 1 : 0);
}

NumberScale stepped(double v, double step, const char* const* units, int count, const char* space) {
    int i = 0;
    double divisor = 1;
    while (std::abs(v) / divisor >= step && i < count - 1) {
        divisor *= step;
        ++i;
    }
    return {divisor, QString::fromUtf8(space) + QString::fromUtf8(units[i]), i == 0 ? 0 : decimals_for(v / divisor)};
}
}  // namespace

NumberScale count_scale(double n) {
    static const char* const units[] = {"", "K", "M", "B", "T", "P"};
    return stepped(n, 1000, units, 6, "");
}

NumberScale bytes_scale(double bytes) {
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    return stepped(bytes, 1024, units, 5, " ");
}

NumberScale duration_scale(double ns) {
    const double a = std::abs(ns);
    if (a < 1e3) return {1, " ns", 0};
    if (a < 1e6) return {1e3, QString::fromUtf8(" µs"), decimals_for(ns / 1e3)};
    if (a < 1e9) return {1e6, " ms", decimals_for(ns / 1e6)};
    return {1e9, " s", decimals_for(ns / 1e9)};
}

NumberScale plain_scale(double v) {
    if (v == std::round(v)) return {1, "", 0};
    return {1, "", decimals_for(v)};
}

QString format_scaled(double v, const NumberScale& scale) {
    return QString::number(v / scale.divisor, 'f', scale.decimals) + scale.suffix;
}

QString format_count(double n) { return format_scaled(n, count_scale(n)); }

QString format_bytes(double bytes) { return format_scaled(bytes, bytes_scale(bytes)); }

QString format_duration_ns(double ns) { return format_scaled(ns, duration_scale(ns)); }

QString format_signed(double value, int decimals) {
    const QString body = QString::number(std::abs(value), 'f', decimals);
    if (value > 0) return "+" + body;
    if (value < 0) return QString::fromUtf8("\u2212") + body;
    return body;
}

}  // namespace meshwork::gui
