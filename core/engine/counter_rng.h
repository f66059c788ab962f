// Counter-based normal numbers: value i of stream `seed` depends on (seed, i) only, so any
// device can produce any slice of a tensor and every shard of every layout agrees with the
// unsharded initialisation. Every backend's fill_normal uses this definition.
#pragma once

#include <cmath>
#include <cstdint>

namespace meshwork::engine {

// SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mix.
constexpr std::uint64_t mix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

// Uniform in (0, 1) from 53 random bits, never 0 (log in Box–Muller).
inline double unit_uniform(std::uint64_t bits) {
    return (static_cast<double>(bits >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

// The i-th standard normal of stream `seed` (Box–Muller on two mixed counters).
inline float counter_normal(std::uint64_t seed, std::uint64_t i) {
    const std::uint64_t base = mix64(seed ^ mix64(i));
    const double u1 = unit_uniform(mix64(base));
    const double u2 = unit_uniform(mix64(base ^ 0xD1B54A32D192ED03ULL));
    constexpr double kTwoPi = 6.283185307179586;
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2));
}

// A stream id for a named tensor: parameters draw from independent streams.
inline std::uint64_t stream_seed(std::uint64_t seed, const char* name) {
    std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
    for (const char* p = name; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ULL;
    return mix64(seed ^ h);
}

}  // namespace meshwork::engine
