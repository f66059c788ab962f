// The NCCL communicator in one process, one thread per GPU: every collective on uneven
// sizes, split groups, point-to-point both ways at once with messages beyond NCCL's eager
// buffers (the pipeline pattern that must not deadlock), barrier, abort and timeout.
// Worlds use every visible GPU up to 4; tests that need two ranks skip on one GPU.
#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "core/engine/nccl/nccl_factory.h"
#include "tests/gpu/gpu_test_support.h"

using namespace gpu_test;

namespace {

int world_size() {
    std::string why;
    return std::min(4, cuda_device_count(&why));
}

// Runs fn(rank, backend, world) on `size` threads; rethrows the first failure.
void run_world(int size, double timeout_s,
               const std::function<void(int, Backend&, Communicator&)>& fn) {
    auto world = NcclInprocWorld::create(size, timeout_s);
    std::mutex mu;
    std::exception_ptr first;
    std::vector<std::thread> threads;
    for (int r = 0; r < size; ++r) {
        threads.emplace_back([&, r] {
            try {
                auto be = make_cuda_backend(r);
                {
                    auto comm = world->communicator(r, *be);
                    fn(r, *be, *comm);
                }
            } catch (...) {
                std::lock_guard lk(mu);
                if (!first) first = std::current_exception();
            }
        });
    }
    for (auto& t : threads) t.join();
    if (first) std::rethrow_exception(first);
}

std::vector<float> iota_for(int rank, std::size_t n) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(rank * 1000 + static_cast<int>(i % 1000));
    return v;
}

float* upload(Backend& be, const std::vector<float>& h) {
    auto* p = static_cast<float*>(be.allocate(std::max<std::size_t>(1, h.size()) * 4).ptr);
    if (!h.empty()) be.copy_to_device(p, h.data(), h.size() * 4, be.compute_stream());
    return p;
}

std::vector<float> fetch(Backend& be, const float* p, std::size_t n) {
    std::vector<float> h(n);
    be.copy_to_host(h.data(), p, n * 4, be.compute_stream());
    return h;
}

}  // namespace

