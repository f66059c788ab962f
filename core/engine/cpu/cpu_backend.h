// The CPU backend: one emulated device per rank; memory is host memory, GEMMs are OpenBLAS
// cblas_sgemm, kernels are plain loops. Streams execute in order at the call (a legal
// implementation of the asynchronous contract of engine/backend.h): events complete when
// recorded and carry the host time of recording. In bf16 (engine/precision.h) the GEMM
// operands, the embedding rows and the norm weights are rounded to bf16 as they are read;
// sgemm then accumulates the exact products of bf16 values in fp32, as bf16 tensor cores do.
#pragma once

#include <atomic>
#include <mutex>
#include <vector>

#include "core/engine/backend.h"
#include "core/engine/cpu/block_cache.h"

namespace meshwork::engine {

class CpuBackend : public Backend {
public:
    // `device` is the emulated device index (the rank) used in names and traces.
    explicit CpuBackend(int device = 0);
    ~CpuBackend() override;
    CpuBackend(const CpuBackend&) = delete;
    CpuBackend& operator=(const CpuBackend&) = delete;

    // OpenBLAS threads for the whole process (one emulated rank per thread wants 1).
    static void set_blas_threads(int threads);

    [[nodiscard]] std::string name() const override;
    [[nodiscard]] int device_index() const override { return device_; }

    DeviceBuffer allocate(std::size_t bytes) override;
    void deallocate(DeviceBuffer buffer) override;
    [[nodiscard]] std::size_t bytes_in_use() const override { return in_use_; }
    [[nodiscard]] std::size_t peak_bytes_in_use() const override { return peak_; }
    void copy_to_device(void* dst, const void* host_src, std::size_t bytes, Stream s) override;
    void copy_to_host(void* host_dst, const void* src, std::size_t bytes, Stream s) override;
    void copy(void* dst, const void* src, std::size_t bytes, Stream s) override;
    void fill(float* dst, std::size_t count, float value, Stream s) override;
    void fill_normal(float* dst, std::size_t count, std::uint64_t seed, std::uint64_t first_index,
                     float stddev, Stream s) override;

    Stream create_stream(const std::string& name) override;
    Event create_event() override;
    void destroy_event(Event e) override;
    void record_event(Event e, Stream s) override;
    void wait_event(Stream waiter, Event e) override;
    void synchronize(Stream s) override;
    void synchronize_event(Event e) override;
    [[nodiscard]] std::int64_t event_time_ns(Event e) override;

    void gemm(Transpose ta, Transpose tb, int m, int n, int k, float alpha, const float* a,
              int lda, const float* b, int ldb, float beta, float* c, int ldc, Stream s) override;

    void axpy(float* y, const float* x, std::size_t count, float alpha, Stream s) override;
    void scale(float* x, std::size_t count, float alpha, Stream s) override;
    void rmsnorm_forward(const float* x, const float* w, float* y, float* rstd, int rows, int cols,
                         float eps, Stream s) override;
    void rmsnorm_backward(const float* dy, const float* x, const float* w, const float* rstd,
                          float* dx, float* dw, int rows, int cols, Stream s) override;
    void rope(float* x, const std::int32_t* pos, int rows, int heads, int head_dim, float theta,
              bool inverse, Stream s) override;
    void swiglu_forward(const float* gate, const float* up, float* out, std::size_t count,
                        Stream s) override;
    void swiglu_backward(const float* dout, const float* gate, const float* up, float* dgate,
                         float* dup, std::size_t count, Stream s) override;
    void masked_softmax_forward(float* scores, const MaskedSoftmaxArgs& a, Stream s) override;
    void softmax_backward(const float* probs, float* dp, int rows, int cols, float scale,
                          Stream s) override;
    void embedding_forward(const float* table, const std::int32_t* tokens, float* out, int count,
                           int hidden, int vocab_begin, int vocab_rows, Stream s) override;
    void embedding_backward(const float* dout, const std::int32_t* tokens, float* dtable,
                            int count, int hidden, int vocab_begin, int vocab_rows,
                            Stream s) override;
    void row_max(const float* x, float* out, int rows, int cols, Stream s) override;
    void row_sum_exp_and_target(const float* logits, const float* row_max,
                                const std::int32_t* targets, int vocab_begin, float* sum_exp,
                                float* target_logit, int rows, int cols, Stream s) override;
    void cross_entropy_backward(float* logits, const float* row_max, const float* sum_exp,
                                const std::int32_t* targets, int vocab_begin,
                                const float* row_weight, int rows, int cols, Stream s) override;
    void softmax_rows(float* x, int rows, int cols, Stream s) override;
    void gather_rows(const float* src, const std::int32_t* index, float* out, int count, int cols,
                     Stream s) override;
    void scatter_add_rows(const float* src, const std::int32_t* index, const float* weight,
                          float* dst, int count, int cols, Stream s) override;
    void row_dot(const float* a, const float* b, float* out, int rows, int cols,
                 Stream s) override;

    void adamw(float* param, const float* grad, float* m, float* v, std::size_t count,
               const AdamW& hp, Stream s) override;

private:
    void check_stream(Stream s) const;
    // `count` floats at p as the model reads them: p itself in fp32; in bf16 (precision.h) a
    // copy rounded to bf16 in `scratch`, valid until the next use of that scratch.
    const float* operand(const float* p, std::size_t count, std::vector<float>& scratch) const;

    int device_;
    std::size_t in_use_ = 0;
    std::size_t peak_ = 0;
    int streams_ = 1;
    std::vector<std::int64_t> event_ns_;  // host time of the last record, per event id
    std::vector<int> free_events_;
    std::vector<float> scratch_a_, scratch_b_, scratch_w_;  // bf16-rounded operands
    BlockCache blocks_;  // freed buffers, reused by size (block_cache.h)
};

}  // namespace meshwork::engine
