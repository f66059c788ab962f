// In-process all-reduce and reduce-scatter. Each rank reduces one slice of the vector from
// every rank's send buffer, in rank order and in cache-sized tiles, and writes the result to
// every rank's receive buffer: each byte is read once and written once over all ranks
// together (the copy volume of a memcpy, spread over the rank threads), and every rank
// receives bit-identical sums.
#include <algorithm>
#include <array>
#include <cstring>

#include "core/engine/comm/inproc_communicator.h"

namespace meshwork::engine {

namespace {
// 16 KiB of floats: stays in L1 while a tile is summed over the ranks.
constexpr std::size_t kTileFloats = 4096;

void reduce_tile(float* out, const float* in, std::size_t n, ReduceOp op) {
    if (op == ReduceOp::Sum) {
        for (std::size_t i = 0; i < n; ++i) out[i] += in[i];
    } else {
        for (std::size_t i = 0; i < n; ++i) out[i] = std::max(out[i], in[i]);
    }
}

// Reduces [begin, end) of every rank's send into every destination given by dst(rank).
template <typename Dst>
void reduce_range(const InprocGroup& g, std::size_t src_offset, std::size_t begin,
                  std::size_t end, ReduceOp op, Dst dst, int dst_ranks) {
    std::array<float, kTileFloats> tile{};
    for (std::size_t at = begin; at < end; at += kTileFloats) {
        const std::size_t n = std::min(kTileFloats, end - at);
        const auto* first = static_cast<const float*>(g.slot(0).send) + src_offset + at;
        std::memcpy(tile.data(), first, n * sizeof(float));
        for (int r = 1; r < g.size(); ++r) {
            reduce_tile(tile.data(), static_cast<const float*>(g.slot(r).send) + src_offset + at, n, op);
        }
        for (int r = 0; r < dst_ranks; ++r) std::memcpy(dst(r) + at, tile.data(), n * sizeof(float));
    }
}
}  // namespace

void InProcessCommunicator::all_reduce(const float* send, float* recv, std::size_t count,
                                       ReduceOp op, Stream /*s*/) {
    InprocSlot slot;
    slot.op = "all_reduce";
    slot.send = send;
    slot.recv = recv;
    slot.count = count;
    slot.reduce = op;
    group_->arrive(rank_, slot);
    // Slice of this rank: an even split of the vector, remainder to the first ranks.
    const std::size_t n = static_cast<std::size_t>(size());
    const std::size_t r = static_cast<std::size_t>(rank_);
    const std::size_t base = count / n, extra = count % n;
    const std::size_t begin = r * base + std::min(r, extra);
    const std::size_t end = begin + base + (r < extra ? 1 : 0);
    // In place is safe: only this rank reads or writes its slice of any buffer.
    reduce_range(*group_, 0, begin, end, op,
                 [&](int k) { return static_cast<float*>(group_->slot(k).recv); }, size());
    group_->depart(rank_);
}

void InProcessCommunicator::reduce_scatter_v(const float* send, float* recv,
                                             const std::vector<std::size_t>& counts,
                                             Stream /*s*/) {
    check_counts("reduce_scatter_v", counts);
    InprocSlot slot;
    slot.op = "reduce_scatter_v";
    slot.send = send;
    slot.recv = recv;
    slot.counts = &counts;
    group_->arrive(rank_, slot);
    std::size_t offset = 0;
    for (int r = 0; r < rank_; ++r) offset += counts[static_cast<std::size_t>(r)];
    reduce_range(*group_, offset, 0, counts[static_cast<std::size_t>(rank_)], ReduceOp::Sum,
                 [&](int) { return recv; }, 1);
    group_->depart(rank_);
}

}  // namespace meshwork::engine
