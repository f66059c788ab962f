// CudaBackend: memory, streams and events, host waits, GEMM, ranges. The kernel entry
// points are in cuda_backend_kernels.cpp.
#include "core/engine/cuda/cuda_backend.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "core/common/error.h"
#include "core/engine/cuda/cuda_check.h"
#include "core/engine/cuda/kernels/kernels.h"
#include "core/engine/nvtx/nvtx_ranges.h"
#include "core/engine/stop.h"

namespace meshwork::engine {

using cuda_detail::check_cuda;

namespace {

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Host waits: spin this many polls (a few microseconds each) before sleeping between polls,
// so short waits stay short and long ones leave the cores to other ranks.
constexpr int kSpinPolls = 2000;
constexpr auto kPollSleep = std::chrono::microseconds(20);
constexpr std::int64_t kHookPeriodNs = 1'000'000;
// Re-anchor event times when the anchor is this old: cudaEventElapsedTime returns float
// milliseconds, whose resolution degrades with the interval (60 ns at 1 s).
constexpr float kReanchorMs = 1000.0f;

cuda_detail::GemmPrecision precision_of(CudaGemmMode m) {
    switch (m) {
        case CudaGemmMode::Fp32: return cuda_detail::GemmPrecision::Fp32;
        case CudaGemmMode::Bf16: return cuda_detail::GemmPrecision::Bf16;
        case CudaGemmMode::Tf32: break;
    }
    return cuda_detail::GemmPrecision::Tf32;
}

}  // namespace

CudaBackend::CudaBackend(int device, const CudaBackendOptions& options)
    : device_(device), options_(options), alloc_(device, options.predicted_peak_bytes) {
    int count = 0;
    check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (device < 0 || device >= count) {
        throw RuntimeError("cuda: device " + std::to_string(device) + " does not exist (" +
                           std::to_string(count) + " GPUs visible)");
    }
    activate();
    cudaStream_t compute = nullptr;
    check(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking), "cudaStreamCreate");
    streams_.push_back(compute);
    stream_names_.emplace_back("compute");
    check(cudaEventCreateWithFlags(&sync_event_, cudaEventDisableTiming), "cudaEventCreate");
    check(cudaStreamCreateWithFlags(&clock_stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreate(&anchor_), "cudaEventCreate");
    check(cudaEventRecord(anchor_, clock_stream_), "cudaEventRecord");
    check(cudaEventSynchronize(anchor_), "cudaEventSynchronize");
    anchor_host_ns_ = now_ns();

    workspace_ = allocate(options_.gemm_workspace_bytes);
    lt_ = std::make_unique<cuda_detail::LtGemm>(
        device_, workspace_.ptr, workspace_.bytes,
        [this](std::size_t bytes, int slot, cudaStream_t stream) {
            // Per stream: a GEMM on another stream must not overwrite operands still in use.
            const auto it = std::find(streams_.begin(), streams_.end(), stream);
            return scratch(bytes, slot, static_cast<int>(it - streams_.begin()));
        });
}

CudaBackend::~CudaBackend() {
    activate();
    // Every stream drains first; after an NCCL abort its kernels have exited.
    cudaDeviceSynchronize();
    lt_.reset();
    for (auto& [key, buf] : scratch_) deallocate(buf);
    deallocate(workspace_);
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    cudaEventDestroy(sync_event_);
    cudaEventDestroy(anchor_);
    for (cudaStream_t s : streams_) cudaStreamDestroy(s);
    cudaStreamDestroy(clock_stream_);
    // alloc_ frees its blocks when destroyed, after this body.
}

std::string CudaBackend::name() const { return "cuda:" + std::to_string(device_); }

void CudaBackend::activate() const { check(cudaSetDevice(device_), "cudaSetDevice"); }

void CudaBackend::check(cudaError_t status, const char* what) const {
    check_cuda(status, what, device_);
}

cudaStream_t CudaBackend::native_stream(Stream s) const {
    if (s.id < 0 || s.id >= static_cast<int>(streams_.size())) {
        throw RuntimeError(name() + ": unknown stream " + std::to_string(s.id));
    }
    return streams_[static_cast<std::size_t>(s.id)];
}

cudaEvent_t CudaBackend::native_event(Event e) const {
    if (e.id < 0 || e.id >= static_cast<int>(events_.size())) {
        throw RuntimeError(name() + ": unknown event " + std::to_string(e.id));
    }
    return events_[static_cast<std::size_t>(e.id)];
}

// ---- memory --------------------------------------------------------------------------------

DeviceBuffer CudaBackend::allocate(std::size_t bytes) {
    if (bytes == 0) return {};
    activate();
    const DeviceBuffer b{alloc_.allocate(bytes, ranges_.empty() ? std::string() : "'" + ranges_.back() + "'"),
                         bytes};
    record_alloc(b, alloc_.bytes_in_use(), alloc_.bytes_reserved());
    return b;
}

void CudaBackend::deallocate(DeviceBuffer buffer) {
    if (buffer.ptr == nullptr) return;
    activate();
    alloc_.deallocate(buffer.ptr, streams_);
    record_free(buffer, alloc_.bytes_in_use(), alloc_.bytes_reserved());
}

void* CudaBackend::scratch(std::size_t bytes, int slot, int stream_id) {
    DeviceBuffer& buf = scratch_[{stream_id, slot}];
    if (buf.bytes < bytes) {
        deallocate(buf);
        buf = {};
        buf = allocate(bytes);
    }
    return buf.ptr;
}

const float* CudaBackend::bf16_operand(const float* p, std::size_t count, Stream s) {
    if (precision() != Precision::Bf16) return p;
    // Slots 0 and 1 hold the GEMM operands (cuda_gemm.cpp); 2 is this one's.
    auto* rounded = static_cast<float*>(scratch(count * sizeof(float), 2, s.id));
    check(cuda_kernels::round_bf16(p, rounded, count, native_stream(s)), "round_bf16");
    return rounded;
}

void CudaBackend::copy_to_device(void* dst, const void* host_src, std::size_t bytes, Stream s) {
    if (bytes == 0) return;
    activate();
    // From pageable memory the call returns once the source is staged: the caller may reuse
    // host_src at once, as the contract says.
    check(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, native_stream(s)),
          "cudaMemcpyAsync (to device)");
}

