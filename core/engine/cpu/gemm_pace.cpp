#include "core/engine/cpu/gemm_pace.h"

#include <cblas.h>

#include <algorithm>
#include <cstddef>
#include <ctime>

#include "core/engine/cpu/cpu_backend.h"

namespace meshwork::engine {

namespace {

double thread_cpu_s() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

std::vector<cost::GemmTiming> sgemm_grid() {
    std::vector<cost::GemmTiming> g;
    for (double m : {64.0, 256.0}) {
        for (double n : {16.0, 32.0, 64.0, 128.0, 256.0}) {
            for (double k : {16.0, 32.0, 64.0, 128.0, 256.0}) g.push_back({m, n, k, 0});
        }
    }
    return g;
}

std::vector<cost::GemmTiming> measure_sgemm(std::vector<cost::GemmTiming> grid, double min_cpu_s) {
    CpuBackend::set_blas_threads(1);
    for (auto& s : grid) {
        const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
        if (m <= 0 || n <= 0 || k <= 0) continue;
        std::vector<float> a(static_cast<std::size_t>(m) * k, 0.01f), b(static_cast<std::size_t>(k) * n, 0.02f),
            c(static_cast<std::size_t>(m) * n, 0.0f);
        auto call = [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f,
                        c.data(), n);
        };
        // Warm-up: operands in cache, OpenBLAS's buffers allocated.
        for (int i = 0; i < 20; ++i) call();
        // Batches of calls that take ~0.5 ms each (a call is 0.1-1000 µs here), their
        // median: a batch that a preemption's cache refill slowed is an outlier.
        const double t0 = thread_cpu_s();
        call();
        const double one = std::max(1e-7, thread_cpu_s() - t0);
        const int batch = std::clamp(static_cast<int>(5e-4 / one), 1, 10000);
        std::vector<double> per_call;
        double spent = 0;
        while (spent < min_cpu_s || per_call.size() < 5) {
            const double b0 = thread_cpu_s();
            for (int i = 0; i < batch; ++i) call();
            const double dt = thread_cpu_s() - b0;
            spent += dt;
            per_call.push_back(dt / batch);
        }
        std::nth_element(per_call.begin(), per_call.begin() + static_cast<std::ptrdiff_t>(per_call.size() / 2),
                         per_call.end());
        s.seconds = per_call[per_call.size() / 2];
    }
    return grid;
}

}  // namespace meshwork::engine
