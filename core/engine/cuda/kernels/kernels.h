// Launchers of the CUDA backend's kernels: the C++17 boundary between the backend (C++20,
// cuda_backend_*.cpp) and the .cu files (C++17, the dialect CMake 3.25 gives nvcc). Only
// plain types and the CUDA runtime's stream type cross it. Each launcher enqueues on
// `stream` and returns the launch status (cudaGetLastError), never waiting. Semantics are
// those of the same-named Backend functions (engine/backend.h); CpuBackend is the reference.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace meshwork {
namespace engine {
namespace cuda_kernels {

// ---- elementwise (elementwise.cu) -------------------------------------------------------
cudaError_t fill(float* dst, std::size_t count, float value, cudaStream_t stream);
cudaError_t fill_normal(float* dst, std::size_t count, std::uint64_t seed,
                        std::uint64_t first_index, float stddev, cudaStream_t stream);
cudaError_t axpy(float* y, const float* x, std::size_t count, float alpha, cudaStream_t stream);
cudaError_t scale(float* x, std::size_t count, float alpha, cudaStream_t stream);
// C[i, j] *= beta for a rows × cols block with leading dimension ld (GEMM with k = 0).
cudaError_t scale_2d(float* c, int rows, int cols, int ld, float beta, cudaStream_t stream);
cudaError_t swiglu_forward(const float* gate, const float* up, float* out, std::size_t count,
                           cudaStream_t stream);
cudaError_t swiglu_backward(const float* dout, const float* gate, const float* up, float* dgate,
                            float* dup, std::size_t count, cudaStream_t stream);
// bias1/bias2 are 1 − beta^step, computed once on the host.
cudaError_t adamw(float* param, const float* grad, float* m, float* v, std::size_t count,
                  float lr, float beta1, float beta2, float eps, float weight_decay,
                  float bias1, float bias2, cudaStream_t stream);
// fp32 → bf16 (round to nearest even), bf16 stored as its 16 raw bits.
cudaError_t to_bf16(const float* src, std::uint16_t* dst, std::size_t count, cudaStream_t stream);
// dst = src rounded to the nearest bf16 (ties to even), kept as fp32: how a bf16 layout
// reads a parameter stored in fp32 (engine/precision.h). dst may be src.
cudaError_t round_bf16(const float* src, float* dst, std::size_t count, cudaStream_t stream);

// ---- row-wise (rows.cu): one block per row ------------------------------------------------
cudaError_t rmsnorm_forward(const float* x, const float* w, float* y, float* rstd, int rows,
                            int cols, float eps, cudaStream_t stream);
// dx overwritten; dw accumulated (+=) over rows.
cudaError_t rmsnorm_backward(const float* dy, const float* x, const float* w, const float* rstd,
                             float* dx, float* dw, int rows, int cols, cudaStream_t stream);
cudaError_t rope(float* x, const std::int32_t* pos, int rows, int heads, int head_dim,
                 float theta, bool inverse, cudaStream_t stream);
cudaError_t masked_softmax_forward(float* scores, int rows, int cols, float scale,
                                   const std::int32_t* q_pos, const std::int32_t* k_pos,
                                   cudaStream_t stream);
cudaError_t softmax_backward(const float* probs, float* dp, int rows, int cols, float scale,
                             cudaStream_t stream);
cudaError_t softmax_rows(float* x, int rows, int cols, cudaStream_t stream);
cudaError_t row_max(const float* x, float* out, int rows, int cols, cudaStream_t stream);
cudaError_t row_sum_exp_and_target(const float* logits, const float* row_max,
                                   const std::int32_t* targets, int vocab_begin, float* sum_exp,
                                   float* target_logit, int rows, int cols, cudaStream_t stream);
cudaError_t cross_entropy_backward(float* logits, const float* row_max, const float* sum_exp,
                                   const std::int32_t* targets, int vocab_begin,
                                   const float* row_weight, int rows, int cols,
                                   cudaStream_t stream);
cudaError_t row_dot(const float* a, const float* b, float* out, int rows, int cols,
                    cudaStream_t stream);

// ---- gather / scatter (gather.cu) ----------------------------------------------------------
cudaError_t embedding_forward(const float* table, const std::int32_t* tokens, float* out,
                              int count, int hidden, int vocab_begin, int vocab_rows,
                              cudaStream_t stream);
cudaError_t embedding_backward(const float* dout, const std::int32_t* tokens, float* dtable,
                               int count, int hidden, int vocab_begin, int vocab_rows,
                               cudaStream_t stream);
cudaError_t gather_rows(const float* src, const std::int32_t* index, float* out, int count,
                        int cols, cudaStream_t stream);
cudaError_t scatter_add_rows(const float* src, const std::int32_t* index, const float* weight,
                             float* dst, int count, int cols, cudaStream_t stream);

}  // namespace cuda_kernels
}  // namespace engine
}  // namespace meshwork
