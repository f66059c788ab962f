// The CUDA backend: one GPU of one rank (engine/backend.h). Memory through a caching
// allocator, streams as non-blocking CUDA streams (Stream{0} is a created stream, not the
// legacy default one, so ranks sharing a process never serialise on it), events as timing
// CUDA events, GEMMs through cuBLASLt, every other op one of our kernels
// (cuda/kernels/kernels.h). Host waits poll instead of blocking in the driver, so that Ctrl-C
// and the NCCL communicator's fault checks (wait hooks) run while the host waits.
//
// Only CUDA-side code includes this header (it includes the CUDA runtime's); others use
// cuda_runtime_probe.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/backend.h"
#include "core/engine/cuda/cuda_allocator.h"
#include "core/engine/cuda/cuda_gemm.h"
#include "core/engine/cuda/cuda_runtime_probe.h"

namespace meshwork::engine {

class CudaBackend final : public Backend {
public:
    CudaBackend(int device, const CudaBackendOptions& options);
    ~CudaBackend() override;
    CudaBackend(const CudaBackend&) = delete;
    CudaBackend& operator=(const CudaBackend&) = delete;

    [[nodiscard]] std::string name() const override;
    [[nodiscard]] int device_index() const override { return device_; }

    DeviceBuffer allocate(std::size_t bytes) override;
    void deallocate(DeviceBuffer buffer) override;
    [[nodiscard]] std::size_t bytes_in_use() const override { return alloc_.bytes_in_use(); }
    [[nodiscard]] std::size_t peak_bytes_in_use() const override { return alloc_.peak_bytes_in_use(); }
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

    // A bf16 layout: GEMM operands cast to CUDA_R_16BF (CudaGemmMode::Bf16) unless
    // MESHWORK_CUDA_GEMM chose the mode.
    void set_precision(Precision p) override;
    void push_range(const std::string& name) override;
    void pop_range() override;

    void adamw(float* param, const float* grad, float* m, float* v, std::size_t count,
               const AdamW& hp, Stream s) override;

    // ---- CUDA-side extensions (NCCL communicator, benchmarks, tests) ------------------------
    [[nodiscard]] cudaStream_t native_stream(Stream s) const;
    [[nodiscard]] const std::vector<cudaStream_t>& native_streams() const { return streams_; }
    // Makes this backend's GPU current on the calling thread.
    void activate() const;
    // Called about once a millisecond while the host waits for the device; a hook may throw
    // (the NCCL communicator throws CommError on a fault or timeout). Returns an id.
    int add_wait_hook(std::function<void()> hook);
    void remove_wait_hook(int id);
    // Polls `e` until it completed, running the wait hooks and the Ctrl-C check.
    void wait_for(cudaEvent_t e, const char* what);
    // bf16 GEMM (raw 16-bit storage), fp32 accumulation: the benchmark's path.
    void gemm_bf16(Transpose ta, Transpose tb, int m, int n, int k, float alpha,
                   const std::uint16_t* a, int lda, const std::uint16_t* b, int ldb, float beta,
                   std::uint16_t* c, int ldc, Stream s);
    [[nodiscard]] std::size_t bytes_reserved() const { return alloc_.bytes_reserved(); }
    [[nodiscard]] std::size_t driver_allocations() const { return alloc_.driver_allocations(); }
    [[nodiscard]] CudaGemmMode gemm_mode() const { return options_.gemm; }
    [[nodiscard]] const std::stop_token& stop_token() const { return options_.stop; }

private:
    void check(cudaError_t status, const char* what) const;
    [[nodiscard]] cudaEvent_t native_event(Event e) const;
    void* scratch(std::size_t bytes, int slot, int stream_id);
    // `count` floats at p as the model reads them: p in fp32, a bf16-rounded copy in this
    // stream's scratch in bf16 (engine/precision.h; the norm weights).
    const float* bf16_operand(const float* p, std::size_t count, Stream s);
    void run_hooks();

    int device_;
    CudaBackendOptions options_;
    cuda_detail::CachingAllocator alloc_;
    std::vector<cudaStream_t> streams_;
    std::vector<std::string> stream_names_;
    std::vector<cudaEvent_t> events_;
    std::vector<int> free_events_;
    cudaEvent_t sync_event_ = nullptr;
    // Host steady-clock time of a device event, for event_time_ns: CUDA only measures
    // intervals between events, so times are anchor_host_ns_ + elapsed(anchor_, e).
    cudaEvent_t anchor_ = nullptr;
    cudaStream_t clock_stream_ = nullptr;  // never given work: anchors complete at once
    std::int64_t anchor_host_ns_ = 0;
    DeviceBuffer workspace_;
    std::unique_ptr<cuda_detail::LtGemm> lt_;
    std::map<std::pair<int, int>, DeviceBuffer> scratch_;  // (stream, slot) → bf16 operands
    std::vector<std::pair<int, std::function<void()>>> hooks_;
    int next_hook_ = 0;
    std::int64_t last_hook_ns_ = 0;
    std::vector<std::string> ranges_;  // open push_range names, innermost last
};

}  // namespace meshwork::engine