void CudaBackend::copy_to_host(void* host_dst, const void* src, std::size_t bytes, Stream s) {
    if (bytes == 0) return;
    activate();
    // Drain the stream with a polling wait first: a copy to pageable memory would otherwise
    // block inside the driver, out of reach of Ctrl-C and of the NCCL fault checks.
    synchronize(s);
    check(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, native_stream(s)),
          "cudaMemcpyAsync (to host)");
    synchronize(s);
}

void CudaBackend::copy(void* dst, const void* src, std::size_t bytes, Stream s) {
    if (bytes == 0 || dst == src) return;
    activate();
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, native_stream(s)),
          "cudaMemcpyAsync (device to device)");
}

// ---- streams and events ----------------------------------------------------------------------

Stream CudaBackend::create_stream(const std::string& stream_name) {
    activate();
    // Communication streams get the highest priority: their kernels are few and short and
    // everything else waits for them.
    int least = 0, greatest = 0;
    check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
    const bool comm = stream_name.find("comm") != std::string::npos ||
                      stream_name.find("nccl") != std::string::npos;
    cudaStream_t st = nullptr;
    check(cudaStreamCreateWithPriority(&st, cudaStreamNonBlocking, comm ? greatest : least),
          "cudaStreamCreate");
    streams_.push_back(st);
    stream_names_.push_back(stream_name);
    return Stream{static_cast<int>(streams_.size()) - 1};
}

Event CudaBackend::create_event() {
    if (!free_events_.empty()) {
        const int id = free_events_.back();
        free_events_.pop_back();
        return Event{id};
    }
    activate();
    cudaEvent_t e = nullptr;
    check(cudaEventCreate(&e), "cudaEventCreate");  // timing on: event_time_ns needs it
    events_.push_back(e);
    return Event{static_cast<int>(events_.size()) - 1};
}

void CudaBackend::destroy_event(Event e) {
    if (e.valid()) free_events_.push_back(e.id);
}

void CudaBackend::record_event(Event e, Stream s) {
    activate();
    check(cudaEventRecord(native_event(e), native_stream(s)), "cudaEventRecord");
}

void CudaBackend::wait_event(Stream waiter, Event e) {
    activate();
    check(cudaStreamWaitEvent(native_stream(waiter), native_event(e), 0), "cudaStreamWaitEvent");
}

