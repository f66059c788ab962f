// Row-wise kernels: RMSNorm, rotary embedding, softmaxes, cross-entropy pieces, row dot.
// One block of kThreads per row (rows are tokens: thousands of them fill the GPU); each
// thread strides over the row's columns, so loads are coalesced across the warp.
#include "core/engine/cuda/kernels/kernels.h"
#include "core/engine/cuda/kernels/launch.cuh"

namespace meshwork {
namespace engine {
namespace cuda_kernels {

namespace {

__device__ inline const float* row_of(const float* p, int r, int cols) {
    return p + static_cast<std::size_t>(r) * cols;
}
__device__ inline float* row_of(float* p, int r, int cols) {
    return p + static_cast<std::size_t>(r) * cols;
}

__global__ void rmsnorm_forward_kernel(const float* x, const float* w, float* y, float* rstd,
                                       int cols, float eps) {
    __shared__ float scratch[kThreads / kWarp];
    const int r = blockIdx.x;
    const float* xr = row_of(x, r, cols);
    float sq = 0.0f;
    for (int c = threadIdx.x; c < cols; c += kThreads) sq += xr[c] * xr[c];
    sq = block_sum(sq, scratch);
    const float inv = rsqrtf(sq / cols + eps);
    if (threadIdx.x == 0) rstd[r] = inv;
    float* yr = row_of(y, r, cols);
    for (int c = threadIdx.x; c < cols; c += kThreads) yr[c] = xr[c] * inv * w[c];
}

// dx = rstd·(g − x̂·mean(g·x̂)) with x̂ = x·rstd and g = dy·w.
__global__ void rmsnorm_backward_dx_kernel(const float* dy, const float* x, const float* w,
                                           const float* rstd, float* dx, int cols) {
    __shared__ float scratch[kThreads / kWarp];
    const int r = blockIdx.x;
    const float* xr = row_of(x, r, cols);
    const float* dyr = row_of(dy, r, cols);
    const float inv = rstd[r];
    float dot = 0.0f;
    for (int c = threadIdx.x; c < cols; c += kThreads) dot += dyr[c] * w[c] * xr[c] * inv;
    const float mean = block_sum(dot, scratch) / cols;
    float* dxr = row_of(dx, r, cols);
    for (int c = threadIdx.x; c < cols; c += kThreads) {
        dxr[c] = inv * (dyr[c] * w[c] - xr[c] * inv * mean);
    }
}

// dw[c] += Σ_r dy[r, c]·x[r, c]·rstd[r]: blocks of 32 columns × 8 row lanes; each block
// covers a chunk of rows, sums its lanes in shared memory and adds one partial per column.
constexpr int kDwCols = 32, kDwLanes = 8, kDwRowsPerBlock = 256;
__global__ void rmsnorm_backward_dw_kernel(const float* dy, const float* x, const float* rstd,
                                           float* dw, int rows, int cols) {
    __shared__ float part[kDwLanes][kDwCols];
    const int c = blockIdx.x * kDwCols + threadIdx.x;
    const int r0 = blockIdx.y * kDwRowsPerBlock;
    const int r1 = min(rows, r0 + kDwRowsPerBlock);
    float acc = 0.0f;
    if (c < cols) {
        for (int r = r0 + threadIdx.y; r < r1; r += kDwLanes) {
            const std::size_t i = static_cast<std::size_t>(r) * cols + c;
            acc += dy[i] * x[i] * rstd[r];
        }
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && c < cols) {
        float sum = 0.0f;
        for (int l = 0; l < kDwLanes; ++l) sum += part[l][threadIdx.x];
        atomicAdd(dw + c, sum);
    }
}

// Llama's rotate-half: dimension i pairs with i + half at frequency theta^(−2i/head_dim).
// Angles in double: positions reach 10^5 and float sin/cos would lose the phase.
__global__ void rope_kernel(float* x, const std::int32_t* pos, int rows, int heads, int head_dim,
                            float theta, float sign) {
    const int half = head_dim / 2;
    const std::size_t n = static_cast<std::size_t>(rows) * heads * half;
    for (std::size_t t = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; t < n;
         t += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const int i = static_cast<int>(t % half);
        const std::size_t rh = t / half;  // row·heads + head
        const int r = static_cast<int>(rh / heads);
        const double freq = pow(static_cast<double>(theta), -2.0 * i / head_dim);
        double s, c;
        sincos(static_cast<double>(pos[r]) * freq, &s, &c);
        const float cf = static_cast<float>(c), sf = sign * static_cast<float>(s);
        float* v = x + rh * head_dim;
        const float a = v[i], b = v[i + half];
        v[i] = a * cf - b * sf;
        v[i + half] = b * cf + a * sf;
    }
}

__global__ void masked_softmax_kernel(float* scores, int cols, float scale,
                                      const std::int32_t* q_pos, const std::int32_t* k_pos) {
    __shared__ float scratch[kThreads / kWarp];
    const int r = blockIdx.x;
    float* row = row_of(scores, r, cols);
    const std::int32_t qp = q_pos[r];
    float mx = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += kThreads) {
        if (k_pos[c] <= qp) mx = fmaxf(mx, row[c] * scale);
    }
    mx = block_max(mx, scratch);
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += kThreads) {
        const float e = k_pos[c] <= qp ? expf(row[c] * scale - mx) : 0.0f;
        row[c] = e;
        sum += e;
    }
    sum = block_sum(sum, scratch);
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;  // a row that sees no key stays zero
    for (int c = threadIdx.x; c < cols; c += kThreads) row[c] *= inv;
}

__global__ void softmax_backward_kernel(const float* probs, float* dp, int cols, float scale) {
    __shared__ float scratch[kThreads / kWarp];
    const int r = blockIdx.x;
    const float* p = row_of(probs, r, cols);
    float* d = row_of(dp, r, cols);
    float dot = 0.0f;
    for (int c = threadIdx.x; c < cols; c += kThreads) dot += p[c] * d[c];
    dot = block_sum(dot, scratch);
    for (int c = threadIdx.x; c < cols; c += kThreads) d[c] = scale * p[c] * (d[c] - dot);
}

__global__ void softmax_rows_kernel(float* x, int cols) {
    __shared__ float scratch[kThreads / kWarp];
    float* row = row_of(x, blockIdx.x, cols);
    float mx = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += kThreads) mx = fmaxf(mx, row[c]);
    mx = block_max(mx, scratch);
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += kThreads) {
        const float e = expf(row[c] - mx);
        row[c] = e;
        sum += e;
    }
    const float inv = 1.0f / block_sum(sum, scratch);
    for (int c = threadIdx.x; c < cols; c += kThreads) row[c] *= inv;
}

