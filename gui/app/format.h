// Human-readable numbers for labels: counts (12.3B), bytes (80.0 GiB), durations (1.25 ms).
#pragma once

#include <QString>

#include <cstdint>

namespace meshwork::gui {

// The unit and the decimals a number is shown in: three significant figures ("1.23M",
// "12.5 µs", "412") for the value it was chosen for. A figure and its change share one scale
// ("3.20 s, +0.15 s", not "+150 ms"), and so do figures meant to be compared side by side.
struct NumberScale {
    double divisor = 1;
    QString suffix;  // with its leading space where the unit takes one (" GiB", " ms"; "M" none)
    int decimals = 0;
};
NumberScale count_scale(double n);
NumberScale bytes_scale(double bytes);
NumberScale duration_scale(double ns);
// A number with no unit: integers as they are, others to three significant figures.
NumberScale plain_scale(double v);
// `v` in `scale`: v / divisor with its decimals, then the suffix.
QString format_scaled(double v, const NumberScale& scale);

// 1234567 -> "1.23M"; below 1000 printed as is.
QString format_count(double n);
// Binary units: "512 MiB", "79.6 GiB".
QString format_bytes(double bytes);
// Picks ns, µs, ms or s so that the number stays short: "850 ns", "12.5 µs", "3.20 s".
QString format_duration_ns(double ns);
// A signed change with a leading + or − (U+2212), for "since the previous layout" columns.
QString format_signed(double value, int decimals);

}  // namespace meshwork::gui