class TestGpuNccl : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { MESHWORK_REQUIRE_GPUS(1); }

    void collectives_uneven() {
        const int n = world_size();
        std::atomic<int> bad{0};
        run_world(n, 60.0, [&](int r, Backend& be, Communicator& c) {
            const Stream s = be.compute_stream();
            // all_reduce sum and max, in place.
            const std::size_t count = 1'000'003;
            float* x = upload(be, iota_for(r, count));
            c.all_reduce(x, x, count, ReduceOp::Sum, s);
            auto h = fetch(be, x, count);
            float expect = 0;
            for (int q = 0; q < n; ++q) expect += static_cast<float>(q * 1000 + 5);
            if (h[5] != expect) ++bad;
            // all_gather_v with uneven counts (rank q contributes q + 1 floats).
            std::vector<std::size_t> counts;
            std::size_t total = 0;
            for (int q = 0; q < n; ++q) {
                counts.push_back(static_cast<std::size_t>(q + 1) * 1000);
                total += counts.back();
            }
            float* mine = upload(be, std::vector<float>(counts[static_cast<std::size_t>(r)], static_cast<float>(r)));
            float* all = upload(be, std::vector<float>(total, -1.0f));
            c.all_gather_v(mine, all, counts, s);
            auto g = fetch(be, all, total);
            std::size_t off = 0;
            for (int q = 0; q < n; ++q) {
                if (g[off] != static_cast<float>(q) || g[off + counts[static_cast<std::size_t>(q)] - 1] != static_cast<float>(q)) ++bad;
                off += counts[static_cast<std::size_t>(q)];
            }
            // reduce_scatter_v: every rank sends all ones; segment q sums to n.
            float* ones = upload(be, std::vector<float>(total, 1.0f));
            float* seg = upload(be, std::vector<float>(counts[static_cast<std::size_t>(r)], 0.0f));
            c.reduce_scatter_v(ones, seg, counts, s);
            auto sg = fetch(be, seg, counts[static_cast<std::size_t>(r)]);
            if (sg.front() != static_cast<float>(n) || sg.back() != static_cast<float>(n)) ++bad;
            // all_to_all_v: rank r sends (p + 1) floats of value r·10 + p to rank p.
            std::vector<std::size_t> sc, rc;
            std::vector<float> sendv;
            for (int p = 0; p < n; ++p) {
                sc.push_back(static_cast<std::size_t>(p + 1));
                rc.push_back(static_cast<std::size_t>(r + 1));
                for (int i = 0; i <= p; ++i) sendv.push_back(static_cast<float>(r * 10 + p));
            }
            float* sb = upload(be, sendv);
            float* rb = upload(be, std::vector<float>(static_cast<std::size_t>(n * (r + 1)), -1.0f));
            c.all_to_all_v(sb, sc, rb, rc, s);
            auto rv = fetch(be, rb, static_cast<std::size_t>(n * (r + 1)));
            for (int p = 0; p < n; ++p) {
                if (rv[static_cast<std::size_t>(p * (r + 1))] != static_cast<float>(p * 10 + r)) ++bad;
            }
            // broadcast from the last rank.
            float* bb = upload(be, std::vector<float>(77, static_cast<float>(r)));
            c.broadcast(bb, 77, n - 1, s);
            if (fetch(be, bb, 77)[76] != static_cast<float>(n - 1)) ++bad;
            c.barrier();
            for (float* p : {x, mine, all, ones, seg, sb, rb, bb}) be.deallocate({p, 0});
        });
        QCOMPARE(bad.load(), 0);
    }

    void split_groups() {
        const int n = world_size();
        if (n < 2) QSKIP("needs 2 GPUs");
        std::atomic<int> bad{0};
        run_world(n, 60.0, [&](int r, Backend& be, Communicator& c) {
            // Even and odd ranks; rank n-1 left out when n is odd... keep everyone in a group.
            std::vector<std::vector<int>> groups(2);
            for (int q = 0; q < n; ++q) groups[static_cast<std::size_t>(q % 2)].push_back(q);
            auto sub = c.split(groups, "parity");
            if (!sub || sub->size() != static_cast<int>(groups[static_cast<std::size_t>(r % 2)].size())) {
                ++bad;
                return;
            }
            float* x = upload(be, {static_cast<float>(r)});
            sub->all_reduce(x, x, 1, ReduceOp::Max, be.compute_stream());
            const int expect = (n - 1) % 2 == r % 2 ? n - 1 : n - 2;
            if (fetch(be, x, 1)[0] != static_cast<float>(expect)) ++bad;
            be.deallocate({x, 0});
        });
        QCOMPARE(bad.load(), 0);
    }

    void p2p_both_ways_large() {
        const int n = world_size();
        if (n < 2) QSKIP("needs 2 GPUs");
        std::atomic<int> bad{0};
        // 16 MiB messages: beyond NCCL's eager buffers, so a send needs its recv posted.
        const std::size_t count = 4u << 20;
        run_world(n, 60.0, [&](int r, Backend& be, Communicator& c) {
            const Stream s = be.compute_stream();
            float* out = upload(be, std::vector<float>(count, static_cast<float>(r)));
            float* from_prev = upload(be, std::vector<float>(count, -1.0f));
            float* from_next = upload(be, std::vector<float>(count, -1.0f));
            const int next = (r + 1) % n, prev = (r + n - 1) % n;
            // Every rank sends both ways before receiving: the 1F1B/ring pattern.
            c.send(out, count, next, 0, s);
            c.send(out, count, prev, 1, s);
            c.recv(from_prev, count, prev, 0, s);
            c.recv(from_next, count, next, 1, s);
            if (fetch(be, from_prev, count).back() != static_cast<float>(prev)) ++bad;
            if (fetch(be, from_next, count).back() != static_cast<float>(next)) ++bad;
            // To self.
            c.send(out, 10, r, 5, s);
            c.recv(from_prev, 10, r, 5, s);
            if (fetch(be, from_prev, 10)[9] != static_cast<float>(r)) ++bad;
            for (float* p : {out, from_prev, from_next}) be.deallocate({p, 0});
        });
        QCOMPARE(bad.load(), 0);
    }

    void abort_reaches_every_rank() {
        const int n = world_size();
        if (n < 2) QSKIP("needs 2 GPUs");
        std::atomic<int> comm_errors{0};
        try {
            run_world(n, 30.0, [&](int r, Backend& be, Communicator& c) {
                float* x = upload(be, {1.0f});
                try {
                    if (r == 0) {
                        c.abort("rank 0 failed on purpose");
                        throw CommError("rank 0 failed on purpose");
                    }
                    // The others block in a collective rank 0 never joins.
                    c.all_reduce(x, x, 1, ReduceOp::Sum, be.compute_stream());
                    be.synchronize(be.compute_stream());
                } catch (const CommError& e) {
                    if (std::string(e.what()).find("on purpose") != std::string::npos) ++comm_errors;
                }
                be.deallocate({x, 0});
            });
        } catch (const std::exception&) {
        }
        QCOMPARE(comm_errors.load(), n);
    }

    void timeout_names_the_collective() {
        const int n = world_size();
        if (n < 2) QSKIP("needs 2 GPUs");
        std::atomic<int> timed_out{0};
        try {
            run_world(2, 3.0, [&](int r, Backend& be, Communicator& c) {
                float* x = upload(be, {1.0f});
                try {
                    if (r == 1) {
                        c.all_reduce(x, x, 1, ReduceOp::Sum, be.compute_stream());
                        be.synchronize(be.compute_stream());
                    } else {
                        // Rank 0 never joins (no NCCL call at all until rank 1 timed out);
                        // its next call then fails with rank 1's reason.
                        std::this_thread::sleep_for(std::chrono::seconds(6));
                        c.barrier();
                    }
                } catch (const CommError& e) {
                    if (std::string(e.what()).find("all_reduce(world)") != std::string::npos) ++timed_out;
                }
                be.deallocate({x, 0});
            });
        } catch (const std::exception&) {
        }
        QVERIFY(timed_out.load() >= 1);
    }
};

QTEST_GUILESS_MAIN(TestGpuNccl)
#include "tst_gpu_nccl.moc"
