// CudaBackend kernel entry points: each makes the GPU current, resolves the stream and
// enqueues one launcher of cuda/kernels/kernels.h (the .cu files), failing with the op name.
#include <cmath>

#include "core/engine/cuda/cuda_backend.h"
#include "core/engine/cuda/kernels/kernels.h"

namespace meshwork::engine {

namespace k = cuda_kernels;

void CudaBackend::fill(float* dst, std::size_t count, float value, Stream s) {
    activate();
    check(k::fill(dst, count, value, native_stream(s)), "fill");
}

void CudaBackend::fill_normal(float* dst, std::size_t count, std::uint64_t seed,
                              std::uint64_t first_index, float stddev, Stream s) {
    activate();
    check(k::fill_normal(dst, count, seed, first_index, stddev, native_stream(s)), "fill_normal");
}

void CudaBackend::axpy(float* y, const float* x, std::size_t count, float alpha, Stream s) {
    activate();
    check(k::axpy(y, x, count, alpha, native_stream(s)), "axpy");
}

void CudaBackend::scale(float* x, std::size_t count, float alpha, Stream s) {
    activate();
    check(k::scale(x, count, alpha, native_stream(s)), "scale");
}

void CudaBackend::rmsnorm_forward(const float* x, const float* w, float* y, float* rstd, int rows,
                                  int cols, float eps, Stream s) {
    activate();
    w = bf16_operand(w, static_cast<std::size_t>(cols), s);
    check(k::rmsnorm_forward(x, w, y, rstd, rows, cols, eps, native_stream(s)), "rmsnorm_forward");
}

void CudaBackend::rmsnorm_backward(const float* dy, const float* x, const float* w,
                                   const float* rstd, float* dx, float* dw, int rows, int cols,
                                   Stream s) {
    activate();
    w = bf16_operand(w, static_cast<std::size_t>(cols), s);
    check(k::rmsnorm_backward(dy, x, w, rstd, dx, dw, rows, cols, native_stream(s)),
          "rmsnorm_backward");
}

void CudaBackend::rope(float* x, const std::int32_t* pos, int rows, int heads, int head_dim,
                       float theta, bool inverse, Stream s) {
    activate();
    check(k::rope(x, pos, rows, heads, head_dim, theta, inverse, native_stream(s)), "rope");
}

void CudaBackend::swiglu_forward(const float* gate, const float* up, float* out,
                                 std::size_t count, Stream s) {
    activate();
    check(k::swiglu_forward(gate, up, out, count, native_stream(s)), "swiglu_forward");
}

void CudaBackend::swiglu_backward(const float* dout, const float* gate, const float* up,
                                  float* dgate, float* dup, std::size_t count, Stream s) {
    activate();
    check(k::swiglu_backward(dout, gate, up, dgate, dup, count, native_stream(s)),
          "swiglu_backward");
}

void CudaBackend::masked_softmax_forward(float* scores, const MaskedSoftmaxArgs& a, Stream s) {
    activate();
    check(k::masked_softmax_forward(scores, a.rows, a.cols, a.scale, a.q_pos, a.k_pos,
                                    native_stream(s)),
          "masked_softmax_forward");
}

void CudaBackend::softmax_backward(const float* probs, float* dp, int rows, int cols, float scale,
                                   Stream s) {
    activate();
    check(k::softmax_backward(probs, dp, rows, cols, scale, native_stream(s)), "softmax_backward");
}

void CudaBackend::embedding_forward(const float* table, const std::int32_t* tokens, float* out,
                                    int count, int hidden, int vocab_begin, int vocab_rows,
                                    Stream s) {
    activate();
    check(k::embedding_forward(table, tokens, out, count, hidden, vocab_begin, vocab_rows,
                               native_stream(s)),
          "embedding_forward");
    if (precision() == Precision::Bf16) {  // the rows of a bf16 table
        const std::size_t n = static_cast<std::size_t>(count) * static_cast<std::size_t>(hidden);
        check(k::round_bf16(out, out, n, native_stream(s)), "round_bf16");
    }
}

void CudaBackend::embedding_backward(const float* dout, const std::int32_t* tokens,
                                     float* dtable, int count, int hidden, int vocab_begin,
                                     int vocab_rows, Stream s) {
    activate();
    check(k::embedding_backward(dout, tokens, dtable, count, hidden, vocab_begin, vocab_rows,
                                native_stream(s)),
          "embedding_backward");
}

void CudaBackend::row_max(const float* x, float* out, int rows, int cols, Stream s) {
    activate();
    check(k::row_max(x, out, rows, cols, native_stream(s)), "row_max");
}

void CudaBackend::row_sum_exp_and_target(const float* logits, const float* row_max,
                                         const std::int32_t* targets, int vocab_begin,
                                         float* sum_exp, float* target_logit, int rows, int cols,
                                         Stream s) {
    activate();
    check(k::row_sum_exp_and_target(logits, row_max, targets, vocab_begin, sum_exp, target_logit,
                                    rows, cols, native_stream(s)),
          "row_sum_exp_and_target");
}

void CudaBackend::cross_entropy_backward(float* logits, const float* row_max,
                                         const float* sum_exp, const std::int32_t* targets,
                                         int vocab_begin, const float* row_weight, int rows,
                                         int cols, Stream s) {
    activate();
    check(k::cross_entropy_backward(logits, row_max, sum_exp, targets, vocab_begin, row_weight,
                                    rows, cols, native_stream(s)),
          "cross_entropy_backward");
}

void CudaBackend::softmax_rows(float* x, int rows, int cols, Stream s) {
    activate();
    check(k::softmax_rows(x, rows, cols, native_stream(s)), "softmax_rows");
}

void CudaBackend::gather_rows(const float* src, const std::int32_t* index, float* out, int count,
                              int cols, Stream s) {
    activate();
    check(k::gather_rows(src, index, out, count, cols, native_stream(s)), "gather_rows");
}

void CudaBackend::scatter_add_rows(const float* src, const std::int32_t* index,
                                   const float* weight, float* dst, int count, int cols,
                                   Stream s) {
    activate();
    check(k::scatter_add_rows(src, index, weight, dst, count, cols, native_stream(s)),
          "scatter_add_rows");
}

void CudaBackend::row_dot(const float* a, const float* b, float* out, int rows, int cols,
                          Stream s) {
    activate();
    check(k::row_dot(a, b, out, rows, cols, native_stream(s)), "row_dot");
}

void CudaBackend::adamw(float* param, const float* grad, float* m, float* v, std::size_t count,
                        const AdamW& hp, Stream s) {
    activate();
    // Bias corrections on the host, as CpuBackend computes them (float pow).
    const float bias1 = 1.0f - std::pow(hp.beta1, static_cast<float>(hp.step));
    const float bias2 = 1.0f - std::pow(hp.beta2, static_cast<float>(hp.step));
    check(k::adamw(param, grad, m, v, count, hp.lr, hp.beta1, hp.beta2, hp.eps, hp.weight_decay,
                   bias1, bias2, native_stream(s)),
          "adamw");
}

}  // namespace meshwork::engine
