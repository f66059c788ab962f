// Row gathers and scatters: vocabulary-parallel embedding (forward gather, backward
// scatter-add) and MoE permute / unpermute. One block per row of the output (gathers) or
// of the source (scatters); scatter-adds use atomics because indices repeat (a token that
// appears twice, a token routed to top-k experts), so their sums are not bitwise
// deterministic.
#include "core/engine/cuda/kernels/kernels.h"
#include "core/engine/cuda/kernels/launch.cuh"

namespace meshwork {
namespace engine {
namespace cuda_kernels {

namespace {

__global__ void embedding_forward_kernel(const float* table, const std::int32_t* tokens,
                                         float* out, int hidden, int vocab_begin,
                                         int vocab_rows) {
    const int i = blockIdx.x;
    const int row = tokens[i] - vocab_begin;
    float* o = out + static_cast<std::size_t>(i) * hidden;
    const bool mine = row >= 0 && row < vocab_rows;
    const float* t = table + static_cast<std::size_t>(mine ? row : 0) * hidden;
    for (int c = threadIdx.x; c < hidden; c += kThreads) o[c] = mine ? t[c] : 0.0f;
}

__global__ void embedding_backward_kernel(const float* dout, const std::int32_t* tokens,
                                          float* dtable, int hidden, int vocab_begin,
                                          int vocab_rows) {
    const int i = blockIdx.x;
    const int row = tokens[i] - vocab_begin;
    if (row < 0 || row >= vocab_rows) return;
    const float* d = dout + static_cast<std::size_t>(i) * hidden;
    float* t = dtable + static_cast<std::size_t>(row) * hidden;
    for (int c = threadIdx.x; c < hidden; c += kThreads) atomicAdd(t + c, d[c]);
}

__global__ void gather_rows_kernel(const float* src, const std::int32_t* index, float* out,
                                   int cols) {
    const int i = blockIdx.x;
    const float* from = src + static_cast<std::size_t>(index[i]) * cols;
    float* to = out + static_cast<std::size_t>(i) * cols;
    for (int c = threadIdx.x; c < cols; c += kThreads) to[c] = from[c];
}

__global__ void scatter_add_rows_kernel(const float* src, const std::int32_t* index,
                                        const float* weight, float* dst, int cols) {
    const int i = blockIdx.x;
    const float w = weight ? weight[i] : 1.0f;
    const float* from = src + static_cast<std::size_t>(i) * cols;
    float* to = dst + static_cast<std::size_t>(index[i]) * cols;
    for (int c = threadIdx.x; c < cols; c += kThreads) atomicAdd(to + c, w * from[c]);
}

}  // namespace

cudaError_t embedding_forward(const float* table, const std::int32_t* tokens, float* out,
                              int count, int hidden, int vocab_begin, int vocab_rows,
                              cudaStream_t stream) {
    if (count <= 0) return cudaSuccess;
    embedding_forward_kernel<<<count, kThreads, 0, stream>>>(table, tokens, out, hidden,
                                                             vocab_begin, vocab_rows);
    return cudaGetLastError();
}

cudaError_t embedding_backward(const float* dout, const std::int32_t* tokens, float* dtable,
                               int count, int hidden, int vocab_begin, int vocab_rows,
                               cudaStream_t stream) {
    if (count <= 0) return cudaSuccess;
    embedding_backward_kernel<<<count, kThreads, 0, stream>>>(dout, tokens, dtable, hidden,
                                                              vocab_begin, vocab_rows);
    return cudaGetLastError();
}

cudaError_t gather_rows(const float* src, const std::int32_t* index, float* out, int count,
                        int cols, cudaStream_t stream) {
    if (count <= 0) return cudaSuccess;
    gather_rows_kernel<<<count, kThreads, 0, stream>>>(src, index, out, cols);
    return cudaGetLastError();
}

cudaError_t scatter_add_rows(const float* src, const std::int32_t* index, const float* weight,
                             float* dst, int count, int cols, cudaStream_t stream) {
    if (count <= 0) return cudaSuccess;
    scatter_add_rows_kernel<<<count, kThreads, 0, stream>>>(src, index, weight, dst, cols);
    return cudaGetLastError();
}

}  // namespace cuda_kernels
}  // namespace engine
}  // namespace meshwork
