// In-process send and recv: send copies into the pair's mailbox and returns at once (an
// eager protocol, so a pipeline schedule's send never waits for the receiver); recv waits
// for the message.
#include <cstring>

#include "core/engine/comm/inproc_communicator.h"

namespace meshwork::engine {

void InProcessCommunicator::send(const float* buffer, std::size_t count, int peer, int tag,
                                 Stream /*s*/) {
    if (world_.aborted()) throw CommError(world_.abort_reason());
    if (peer < 0 || peer >= size()) {
        throw CommError("send(" + label() + "): peer " + std::to_string(peer) + " out of range");
    }
    group_->post(rank_, peer, tag, std::vector<float>(buffer, buffer + count));
}

void InProcessCommunicator::recv(float* buffer, std::size_t count, int peer, int tag,
                                 Stream /*s*/) {
    if (peer < 0 || peer >= size()) {
        throw CommError("recv(" + label() + "): peer " + std::to_string(peer) + " out of range");
    }
    const std::vector<float> m = group_->take(peer, rank_, tag, rank_);
    if (m.size() != count) {
        const std::string msg = "recv(" + label() + ") on rank " + std::to_string(world_rank_) +
                                ": expected " + std::to_string(count) + " floats from group rank " +
                                std::to_string(peer) + " (tag " + std::to_string(tag) + "), got " +
                                std::to_string(m.size());
        world_.abort(msg);
        throw CommError(msg);
    }
    if (count) std::memcpy(buffer, m.data(), count * sizeof(float));
}

}  // namespace meshwork::engine
