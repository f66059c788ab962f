// In-process all-gather, broadcast and all-to-all: each rank copies what it receives
// straight out of the other ranks' send buffers.
#include <cstring>

#include "core/engine/comm/inproc_communicator.h"

namespace meshwork::engine {

void InProcessCommunicator::all_gather_v(const float* send, float* recv,
                                         const std::vector<std::size_t>& counts, Stream /*s*/) {
    check_counts("all_gather_v", counts);
    InprocSlot slot;
    slot.op = "all_gather_v";
    slot.send = send;
    slot.recv = recv;
    slot.counts = &counts;
    group_->arrive(rank_, slot);
    std::size_t offset = 0;
    for (int r = 0; r < size(); ++r) {
        const std::size_t n = counts[static_cast<std::size_t>(r)];
        const auto* src = static_cast<const float*>(group_->slot(r).send);
        // memmove: a rank may gather in place (its send inside its recv).
        if (n) std::memmove(recv + offset, src, n * sizeof(float));
        offset += n;
    }
    group_->depart(rank_);
}

void InProcessCommunicator::broadcast(float* buffer, std::size_t count, int root, Stream /*s*/) {
    InprocSlot slot;
    slot.op = "broadcast";
    slot.send = buffer;
    slot.count = count;
    slot.root = root;
    group_->arrive(rank_, slot);
    if (rank_ != root && count) {
        std::memcpy(buffer, group_->slot(root).send, count * sizeof(float));
    }
    group_->depart(rank_);
}

void InProcessCommunicator::all_to_all_v(const float* send,
                                         const std::vector<std::size_t>& send_counts, float* recv,
                                         const std::vector<std::size_t>& recv_counts,
                                         Stream /*s*/) {
    check_counts("all_to_all_v", send_counts);
    check_counts("all_to_all_v", recv_counts);
    InprocSlot slot;
    slot.op = "all_to_all_v";
    slot.send = send;
    slot.recv = recv;
    slot.counts = &send_counts;
    slot.recv_counts = &recv_counts;
    group_->arrive(rank_, slot);
    const std::size_t me = static_cast<std::size_t>(rank_);
    std::size_t offset = 0;
    for (int p = 0; p < size(); ++p) {
        const InprocSlot& other = group_->slot(p);
        const auto& their_counts = *other.counts;
        const std::size_t n = recv_counts[static_cast<std::size_t>(p)];
        if (their_counts[me] != n) {
            const std::string msg = "all_to_all_v(" + label() + "): rank " +
                                    std::to_string(world_rank_) + " expects " + std::to_string(n) +
                                    " floats from group rank " + std::to_string(p) +
                                    " which sends " + std::to_string(their_counts[me]);
            world_.abort(msg);
            throw CommError(msg);
        }
        std::size_t src_offset = 0;
        for (std::size_t q = 0; q < me; ++q) src_offset += their_counts[q];
        if (n) std::memcpy(recv + offset, static_cast<const float*>(other.send) + src_offset, n * sizeof(float));
        offset += n;
    }
    group_->depart(rank_);
}

}  // namespace meshwork::engine
