#include "core/engine/model/cp_ring.h"

namespace meshwork::engine {

namespace {
// Tags of the two rings on the cp group (no other traffic uses that group).
constexpr int kGatherTag = 1;
constexpr int kReduceTag = 2;
}  // namespace

void ring_all_gather(RankContext& ctx, const float* mine, std::size_t n, float* out) {
    const int cp = ctx.size(Axis::Cp), r = ctx.rank(Axis::Cp);
    const int next = (r + 1) % cp, prev = (r - 1 + cp) % cp;
    ctx.be.copy(out + static_cast<std::size_t>(r) * n, mine, n * sizeof(float), ctx.compute);
    // Step s forwards the block that arrived at step s−1 (first our own).
    for (int s = 0; s < cp - 1; ++s) {
        const int send_block = ((r - s) % cp + cp) % cp;
        const int recv_block = ((r - s - 1) % cp + cp) % cp;
        ctx.send(Axis::Cp, out + static_cast<std::size_t>(send_block) * n, n, next, kGatherTag);
        ctx.recv(Axis::Cp, out + static_cast<std::size_t>(recv_block) * n, n, prev, kGatherTag);
    }
}

void ring_reduce_scatter(RankContext& ctx, const float* blocks, std::size_t n, float* out) {
    const int cp = ctx.size(Axis::Cp), r = ctx.rank(Axis::Cp);
    const int next = (r + 1) % cp, prev = (r - 1 + cp) % cp;
    if (cp == 1) {
        ctx.be.copy(out, blocks, n * sizeof(float), ctx.compute);
        return;
    }
    // Step s sends the running sum of block r−1−s and receives that of block r−2−s, to
    // which it adds its own partial; after cp−1 steps the sum of block r has arrived.
    Floats acc(ctx.be, n), incoming(ctx.be, n);
    const auto block = [&](int b) { return blocks + static_cast<std::size_t>(((b % cp) + cp) % cp) * n; };
    ctx.be.copy(acc.data(), block(r - 1), n * sizeof(float), ctx.compute);
    for (int s = 0; s < cp - 1; ++s) {
        ctx.send(Axis::Cp, acc.data(), n, next, kReduceTag);
        ctx.recv(Axis::Cp, incoming.data(), n, prev, kReduceTag);
        ctx.be.copy(acc.data(), block(r - 2 - s), n * sizeof(float), ctx.compute);
        ctx.be.axpy(acc.data(), incoming.data(), n, 1.0f, ctx.compute);
    }
    ctx.be.copy(out, acc.data(), n * sizeof(float), ctx.compute);
}

}  // namespace meshwork::engine
