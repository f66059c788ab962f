// The communicator test suite, shared by the in-process test (tst_engine_comm) and the MPI
// test (tests/mpi): every collective on uneven sizes, in place, on sub-groups, and
// point-to-point order. Each check returns "" or what went wrong, so that the same code runs
// under Qt Test threads and under mpirun.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/engine/backend.h"
#include "core/engine/communicator.h"

namespace meshwork::engine::testing {

inline std::string expect_equal(const std::vector<float>& got, const std::vector<float>& want,
                                const std::string& what, int rank) {
    if (got.size() != want.size()) return what + ": size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (got[i] != want[i]) {
            return what + " on rank " + std::to_string(rank) + ": element " + std::to_string(i) + " is " +
                   std::to_string(got[i]) + ", expected " + std::to_string(want[i]);
        }
    }
    return "";
}

// Runs every check on `world` (size ≥ 2); returns the first failure or "".
inline std::string run_comm_suite(Communicator& world, Backend& be) {
    const int n = world.size(), r = world.rank();
    const Stream s = be.compute_stream();
    std::string err;
    // All-reduce (sum, in place and out of place, max) on sizes that do not divide by n and
    // that span several of the in-process communicator's tiles.
    for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{3 * 4096 + 5}}) {
        std::vector<float> send(count), recv(count, -1), want(count);
        for (std::size_t i = 0; i < count; ++i) {
            send[i] = static_cast<float>(r * 1000 + static_cast<int>(i % 1000));
            want[i] = static_cast<float>(1000 * n * (n - 1) / 2 + n * static_cast<int>(i % 1000));
        }
        world.all_reduce(send.data(), recv.data(), count, ReduceOp::Sum, s);
        if (!(err = expect_equal(recv, want, "all_reduce(" + std::to_string(count) + ")", r)).empty()) return err;
        world.all_reduce(send.data(), send.data(), count, ReduceOp::Sum, s);
        if (!(err = expect_equal(send, want, "all_reduce in place", r)).empty()) return err;
    }
    {
        std::vector<float> v = {static_cast<float>(r), static_cast<float>(-r), 5.0f};
        world.all_reduce(v.data(), v.data(), v.size(), ReduceOp::Max, s);
        if (!(err = expect_equal(v, {static_cast<float>(n - 1), 0.0f, 5.0f}, "all_reduce max", r)).empty()) return err;
    }
    // All-gather with rank-dependent counts.
    {
        std::vector<std::size_t> counts;
        std::vector<float> want;
        for (int p = 0; p < n; ++p) {
            counts.push_back(static_cast<std::size_t>(p + 1));
            for (int i = 0; i <= p; ++i) want.push_back(static_cast<float>(p * 10 + i));
        }
        std::vector<float> send;
        for (int i = 0; i <= r; ++i) send.push_back(static_cast<float>(r * 10 + i));
        std::vector<float> recv(want.size(), -1);
        world.all_gather_v(send.data(), recv.data(), counts, s);
        if (!(err = expect_equal(recv, want, "all_gather_v", r)).empty()) return err;
    }
    // Reduce-scatter with uneven segments.
    {
        std::vector<std::size_t> counts;
        std::size_t total = 0;
        for (int p = 0; p < n; ++p) {
            counts.push_back(static_cast<std::size_t>(2 * p + 1));
            total += counts.back();
        }
        std::vector<float> send(total);
        for (std::size_t i = 0; i < total; ++i) send[i] = static_cast<float>(static_cast<int>(i) + r);
        std::size_t off = 0;
        for (int p = 0; p < r; ++p) off += counts[static_cast<std::size_t>(p)];
        std::vector<float> want(counts[static_cast<std::size_t>(r)]);
        for (std::size_t i = 0; i < want.size(); ++i) want[i] = static_cast<float>(n * static_cast<int>(off + i) + n * (n - 1) / 2);
        std::vector<float> recv(want.size(), -1);
        world.reduce_scatter_v(send.data(), recv.data(), counts, s);
        if (!(err = expect_equal(recv, want, "reduce_scatter_v", r)).empty()) return err;
    }
    // All-to-all with counts (r + p) % 3, zeros included.
    {
        std::vector<std::size_t> sc, rc;
        std::vector<float> send, want;
        for (int p = 0; p < n; ++p) {
            sc.push_back(static_cast<std::size_t>((r + p) % 3));
            for (int i = 0; i < (r + p) % 3; ++i) send.push_back(static_cast<float>(r * 100 + p * 10 + i));
            rc.push_back(static_cast<std::size_t>((p + r) % 3));
            for (int i = 0; i < (p + r) % 3; ++i) want.push_back(static_cast<float>(p * 100 + r * 10 + i));
        }
        std::vector<float> recv(want.size(), -1);
        world.all_to_all_v(send.data(), sc, recv.data(), rc, s);
        if (!(err = expect_equal(recv, want, "all_to_all_v", r)).empty()) return err;
    }
    // Broadcast from the last rank.
    {
        std::vector<float> v(13, static_cast<float>(r));
        world.broadcast(v.data(), v.size(), n - 1, s);
        if (!(err = expect_equal(v, std::vector<float>(13, static_cast<float>(n - 1)), "broadcast", r)).empty()) return err;
    }
    // Send/recv around a ring: two messages with one tag arrive in order; a message to the
    // previous rank with another tag does not overtake them.
    {
        const int next = (r + 1) % n, prev = (r - 1 + n) % n;
        std::vector<float> a(5, static_cast<float>(r)), b(3, static_cast<float>(r + 100));
        world.send(a.data(), a.size(), next, 7, s);
        world.send(b.data(), b.size(), next, 7, s);
        world.send(b.data(), 1, prev, 9, s);
        std::vector<float> ra(5), rb(3), rx(1);
        world.recv(ra.data(), ra.size(), prev, 7, s);
        world.recv(rb.data(), rb.size(), prev, 7, s);
        world.recv(rx.data(), rx.size(), next, 9, s);
        if (!(err = expect_equal(ra, std::vector<float>(5, static_cast<float>(prev)), "send/recv first", r)).empty()) return err;
        if (!(err = expect_equal(rb, std::vector<float>(3, static_cast<float>(prev + 100)), "send/recv second", r)).empty()) return err;
        if (!(err = expect_equal(rx, {static_cast<float>(next + 100)}, "send/recv other tag", r)).empty()) return err;
    }
    world.barrier();
    // Sub-groups: even and odd ranks.
    {
        std::vector<std::vector<int>> groups(2);
        for (int p = 0; p < n; ++p) groups[static_cast<std::size_t>(p % 2)].push_back(p);
        auto sub = world.split(groups, "parity");
        if (!sub) return "split: rank " + std::to_string(r) + " got no group";
        if (sub->rank() != r / 2) return "split: rank " + std::to_string(r) + " has group rank " + std::to_string(sub->rank());
        float v = static_cast<float>(r);
        sub->all_reduce(&v, &v, 1, ReduceOp::Sum, s);
        float want = 0;
        for (int p = r % 2; p < n; p += 2) want += static_cast<float>(p);
        if (v != want) return "split all_reduce on rank " + std::to_string(r) + ": " + std::to_string(v);
        std::vector<std::vector<int>> only_first = {{0}};
        auto solo = world.split(only_first, "solo");
        if ((r == 0) != (solo != nullptr)) return "split: membership of a partial split";
    }
    return "";
}

}  // namespace meshwork::engine::testing