void CudaBackend::synchronize(Stream s) {
    activate();
    check(cudaEventRecord(sync_event_, native_stream(s)), "cudaEventRecord");
    wait_for(sync_event_, "synchronize");
}

void CudaBackend::synchronize_event(Event e) { wait_for(native_event(e), "synchronize_event"); }

std::int64_t CudaBackend::event_time_ns(Event e) {
    activate();
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, anchor_, native_event(e)), "cudaEventElapsedTime");
    const std::int64_t t = anchor_host_ns_ + std::llround(static_cast<double>(ms) * 1e6);
    if (ms > kReanchorMs) {
        // New anchor on the clock stream, which never has work: the event completes at once,
        // and its offset from the old anchor carries the host time over.
        cudaEvent_t next = nullptr;
        check(cudaEventCreate(&next), "cudaEventCreate");
        check(cudaEventRecord(next, clock_stream_), "cudaEventRecord");
        wait_for(next, "event_time_ns");
        float step_ms = 0.0f;
        check(cudaEventElapsedTime(&step_ms, anchor_, next), "cudaEventElapsedTime");
        anchor_host_ns_ += std::llround(static_cast<double>(step_ms) * 1e6);
        cudaEventDestroy(anchor_);
        anchor_ = next;
    }
    return t;
}

// ---- host waits ------------------------------------------------------------------------------

int CudaBackend::add_wait_hook(std::function<void()> hook) {
    hooks_.emplace_back(next_hook_, std::move(hook));
    return next_hook_++;
}

void CudaBackend::remove_wait_hook(int id) {
    std::erase_if(hooks_, [id](const auto& h) { return h.first == id; });
}

void CudaBackend::run_hooks() {
    const std::int64_t t = now_ns();
    if (t - last_hook_ns_ < kHookPeriodNs) return;
    last_hook_ns_ = t;
    for (auto& [id, hook] : hooks_) hook();
}

void CudaBackend::wait_for(cudaEvent_t e, const char* what) {
    for (int polls = 0;; ++polls) {
        const cudaError_t st = cudaEventQuery(e);
        if (st == cudaSuccess) return;
        if (st != cudaErrorNotReady) check(st, what);
        run_hooks();
        throw_if_stopped(options_.stop);
        if (polls < kSpinPolls) {
            std::this_thread::yield();
        } else {
            std::this_thread::sleep_for(kPollSleep);
        }
    }
}

// ---- GEMM ------------------------------------------------------------------------------------

void CudaBackend::gemm(Transpose ta, Transpose tb, int m, int n, int k, float alpha,
                       const float* a, int lda, const float* b, int ldb, float beta, float* c,
                       int ldc, Stream s) {
    if (m == 0 || n == 0) return;
    activate();
    const cudaStream_t st = native_stream(s);
    if (k == 0) {
        // As the CPU backend: k = 0 means C = beta·C (cuBLASLt refuses k = 0).
        check(cuda_kernels::scale_2d(c, m, n, ldc, beta, st), "gemm (k = 0)");
        return;
    }
    lt_->gemm_f32(precision_of(options_.gemm), ta == Transpose::Yes, tb == Transpose::Yes, m, n,
                  k, alpha, a, lda, b, ldb, beta, c, ldc, st);
}

void CudaBackend::gemm_bf16(Transpose ta, Transpose tb, int m, int n, int k, float alpha,
                            const std::uint16_t* a, int lda, const std::uint16_t* b, int ldb,
                            float beta, std::uint16_t* c, int ldc, Stream s) {
    if (m == 0 || n == 0 || k == 0) return;
    activate();
    lt_->gemm_bf16(ta == Transpose::Yes, tb == Transpose::Yes, m, n, k, alpha, a, lda, b, ldb,
                   beta, c, ldc, native_stream(s));
}

// ---- numerics ----------------------------------------------------------------------------------

void CudaBackend::set_precision(Precision p) {
    Backend::set_precision(p);
    if (p == Precision::Bf16 && std::getenv("MESHWORK_CUDA_GEMM") == nullptr) options_.gemm = CudaGemmMode::Bf16;
}

// ---- ranges ------------------------------------------------------------------------------------

void CudaBackend::push_range(const std::string& range_name) {
    nvtx::push(range_name);
    ranges_.push_back(range_name);
}

void CudaBackend::pop_range() {
    if (ranges_.empty()) return;
    nvtx::pop();
    ranges_.pop_back();
}

}  // namespace meshwork::engine
