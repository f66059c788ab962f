// Shared by the GPU suites: skipping without a GPU, and a CPU/GPU twin that runs the same op
// on both backends from the same host data so results can be compared.
#pragma once

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/counter_rng.h"
#include "core/engine/cpu/cpu_backend.h"
#include "core/engine/cuda/cuda_runtime_probe.h"

// Skips the rest of the calling test function (in initTestCase: the whole suite) when fewer
// than `n` GPUs are usable, naming why.
#define MESHWORK_REQUIRE_GPUS(n)                                                              \
    do {                                                                                      \
        std::string why_;                                                                     \
        const int have_ = meshwork::engine::cuda_device_count(&why_);                         \
        if (have_ == 0) QSKIP(qPrintable(QString::fromStdString(why_)));                      \
        if (have_ < (n)) {                                                                    \
            QSKIP(qPrintable(QString("needs %1 GPUs, %2 visible").arg(n).arg(have_)));        \
        }                                                                                     \
    } while (0)

namespace gpu_test {

using namespace meshwork::engine;

// Deterministic test data: normal(0, scale) from the engine's counter stream.
inline std::vector<float> randn(std::size_t n, std::uint64_t seed, float scale = 1.0f) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = scale * counter_normal(seed, i);
    return v;
}

// The largest |a − b| relative to max(1, max |b|) over the vectors.
inline double max_rel_error(const std::vector<float>& a, const std::vector<float>& b) {
    double mag = 1.0, err = 0.0;
    for (float x : b) mag = std::max(mag, static_cast<double>(std::fabs(x)));
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
        err = std::max(err, std::fabs(static_cast<double>(a[i]) - b[i]));
    }
    return a.size() == b.size() ? err / mag : 1e30;
}

// A pair of device pointers: the CPU one first.
template <typename T>
struct Both {
    T* cpu = nullptr;
    T* gpu = nullptr;
};

class Twin {
public:
    explicit Twin(CudaGemmMode mode = CudaGemmMode::Fp32) : cpu_(0) {
        CudaBackendOptions o;
        o.gemm = mode;
        gpu_ = make_cuda_backend(0, o);
    }
    ~Twin() {
        for (auto& [be, buf] : owned_) be->deallocate(buf);
    }
    Twin(const Twin&) = delete;
    Twin& operator=(const Twin&) = delete;

    Backend& cpu() { return cpu_; }
    Backend& gpu() { return *gpu_; }

    template <typename T>
    Both<T> up(const std::vector<T>& host) {
        return {put<T>(cpu_, host), put<T>(*gpu_, host)};
    }
    template <typename T>
    Both<T> zeros(std::size_t n) {
        return up(std::vector<T>(n, T{}));
    }
    // Runs `op(backend, pointers...)` on both backends: op receives the backend and a bool
    // "is gpu" so it can pick the right pointer of each Both.
    template <typename Op>
    void run(Op&& op) {
        op(static_cast<Backend&>(cpu_), false);
        op(*gpu_, true);
    }
    template <typename T>
    std::pair<std::vector<T>, std::vector<T>> down(Both<T> p, std::size_t n) {
        std::vector<T> c(n), g(n);
        cpu_.copy_to_host(c.data(), p.cpu, n * sizeof(T), cpu_.compute_stream());
        gpu_->copy_to_host(g.data(), p.gpu, n * sizeof(T), gpu_->compute_stream());
        return {c, g};
    }
    // GPU result vs CPU reference.
    double error(Both<float> p, std::size_t n) {
        auto [c, g] = down(p, n);
        return max_rel_error(g, c);
    }

private:
    template <typename T>
    T* put(Backend& be, const std::vector<T>& host) {
        DeviceBuffer b = be.allocate(std::max<std::size_t>(1, host.size()) * sizeof(T));
        owned_.emplace_back(&be, b);
        if (!host.empty()) be.copy_to_device(b.ptr, host.data(), host.size() * sizeof(T), be.compute_stream());
        return static_cast<T*>(b.ptr);
    }

    CpuBackend cpu_;
    std::unique_ptr<Backend> gpu_;
    std::vector<std::pair<Backend*, DeviceBuffer>> owned_;
};

// Picks the pointer of a Both for the backend an op runs on.
template <typename T>
T* on(const Both<T>& p, bool gpu) {
    return gpu ? p.gpu : p.cpu;
}

}  // namespace gpu_test
