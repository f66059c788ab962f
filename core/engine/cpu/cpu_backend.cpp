// CpuBackend: memory, streams and events, GEMM and the optimizer kernel. The elementwise,
// normalisation and softmax kernels are in cpu_kernels.cpp.
#include "core/engine/cpu/cpu_backend.h"

#include <cblas.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <new>

#include "core/common/error.h"
#include "core/engine/counter_rng.h"

namespace meshwork::engine {

namespace {
// 64-byte alignment: a cache line, and what AVX-512 loads want.
constexpr std::size_t kAlignmentBytes = 64;

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
}  // namespace

CpuBackend::CpuBackend(int device) : device_(device), blocks_(kAlignmentBytes) {}

CpuBackend::~CpuBackend() = default;

void CpuBackend::set_blas_threads(int threads) { openblas_set_num_threads(threads); }

std::string CpuBackend::name() const { return "cpu:" + std::to_string(device_); }

DeviceBuffer CpuBackend::allocate(std::size_t bytes) {
    if (bytes == 0) return {};
    void* p = blocks_.take(bytes);
    if (p == nullptr) {
        throw RuntimeError("cpu backend (device " + std::to_string(device_) +
                           "): out of memory allocating " + std::to_string(bytes) +
                           " bytes with " + std::to_string(in_use_) + " in use");
    }
    in_use_ += bytes;
    if (in_use_ > peak_) peak_ = in_use_;
    const DeviceBuffer b{p, bytes};
    // Reserved: what the backend holds from the system, the blocks in use and its cache.
    record_alloc(b, in_use_, in_use_ + blocks_.cached_bytes());
    return b;
}

void CpuBackend::deallocate(DeviceBuffer buffer) {
    if (buffer.ptr == nullptr) return;
    blocks_.give(buffer.ptr, buffer.bytes);
    in_use_ -= buffer.bytes;
    record_free(buffer, in_use_, in_use_ + blocks_.cached_bytes());
}

void CpuBackend::check_stream(Stream s) const {
    if (s.id < 0 || s.id >= streams_) {
        throw RuntimeError("cpu backend: unknown stream " + std::to_string(s.id));
    }
}

void CpuBackend::copy_to_device(void* dst, const void* host_src, std::size_t bytes, Stream s) {
    check_stream(s);
    if (bytes) std::memcpy(dst, host_src, bytes);
}

void CpuBackend::copy_to_host(void* host_dst, const void* src, std::size_t bytes, Stream s) {
    check_stream(s);
    if (bytes) std::memcpy(host_dst, src, bytes);
}

void CpuBackend::copy(void* dst, const void* src, std::size_t bytes, Stream s) {
    check_stream(s);
    if (bytes && dst != src) std::memmove(dst, src, bytes);
}

void CpuBackend::fill(float* dst, std::size_t count, float value, Stream s) {
    check_stream(s);
    for (std::size_t i = 0; i < count; ++i) dst[i] = value;
}

void CpuBackend::fill_normal(float* dst, std::size_t count, std::uint64_t seed,
                             std::uint64_t first_index, float stddev, Stream s) {
    check_stream(s);
    for (std::size_t i = 0; i < count; ++i) dst[i] = stddev * counter_normal(seed, first_index + i);
}

Stream CpuBackend::create_stream(const std::string& /*name*/) { return Stream{streams_++}; }

Event CpuBackend::create_event() {
    if (!free_events_.empty()) {
        const int id = free_events_.back();
        free_events_.pop_back();
        return Event{id};
    }
    event_ns_.push_back(0);
    return Event{static_cast<int>(event_ns_.size()) - 1};
}

void CpuBackend::destroy_event(Event e) {
    if (e.valid()) free_events_.push_back(e.id);
}

void CpuBackend::record_event(Event e, Stream s) {
    check_stream(s);
    event_ns_.at(static_cast<std::size_t>(e.id)) = now_ns();
}

// Work on every stream has completed when the call that enqueued it returned.
void CpuBackend::wait_event(Stream waiter, Event /*e*/) { check_stream(waiter); }
void CpuBackend::synchronize(Stream s) { check_stream(s); }
void CpuBackend::synchronize_event(Event /*e*/) {}

std::int64_t CpuBackend::event_time_ns(Event e) { return event_ns_.at(static_cast<std::size_t>(e.id)); }

void CpuBackend::gemm(Transpose ta, Transpose tb, int m, int n, int k, float alpha,
                      const float* a, int lda, const float* b, int ldb, float beta, float* c,
                      int ldc, Stream s) {
    check_stream(s);
    if (m == 0 || n == 0) return;
    if (k == 0) {
        // BLAS leaves C untouched only for beta 1; make k = 0 mean C = beta·C everywhere.
        for (int i = 0; i < m; ++i) {
            for (int j = 0; j < n; ++j) c[static_cast<std::size_t>(i) * ldc + j] *= beta;
        }
        return;
    }
    // The stored extent of each operand: rows of its leading dimension, the last one partial.
    const auto extent = [](Transpose t, int rows, int cols, int ld) {
        return t == Transpose::No ? static_cast<std::size_t>(rows - 1) * ld + cols
                                  : static_cast<std::size_t>(cols - 1) * ld + rows;
    };
    a = operand(a, extent(ta, m, k, lda), scratch_a_);
    b = operand(b, extent(tb, k, n, ldb), scratch_b_);
    cblas_sgemm(CblasRowMajor, ta == Transpose::Yes ? CblasTrans : CblasNoTrans,
                tb == Transpose::Yes ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb,
                beta, c, ldc);
}

const float* CpuBackend::operand(const float* p, std::size_t count, std::vector<float>& scratch) const {
    if (precision() != Precision::Bf16) return p;
    scratch.resize(count);
    round_to_bf16(p, scratch.data(), count);
    return scratch.data();
}

void CpuBackend::adamw(float* param, const float* grad, float* m, float* v, std::size_t count,
                       const AdamW& hp, Stream s) {
    check_stream(s);
    // Decoupled weight decay (Loshchilov & Hutter 2019), as torch.optim.AdamW: the decay
    // multiplies the parameter before the Adam update.
    const float bc1 = 1.0f - std::pow(hp.beta1, static_cast<float>(hp.step));
    const float bc2 = 1.0f - std::pow(hp.beta2, static_cast<float>(hp.step));
    const float decay = 1.0f - hp.lr * hp.weight_decay;
    for (std::size_t i = 0; i < count; ++i) {
        const float g = grad[i];
        m[i] = hp.beta1 * m[i] + (1.0f - hp.beta1) * g;
        v[i] = hp.beta2 * v[i] + (1.0f - hp.beta2) * g * g;
        const float mhat = m[i] / bc1;
        const float vhat = v[i] / bc2;
        param[i] = param[i] * decay - hp.lr * mhat / (std::sqrt(vhat) + hp.eps);
    }
}

}  // namespace meshwork::engine
