// Chrome Trace Event Format times: "ts" and "dur" are microseconds, written as integers or
// decimals (Kineto: three decimals, absolute Unix-epoch values near 1.7e15 in many PyTorch
// versions). Parsed from the number's text, so nanoseconds survive where a double would round
// them (a double holds 1.7e15 us only to 0.25 us).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "profiler/store/trace_schema.h"

namespace meshwork::profiler {

// |ts| beyond this many microseconds is past what a trace holds (kMaxTraceTimeNs, about 146
// years: readers refuse it), and ts + dur of two such values still fits in int64.
inline constexpr double kMaxTraceTimeUs = static_cast<double>(kMaxTraceTimeNs / 1000);

// Microseconds text ("1666149715033200", "4203669604595.407", "1.5e3") -> nanoseconds,
// rounded half away from zero; nullopt when the text is not a finite number within
// kMaxTraceTimeUs.
std::optional<std::int64_t> micros_text_to_ns(std::string_view text);

// A Unix-epoch time in microseconds is after 2000-01-01 (946684800 s); smaller values are
// relative to something (baseTimeNanoseconds, process start, the profiler's own origin).
inline constexpr std::int64_t kEpoch2000Ns = 946684800LL * 1000000000LL;

}  // namespace meshwork::profiler
