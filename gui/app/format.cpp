#include "gui/app/format.h"

#include <cmath>

namespace meshwork::gui {

QString format_count(double n) {
    static const char* const units[] = {"", "K", "M", "B", "T", "P"};
    int i = 0;
    double v = std::abs(n);
    while (v >= 1000 && i < 5) {
        v /= 1000;
        ++i;
    }
    const int decimals = i == 0 ? 0 : (v < 10 ? 2 : (v < 100 ? 1 : 0));
    return QString::number(n < 0 ? -v : v, 'f', decimals) + units[i];
}

QString format_bytes(double bytes) {
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    double v = std::abs(bytes);
    while (v >= 1024 && i < 4) {
        v /= 1024;
        ++i;
    }
    const int decimals = i == 0 ? 0 : (v < 10 ? 2 : (v < 100 ? 1 : 0));
    return QString::number(bytes < 0 ? -v : v, 'f', decimals) + " " + units[i];
}

QString format_duration_ns(double ns) {
    const double a = std::abs(ns);
    auto fmt = [](double v, const char* unit) {
        const double m = std::abs(v);
        const int decimals = m < 10 ? 2 : (m < 100 ? 1 : 0);
        return QString::number(v, 'f', decimals) + QString::fromUtf8(unit);
    };
    if (a < 1e3) return QString::number(ns, 'f', 0) + " ns";
    if (a < 1e6) return fmt(ns / 1e3, " µs");
    if (a < 1e9) return fmt(ns / 1e6, " ms");
    return fmt(ns / 1e9, " s");
}

QString format_signed(double value, int decimals) {
    const QString body = QString::number(std::abs(value), 'f', decimals);
    if (value > 0) return "+" + body;
    if (value < 0) return QString::fromUtf8("\u2212") + body;
    return body;
}

}  // namespace meshwork::gui
