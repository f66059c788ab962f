#include "core/engine/cuda/cuda_bench.h"

#include <cstdint>

#include "core/engine/cuda/cuda_backend.h"
#include "core/engine/cuda/cuda_check.h"
#include "core/engine/cuda/kernels/kernels.h"

namespace meshwork::engine {

namespace {

// Times `run` `iterations` times between two events on the compute stream.
template <typename Fn>
GemmTiming time_it(CudaBackend& be, int m, int n, int k, int iterations, Fn&& run) {
    const Stream s = be.compute_stream();
    for (int i = 0; i < iterations; ++i) run();  // warm-up: heuristics, clocks, caches
    const Event start = be.create_event(), end = be.create_event();
    be.record_event(start, s);
    for (int i = 0; i < iterations; ++i) run();
    be.record_event(end, s);
    be.synchronize_event(end);
    const double seconds =
        static_cast<double>(be.event_time_ns(end) - be.event_time_ns(start)) * 1e-9 / iterations;
    be.destroy_event(start);
    be.destroy_event(end);
    GemmTiming t;
    t.seconds_per_gemm = seconds;
    t.tflops = seconds > 0 ? 2.0 * m * n * k / seconds * 1e-12 : 0.0;
    return t;
}

}  // namespace

GemmTiming cuda_time_bf16_gemm(int device, int m, int n, int k, int iterations) {
    CudaBackend be(device, CudaBackendOptions{});
    const Stream s = be.compute_stream();
    const std::size_t na = static_cast<std::size_t>(m) * k, nb = static_cast<std::size_t>(k) * n,
                      nc = static_cast<std::size_t>(m) * n;
    DeviceBuffer f32 = be.allocate(std::max({na, nb}) * sizeof(float));
    DeviceBuffer a = be.allocate(na * 2), b = be.allocate(nb * 2), c = be.allocate(nc * 2);
    auto* f = static_cast<float*>(f32.ptr);
    be.fill_normal(f, na, 1, 0, 1.0f, s);
    cuda_detail::check_cuda(cuda_kernels::to_bf16(f, static_cast<std::uint16_t*>(a.ptr), na,
                                                  be.native_stream(s)),
                            "to_bf16", device);
    be.fill_normal(f, nb, 2, 0, 1.0f, s);
    cuda_detail::check_cuda(cuda_kernels::to_bf16(f, static_cast<std::uint16_t*>(b.ptr), nb,
                                                  be.native_stream(s)),
                            "to_bf16", device);
    const GemmTiming t = time_it(be, m, n, k, iterations, [&] {
        be.gemm_bf16(Transpose::No, Transpose::No, m, n, k, 1.0f,
                     static_cast<const std::uint16_t*>(a.ptr), k,
                     static_cast<const std::uint16_t*>(b.ptr), n, 0.0f,
                     static_cast<std::uint16_t*>(c.ptr), n, s);
    });
    for (DeviceBuffer x : {f32, a, b, c}) be.deallocate(x);
    return t;
}

GemmTiming cuda_time_f32_gemm(int device, CudaGemmMode mode, int m, int n, int k,
                              int iterations) {
    CudaBackendOptions o;
    o.gemm = mode;
    CudaBackend be(device, o);
    const Stream s = be.compute_stream();
    const std::size_t na = static_cast<std::size_t>(m) * k, nb = static_cast<std::size_t>(k) * n,
                      nc = static_cast<std::size_t>(m) * n;
    DeviceBuffer a = be.allocate(na * 4), b = be.allocate(nb * 4), c = be.allocate(nc * 4);
    be.fill_normal(static_cast<float*>(a.ptr), na, 1, 0, 1.0f, s);
    be.fill_normal(static_cast<float*>(b.ptr), nb, 2, 0, 1.0f, s);
    const GemmTiming t = time_it(be, m, n, k, iterations, [&] {
        be.gemm(Transpose::No, Transpose::No, m, n, k, 1.0f, static_cast<const float*>(a.ptr), k,
                static_cast<const float*>(b.ptr), n, 0.0f, static_cast<float*>(c.ptr), n, s);
    });
    for (DeviceBuffer x : {a, b, c}) be.deallocate(x);
    return t;
}

}  // namespace meshwork::engine
