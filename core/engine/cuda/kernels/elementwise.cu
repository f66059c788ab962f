// Elementwise kernels: fill, counter-based normal init, axpy/scale, SwiGLU, AdamW, bf16 cast.
// All memory-bound; grid-stride loops over size_t indices.
#include <cuda_bf16.h>

#include "core/engine/cuda/kernels/device_rng.cuh"
#include "core/engine/cuda/kernels/kernels.h"
#include "core/engine/cuda/kernels/launch.cuh"

namespace meshwork {
namespace engine {
namespace cuda_kernels {

namespace {

#define MESHWORK_GRID_STRIDE(i, n)                                                  \
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; \
         i < (n); i += static_cast<std::size_t>(gridDim.x) * blockDim.x)

__global__ void fill_kernel(float* dst, std::size_t n, float value) {
    MESHWORK_GRID_STRIDE(i, n) dst[i] = value;
}

__global__ void fill_normal_kernel(float* dst, std::size_t n, std::uint64_t seed,
                                   std::uint64_t first, float stddev) {
    MESHWORK_GRID_STRIDE(i, n) dst[i] = stddev * counter_normal(seed, first + i);
}

__global__ void axpy_kernel(float* y, const float* x, std::size_t n, float alpha) {
    MESHWORK_GRID_STRIDE(i, n) y[i] += alpha * x[i];
}

__global__ void scale_kernel(float* x, std::size_t n, float alpha) {
    MESHWORK_GRID_STRIDE(i, n) x[i] *= alpha;
}

__global__ void scale_2d_kernel(float* c, int rows, int cols, int ld, float beta) {
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    MESHWORK_GRID_STRIDE(i, n) {
        const std::size_t r = i / cols, col = i % cols;
        c[r * ld + col] *= beta;
    }
}

__device__ inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

__global__ void swiglu_forward_kernel(const float* gate, const float* up, float* out,
                                      std::size_t n) {
    MESHWORK_GRID_STRIDE(i, n) {
        const float g = gate[i];
        out[i] = g * sigmoid(g) * up[i];
    }
}

__global__ void swiglu_backward_kernel(const float* dout, const float* gate, const float* up,
                                       float* dgate, float* dup, std::size_t n) {
    MESHWORK_GRID_STRIDE(i, n) {
        const float g = gate[i], sg = sigmoid(g), d = dout[i];
        const float u = up[i];  // read before writing: dup may alias up
        dgate[i] = d * u * sg * (1.0f + g * (1.0f - sg));
        dup[i] = d * g * sg;
    }
}

// Decoupled weight decay as torch.optim.AdamW (same order of operations as CpuBackend).
__global__ void adamw_kernel(float* param, const float* grad, float* m, float* v, std::size_t n,
                             float lr, float beta1, float beta2, float eps, float decay,
                             float bias1, float bias2) {
    MESHWORK_GRID_STRIDE(i, n) {
        const float g = grad[i];
        const float mi = beta1 * m[i] + (1.0f - beta1) * g;
        const float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
        m[i] = mi;
        v[i] = vi;
        const float mhat = mi / bias1, vhat = vi / bias2;
        param[i] = param[i] * decay - lr * mhat / (sqrtf(vhat) + eps);
    }
}

__global__ void to_bf16_kernel(const float* src, __nv_bfloat16* dst, std::size_t n) {
    MESHWORK_GRID_STRIDE(i, n) dst[i] = __float2bfloat16_rn(src[i]);
}

__global__ void round_bf16_kernel(const float* src, float* dst, std::size_t n) {
    MESHWORK_GRID_STRIDE(i, n) dst[i] = __bfloat162float(__float2bfloat16_rn(src[i]));
}

#undef MESHWORK_GRID_STRIDE

}  // namespace

cudaError_t fill(float* dst, std::size_t count, float value, cudaStream_t stream) {
    if (count == 0) return cudaSuccess;
    fill_kernel<<<grid_for(count), kThreads, 0, stream>>>(dst, count, value);
    return cudaGetLastError();
}

cudaError_t fill_normal(float* dst, std::size_t count, std::uint64_t seed,
                        std::uint64_t first_index, float stddev, cudaStream_t stream) {
    if (count == 0) return cudaSuccess;
    fill_normal_kernel<<<grid_for(count), kThreads, 0, stream>>>(dst, count, seed, first_index,
                                                                  stddev);
    return cudaGetLastError();
}

cudaError_t axpy(float* y, const float* x, std::size_t count, float alpha, cudaStream_t stream) {
    if (count == 0) return cudaSuccess;
    axpy_kernel<<<grid_for(count), kThreads, 0, stream>>>(y, x, count, alpha);
    return cudaGetLastError();
}

cudaError_t scale(float* x, std::size_t count, float alpha, cudaStream_t stream) {
    if (count == 0) return cudaSuccess;
    scale_kernel<<<grid_for(count), kThreads, 0, stream>>>(x, count, alpha);
    return cudaGetLastError();
}

cudaError_t scale_2d(float* c, int rows, int cols, int ld, float beta, cudaStream_t stream) {
    const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    if (n == 0) return cudaSuccess;
    scale_2d_kernel<<<grid_for(n), kThreads, 0, stream>>>(c, rows, cols, ld, beta);
    return cudaGetLastError();
}

cudaError_t swiglu_forward(const float* gate, const float* up, float* out, std::size_t count,
                           cudaStream_t stream) {
    if (count == 0) return cudaSuccess;
    swiglu_forward_kernel<<<grid_for(count), kThreads, 0, stream>>>(gate, up, out, count);
    return cudaGetLastError();
}

cudaError_t swiglu_backward(const float* dout, const float* gate, const float* up, float* dgate,
                            float* dup, std::size_t count, cudaStream_t stream) {
    if (count == 0) return cudaSuccess;
    swiglu_backward_kernel<<<grid_for(count), kThreads, 0, stream>>>(dout, gate, up, dgate, dup,
                                                                      count);
    return cudaGetLastError();
}

cudaError_t adamw(float* param, const float* grad, float* m, float* v, std::size_t count,
                  float lr, float beta1, float beta2, float eps, float weight_decay,
                  float bias1, float bias2, cudaStream_t stream) {
    if (count == 0) return cudaSuccess;
    adamw_kernel<<<grid_for(count), kThreads, 0, stream>>>(param, grad, m, v, count, lr, beta1,
                                                            beta2, eps, 1.0f - lr * weight_decay,
                                                            bias1, bias2);
    return cudaGetLastError();
}

cudaError_t to_bf16(const float* src, std::uint16_t* dst, std::size_t count, cudaStream_t stream) {
    if (count == 0) return cudaSuccess;
    to_bf16_kernel<<<grid_for(count), kThreads, 0, stream>>>(
        src, reinterpret_cast<__nv_bfloat16*>(dst), count);
    return cudaGetLastError();
}

cudaError_t round_bf16(const float* src, float* dst, std::size_t count, cudaStream_t stream) {
    if (count == 0) return cudaSuccess;
    round_bf16_kernel<<<grid_for(count), kThreads, 0, stream>>>(src, dst, count);
    return cudaGetLastError();
}

}  // namespace cuda_kernels
}  // namespace engine
}  // namespace meshwork
