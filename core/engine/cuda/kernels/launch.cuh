// Shared launch helpers of the .cu files: grid sizing and block reductions.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace meshwork {
namespace engine {
namespace cuda_kernels {

constexpr int kThreads = 256;  // threads per block everywhere: 8 warps
constexpr int kWarp = 32;

// Grid-stride loops: enough blocks to fill any current GPU (132 SMs × 16 blocks), never more
// than the elements need.
inline unsigned grid_for(std::size_t count) {
    const std::size_t blocks = (count + kThreads - 1) / kThreads;
    const std::size_t cap = 4096;
    return static_cast<unsigned>(blocks < cap ? (blocks == 0 ? 1 : blocks) : cap);
}

__device__ inline float warp_sum(float v) {
    for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ inline float warp_max(float v) {
    for (int o = kWarp / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Block-wide reductions for kThreads threads; every thread gets the result. `scratch` holds
// kThreads / kWarp floats; the leading barrier lets callers reuse it back to back.
__device__ inline float block_sum(float v, float* scratch) {
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < kThreads / kWarp ? scratch[lane] : 0.0f;
    return warp_sum(v);
}
__device__ inline float block_max(float v, float* scratch) {
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < kThreads / kWarp ? scratch[lane] : -INFINITY;
    return warp_max(v);
}

}  // namespace cuda_kernels
}  // namespace engine
}  // namespace meshwork