__global__ void row_max_kernel(const float* x, float* out, int cols) {
    __shared__ float scratch[kThreads / kWarp];
    const float* row = row_of(x, blockIdx.x, cols);
    float mx = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += kThreads) mx = fmaxf(mx, row[c]);
    mx = block_max(mx, scratch);
    if (threadIdx.x == 0) out[blockIdx.x] = mx;
}

__global__ void row_sum_exp_and_target_kernel(const float* logits, const float* row_max,
                                              const std::int32_t* targets, int vocab_begin,
                                              float* sum_exp, float* target_logit, int cols) {
    __shared__ float scratch[kThreads / kWarp];
    const int r = blockIdx.x;
    const float* l = row_of(logits, r, cols);
    const float m = row_max[r];
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += kThreads) sum += expf(l[c] - m);
    sum = block_sum(sum, scratch);
    if (threadIdx.x == 0) {
        sum_exp[r] = sum;
        const int t = targets[r] - vocab_begin;
        target_logit[r] = (t >= 0 && t < cols) ? l[t] : 0.0f;
    }
}

__global__ void cross_entropy_backward_kernel(float* logits, const float* row_max,
                                              const float* sum_exp, const std::int32_t* targets,
                                              int vocab_begin, const float* row_weight,
                                              int cols) {
    const int r = blockIdx.x;
    float* l = row_of(logits, r, cols);
    const float m = row_max[r], inv = 1.0f / sum_exp[r], w = row_weight[r];
    const int t = targets[r] - vocab_begin;
    for (int c = threadIdx.x; c < cols; c += kThreads) {
        const float g = expf(l[c] - m) * inv * w;
        l[c] = c == t ? g - w : g;
    }
}

