// Human-readable numbers for labels: counts (12.3B), bytes (80.0 GiB), durations (1.25 ms).
#pragma once

#include <QString>

#include <cstdint>

namespace meshwork::gui {

// 1234567 -> "1.23M"; below 1000 printed as is.
QString format_count(double n);
// Binary units: "512 MiB", "79.6 GiB".
QString format_bytes(double bytes);
// Picks ns, µs, ms or s so that the number stays short: "850 ns", "12.5 µs", "3.20 s".
QString format_duration_ns(double ns);
// A signed change with a leading + or − (U+2212), for "since the previous layout" columns.
QString format_signed(double value, int decimals);

}  // namespace meshwork::gui
