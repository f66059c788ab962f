// The CUDA backend's own machinery: availability messages, the caching allocator (reuse,
// peak, out-of-memory message), streams and events, host time of events, ranges.
#include "core/engine/cuda/cuda_backend.h"
#include "tests/gpu/gpu_test_support.h"

#include <chrono>

#include "core/common/error.h"

using namespace gpu_test;

class TestGpuBackend : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { MESHWORK_REQUIRE_GPUS(1); }

    void availability_lines() {
        QVERIFY(cuda_unavailable_reason(1).empty());
        std::string why;
        const int n = cuda_device_count(&why);
        const std::string too_many = cuda_unavailable_reason(n + 1);
        QVERIFY2(too_many.find("too few GPUs") != std::string::npos, too_many.c_str());
        QVERIFY(!cuda_device_summary(0).empty());
    }

    void allocator_reuses_and_reports_peak() {
        CudaBackend be(0, CudaBackendOptions{});
        const std::size_t base = be.bytes_in_use();
        DeviceBuffer a = be.allocate(3 << 20);
        DeviceBuffer b = be.allocate(1000);
        QCOMPARE(be.bytes_in_use(), base + (3u << 20) + 1000u);
        const std::size_t peak = be.peak_bytes_in_use();
        be.deallocate(a);
        be.deallocate(b);
        be.synchronize(be.compute_stream());
        const std::size_t mallocs = be.driver_allocations();
        // The same shapes again (a training step's second micro-batch): no driver call.
        for (int i = 0; i < 10; ++i) {
            DeviceBuffer x = be.allocate(3 << 20);
            DeviceBuffer y = be.allocate(900);
            be.deallocate(x);
            be.deallocate(y);
            be.synchronize(be.compute_stream());
        }
        QCOMPARE(be.driver_allocations(), mallocs);
        QCOMPARE(be.peak_bytes_in_use(), peak);
        QCOMPARE(be.bytes_in_use(), base);
    }

    void out_of_memory_names_op_and_bytes() {
        CudaBackendOptions options;
        options.predicted_peak_bytes = std::size_t{3} << 30;
        CudaBackend be(0, options);
        be.push_range("layer 5 fwd");
        try {
            (void)be.allocate(std::size_t{1} << 50);  // 1 PiB
            QFAIL("a 1 PiB allocation succeeded");
        } catch (const meshwork::RuntimeError& e) {
            const std::string m = e.what();
            QVERIFY2(m.find("out of device memory") != std::string::npos, e.what());
            QVERIFY2(m.find("layer 5 fwd") != std::string::npos, e.what());
            QVERIFY2(m.find("requested 1125899906842624 bytes") != std::string::npos, e.what());
            QVERIFY2(m.find("peak") != std::string::npos, e.what());
            QVERIFY2(m.find("predicted peak 3221225472 bytes") != std::string::npos, e.what());
        }
        be.pop_range();
        // Still usable afterwards.
        DeviceBuffer ok = be.allocate(1 << 20);
        be.deallocate(ok);
    }

    void streams_order_through_events() {
        CudaBackend be(0, CudaBackendOptions{});
        const Stream s0 = be.compute_stream(), s1 = be.create_stream("comm");
        const std::size_t n = 1 << 22;
        DeviceBuffer a = be.allocate(n * 4), b = be.allocate(n * 4);
        auto* pa = static_cast<float*>(a.ptr);
        auto* pb = static_cast<float*>(b.ptr);
        be.fill(pa, n, 1.0f, s0);
        be.scale(pa, n, 3.0f, s0);
        const Event e = be.create_event();
        be.record_event(e, s0);
        be.wait_event(s1, e);
        be.copy(pb, pa, n * 4, s1);  // must see the scaled values
        std::vector<float> host(n);
        be.copy_to_host(host.data(), pb, n * 4, s1);
        QCOMPARE(host.front(), 3.0f);
        QCOMPARE(host.back(), 3.0f);
        be.destroy_event(e);
        be.deallocate(a);
        be.deallocate(b);
    }

    void event_times_are_host_steady_clock() {
        CudaBackend be(0, CudaBackendOptions{});
        const Stream s = be.compute_stream();
        const auto host_before = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count();
        const Event start = be.create_event(), end = be.create_event();
        be.record_event(start, s);
        DeviceBuffer a = be.allocate(64 << 20);
        be.fill(static_cast<float*>(a.ptr), 16 << 20, 0.0f, s);
        be.record_event(end, s);
        be.synchronize_event(end);
        const auto host_after = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now().time_since_epoch())
                                    .count();
        const std::int64_t t0 = be.event_time_ns(start), t1 = be.event_time_ns(end);
        QVERIFY(t1 >= t0);
        // Within the host interval, give or take the anchor's own error (tens of µs).
        QVERIFY(t0 >= host_before - 1'000'000);
        QVERIFY(t1 <= host_after + 1'000'000);
        be.deallocate(a);
    }

    void ranges_nest() {
        CudaBackend be(0, CudaBackendOptions{});
        be.push_range("step 0");
        be.push_range("mb 1");
        be.pop_range();
        be.pop_range();
        be.pop_range();  // unbalanced pops are ignored
    }
};

QTEST_GUILESS_MAIN(TestGpuBackend)
#include "tst_gpu_backend.moc"
