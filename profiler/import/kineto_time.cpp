#include "profiler/import/kineto_time.h"

#include <charconv>
#include <cmath>
#include <string>

namespace meshwork::profiler {

std::optional<std::int64_t> micros_text_to_ns(std::string_view text) {
    if (text.empty()) return std::nullopt;
    // Exponent form: rare (hand-written or Python-written files); through a double.
    if (text.find_first_of("eE") != std::string_view::npos) {
        double us = 0;
        const auto r = std::from_chars(text.data(), text.data() + text.size(), us);
        if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;
        if (!std::isfinite(us) || std::fabs(us) > kMaxTraceTimeUs) return std::nullopt;
        return std::llround(us * 1000.0);
    }
    std::size_t i = 0;
    const bool negative = text[0] == '-';
    if (negative) ++i;
    std::int64_t whole = 0;
    std::size_t digits = 0;
    constexpr auto kMaxWholeUs = static_cast<std::int64_t>(kMaxTraceTimeUs);
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
        whole = whole * 10 + (text[i] - '0');
        if (whole > kMaxWholeUs) return std::nullopt;
    }
    if (digits == 0) return std::nullopt;
    std::int64_t frac_ns = 0;
    if (i < text.size() && text[i] == '.') {
        ++i;
        int scale = 100;  // first decimal is hundreds of nanoseconds
        bool round_up = false;
        std::size_t frac_digits = 0;
        for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++frac_digits) {
            const int d = text[i] - '0';
            if (scale >= 1) {
                frac_ns += d * scale;
                scale /= 10;
            } else if (scale == 0) {
                round_up = d >= 5;  // the first digit below a nanosecond decides
                scale = -1;
            }
        }
        if (frac_digits == 0) return std::nullopt;
        if (round_up) ++frac_ns;
    }
    if (i != text.size()) return std::nullopt;
    const std::int64_t ns = whole * 1000 + frac_ns;
    return negative ? -ns : ns;
}

}  // namespace meshwork::profiler
