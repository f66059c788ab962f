#include "app/cli/format.h"

#include <cmath>
#include <cstdio>

namespace meshwork::cli {

namespace {
std::string scaled(double v, const char* const* units, int count, double step, int precision) {
    int i = 0;
    double x = v;
    while (std::fabs(x) >= step && i + 1 < count) {
        x /= step;
        ++i;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f%s", i == 0 ? 0 : precision, x, units[i]);
    return buf;
}
}  // namespace

std::string human_count(double n) {
    static const char* const units[] = {"", "K", "M", "B", "T"};
    return scaled(n, units, 5, 1000.0, 2);
}

std::string human_bytes(double bytes) {
    static const char* const units[] = {" B", " KiB", " MiB", " GiB", " TiB", " PiB"};
    return scaled(bytes, units, 6, 1024.0, 1);
}

std::string human_flops(double flops) {
    static const char* const units[] = {" FLOP", " KFLOP", " MFLOP", " GFLOP", " TFLOP", " PFLOP",
                                        " EFLOP"};
    return scaled(flops, units, 7, 1000.0, 2);
}

std::string human_seconds(double s) {
    char buf[64];
    if (s >= 1.0) {
        std::snprintf(buf, sizeof buf, "%.3f s", s);
    } else if (s >= 1e-3) {
        std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
    } else {
        std::snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
    }
    return buf;
}

std::string pad_right(const std::string& s, std::size_t width) {
    return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string pad_left(const std::string& s, std::size_t width) {
    return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

}  // namespace meshwork::cli
