// Device copy of engine/counter_rng.h (that header is host-only C++): the same SplitMix64
// mixing and Box–Muller in double, so fill_normal gives the CPU backend's values on any GPU.
// Change both together; tests/gpu/tst_gpu_kernels.cpp compares them.
#pragma once

#include <cstdint>

namespace meshwork {
namespace engine {
namespace cuda_kernels {

__device__ inline std::uint64_t mix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

__device__ inline double unit_uniform(std::uint64_t bits) {
    return (static_cast<double>(bits >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

__device__ inline float counter_normal(std::uint64_t seed, std::uint64_t i) {
    const std::uint64_t base = mix64(seed ^ mix64(i));
    const double u1 = unit_uniform(mix64(base));
    const double u2 = unit_uniform(mix64(base ^ 0xD1B54A32D192ED03ULL));
    const double two_pi = 6.283185307179586;
    return static_cast<float>(sqrt(-2.0 * log(u1)) * cos(two_pi * u2));
}

}  // namespace cuda_kernels
}  // namespace engine
}  // namespace meshwork
