// NCCL bus bandwidth per collective across the GPUs of this machine, one thread per GPU,
// through the engine's Communicator (bench/gpu-check.sh runs it when there are 2+ GPUs).
// busbw follows nccl-tests: all_reduce algbw·2(n−1)/n, all_gather / reduce_scatter /
// all_to_all algbw·(n−1)/n, algbw = bytes of the full buffer / time. One line per case:
//   nccl all_reduce ranks 8 bytes 268435456 time_s 0.00152 algbw_gbps 176.6 busbw_gbps 309.1
// Usage: bench_gpu_nccl [--max-bytes N]. Skips (exit 0) with fewer than 2 GPUs.
#include <cstdio>
#include <cstring>
#include <string>

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/engine/cuda/cuda_runtime_probe.h"
#include "core/engine/nccl/nccl_factory.h"

int main(int argc, char** argv) {
    using namespace meshwork::engine;
    std::size_t max_bytes = std::size_t{1} << 30;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc) {
            max_bytes = std::stoull(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: bench_gpu_nccl [--max-bytes N]\n");
            return 2;
        }
    }
    std::string why;
    const int n = cuda_device_count(&why);
    if (n < 2) {
        std::printf("skipped: %s\n", n == 0 ? why.c_str() : "one GPU: no collective to measure");
        return 0;
    }
    auto world = NcclInprocWorld::create(n, 120.0);
    std::mutex mu;
    std::exception_ptr failure;
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
        threads.emplace_back([&, r] {
            try {
                auto be = make_cuda_backend(r);
                auto comm = world->communicator(r, *be);
                const Stream s = be->create_stream("comm");
                const std::size_t max_floats = max_bytes / 4;
                DeviceBuffer a = be->allocate(max_floats * 4), b = be->allocate(max_floats * 4);
                be->fill(static_cast<float*>(a.ptr), max_floats, 1.0f, s);
                const Event start = be->create_event(), end = be->create_event();
                const char* names[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
                for (const char* name : names) {
                    for (std::size_t bytes = std::size_t{1} << 20; bytes <= max_bytes; bytes *= 16) {
                        const std::size_t floats = bytes / 4, per_rank = floats / static_cast<std::size_t>(n);
                        auto* pa = static_cast<float*>(a.ptr);
                        auto* pb = static_cast<float*>(b.ptr);
                        auto once = [&] {
                            const std::string op = name;
                            if (op == "all_reduce") {
                                comm->all_reduce(pa, pb, floats, ReduceOp::Sum, s);
                            } else if (op == "all_gather") {
                                comm->all_gather(pa, pb, per_rank, s);
                            } else if (op == "reduce_scatter") {
                                comm->reduce_scatter(pa, pb, per_rank, s);
                            } else {
                                const std::vector<std::size_t> c(static_cast<std::size_t>(n), per_rank);
                                comm->all_to_all_v(pa, c, pb, c, s);
                            }
                        };
                        const int iterations = bytes >= (std::size_t{256} << 20) ? 5 : 20;
                        for (int i = 0; i < 3; ++i) once();
                        be->record_event(start, s);
                        for (int i = 0; i < iterations; ++i) once();
                        be->record_event(end, s);
                        be->synchronize_event(end);
                        const double t = static_cast<double>(be->event_time_ns(end) - be->event_time_ns(start)) *
                                         1e-9 / iterations;
                        if (r == 0) {
                            const double algbw = static_cast<double>(bytes) / t * 1e-9;
                            const double factor = std::string(name) == "all_reduce"
                                                      ? 2.0 * (n - 1) / n
                                                      : static_cast<double>(n - 1) / n;
                            std::lock_guard lk(mu);
                            std::printf("nccl %s ranks %d bytes %zu time_s %.6f algbw_gbps %.1f busbw_gbps %.1f\n",
                                        name, n, bytes, t, algbw, algbw * factor);
                            std::fflush(stdout);
                        }
                    }
                }
                be->deallocate(a);
                be->deallocate(b);
            } catch (...) {
                std::lock_guard lk(mu);
                if (!failure) failure = std::current_exception();
            }
        });
    }
    for (auto& t : threads) t.join();
    if (failure) {
        try {
            std::rethrow_exception(failure);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "error: %s\n", e.what());
            return 1;
        }
    }
    return 0;
}
