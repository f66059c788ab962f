// The CPU backend keeps freed buffers and hands them back by size (core/engine/cpu/
// block_cache.h): a rank's activations are allocated and freed every micro-batch, and glibc
// returned the larger ones to the kernel on every free, a per-op cost that grew with the
// workload's size and kept calibration from transferring between sizes (issue 28).
// Structural checks, no timing: reuse by size, live-byte accounting unchanged.
#include <QtTest>

#include <sys/resource.h>

#include <cstdint>
#include <vector>

#include "core/engine/cpu/block_cache.h"
#include "core/engine/cpu/cpu_backend.h"

using namespace meshwork::engine;

class TestCpuBlockCache : public QObject {
    Q_OBJECT
  private slots:
    void freed_buffer_is_reused_by_size() {
        CpuBackend be(0);
        // Above glibc's default mmap threshold (128 KiB), where blocks went back to the kernel.
        const std::size_t big = 512 * 1024;
        DeviceBuffer a = be.allocate(big);
        QVERIFY(a.ptr != nullptr);
        void* first = a.ptr;
        be.deallocate(a);
        DeviceBuffer b = be.allocate(big);
        QCOMPARE(b.ptr, first);  // the same block, not a fresh mapping
        DeviceBuffer c = be.allocate(big);
        QVERIFY(c.ptr != first);  // a live block is never handed out twice
        DeviceBuffer other = be.allocate(big + 64);
        QVERIFY(other.ptr != b.ptr && other.ptr != c.ptr);
        QCOMPARE(reinterpret_cast<std::uintptr_t>(other.ptr) % 64, std::uintptr_t{0});
        be.deallocate(b);
        be.deallocate(c);
        be.deallocate(other);
    }

    // What the cache is for: a micro-batch's buffers, allocated, written and freed again and
    // again, stop page-faulting after the first round. Without it glibc trims (or unmaps)
    // the freed blocks and every round faults all their pages back in. Minor page faults of
    // this thread are a count, not a time.
    void repeated_rounds_do_not_fault_pages_back_in() {
        CpuBackend be(0);
        const std::size_t floats = 64 * 1024;  // 256 KiB buffers, eight of them a round
        auto round = [&] {
            std::vector<DeviceBuffer> live;
            for (int i = 0; i < 8; ++i) {
                live.push_back(be.allocate(floats * sizeof(float)));
                be.fill(static_cast<float*>(live.back().ptr), floats, 1.0f, Stream{});
            }
            for (DeviceBuffer& b : live) be.deallocate(b);
        };
        round();  // first touch of every page
        rusage before{}, after{};
        getrusage(RUSAGE_THREAD, &before);
        for (int i = 0; i < 20; ++i) round();
        getrusage(RUSAGE_THREAD, &after);
        const long faults = after.ru_minflt - before.ru_minflt;
        // 20 rounds × 8 buffers × 64 pages = 10,240 pages if every round faulted them in.
        qInfo("minor page faults over 20 rounds: %ld", faults);
        QVERIFY2(faults < 256, "freed buffers went back to the kernel");
    }

    void accounting_counts_live_bytes_only() {
        CpuBackend be(0);
        DeviceBuffer a = be.allocate(4096);
        DeviceBuffer b = be.allocate(8192);
        QCOMPARE(be.bytes_in_use(), std::size_t{12288});
        be.deallocate(a);
        QCOMPARE(be.bytes_in_use(), std::size_t{8192});  // cached, not in use
        DeviceBuffer c = be.allocate(4096);
        QCOMPARE(be.bytes_in_use(), std::size_t{12288});
        QCOMPARE(be.peak_bytes_in_use(), std::size_t{12288});
        be.deallocate(b);
        be.deallocate(c);
        QCOMPARE(be.bytes_in_use(), std::size_t{0});
    }

    void cache_keeps_blocks_until_destroyed() {
        BlockCache cache(64);
        void* p = cache.take(1000);
        void* q = cache.take(1000);
        QVERIFY(p != nullptr && q != nullptr && p != q);
        cache.give(p, 1000);
        cache.give(q, 1000);
        QCOMPARE(cache.cached_bytes(), std::size_t{2000});
        void* r = cache.take(1000);
        QVERIFY(r == p || r == q);
        QCOMPARE(cache.cached_bytes(), std::size_t{1000});
        cache.give(r, 1000);  // the destructor frees what it holds
    }
};

QTEST_APPLESS_MAIN(TestCpuBlockCache)
#include "tst_cpu_block_cache.moc"