__global__ void row_dot_kernel(const float* a, const float* b, float* out, int cols) {
    __shared__ float scratch[kThreads / kWarp];
    const int r = blockIdx.x;
    const float* ar = row_of(a, r, cols);
    const float* br = row_of(b, r, cols);
    float d = 0.0f;
    for (int c = threadIdx.x; c < cols; c += kThreads) d += ar[c] * br[c];
    d = block_sum(d, scratch);
    if (threadIdx.x == 0) out[r] = d;
}

}  // namespace

cudaError_t rmsnorm_forward(const float* x, const float* w, float* y, float* rstd, int rows,
                            int cols, float eps, cudaStream_t stream) {
    if (rows <= 0) return cudaSuccess;
    rmsnorm_forward_kernel<<<rows, kThreads, 0, stream>>>(x, w, y, rstd, cols, eps);
    return cudaGetLastError();
}

cudaError_t rmsnorm_backward(const float* dy, const float* x, const float* w, const float* rstd,
                             float* dx, float* dw, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return cudaSuccess;
    // dw first: dx may alias dy (in-place backward), and dw reads dy.
    const dim3 grid((cols + kDwCols - 1) / kDwCols, (rows + kDwRowsPerBlock - 1) / kDwRowsPerBlock);
    rmsnorm_backward_dw_kernel<<<grid, dim3(kDwCols, kDwLanes), 0, stream>>>(dy, x, rstd, dw,
                                                                             rows, cols);
    rmsnorm_backward_dx_kernel<<<rows, kThreads, 0, stream>>>(dy, x, w, rstd, dx, cols);
    return cudaGetLastError();
}

cudaError_t rope(float* x, const std::int32_t* pos, int rows, int heads, int head_dim,
                 float theta, bool inverse, cudaStream_t stream) {
    const std::size_t n = static_cast<std::size_t>(rows) * heads * (head_dim / 2);
    if (n == 0) return cudaSuccess;
    rope_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, pos, rows, heads, head_dim, theta,
                                                      inverse ? -1.0f : 1.0f);
    return cudaGetLastError();
}

cudaError_t masked_softmax_forward(float* scores, int rows, int cols, float scale,
                                   const std::int32_t* q_pos, const std::int32_t* k_pos,
                                   cudaStream_t stream) {
    if (rows <= 0) return cudaSuccess;
    masked_softmax_kernel<<<rows, kThreads, 0, stream>>>(scores, cols, scale, q_pos, k_pos);
    return cudaGetLastError();
}

cudaError_t softmax_backward(const float* probs, float* dp, int rows, int cols, float scale,
                             cudaStream_t stream) {
    if (rows <= 0) return cudaSuccess;
    softmax_backward_kernel<<<rows, kThreads, 0, stream>>>(probs, dp, cols, scale);
    return cudaGetLastError();
}

cudaError_t softmax_rows(float* x, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0) return cudaSuccess;
    softmax_rows_kernel<<<rows, kThreads, 0, stream>>>(x, cols);
    return cudaGetLastError();
}

cudaError_t row_max(const float* x, float* out, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0) return cudaSuccess;
    row_max_kernel<<<rows, kThreads, 0, stream>>>(x, out, cols);
    return cudaGetLastError();
}

cudaError_t row_sum_exp_and_target(const float* logits, const float* row_max,
                                   const std::int32_t* targets, int vocab_begin, float* sum_exp,
                                   float* target_logit, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0) return cudaSuccess;
    row_sum_exp_and_target_kernel<<<rows, kThreads, 0, stream>>>(
        logits, row_max, targets, vocab_begin, sum_exp, target_logit, cols);
    return cudaGetLastError();
}

cudaError_t cross_entropy_backward(float* logits, const float* row_max, const float* sum_exp,
                                   const std::int32_t* targets, int vocab_begin,
                                   const float* row_weight, int rows, int cols,
                                   cudaStream_t stream) {
    if (rows <= 0) return cudaSuccess;
    cross_entropy_backward_kernel<<<rows, kThreads, 0, stream>>>(
        logits, row_max, sum_exp, targets, vocab_begin, row_weight, cols);
    return cudaGetLastError();
}

cudaError_t row_dot(const float* a, const float* b, float* out, int rows, int cols,
                    cudaStream_t stream) {
    if (rows <= 0) return cudaSuccess;
    row_dot_kernel<<<rows, kThreads, 0, stream>>>(a, b, out, cols);
    return cudaGetLastError();
}

}  // namespace cuda_kernels
}  // namespace engine
}  // namespace meshwork
