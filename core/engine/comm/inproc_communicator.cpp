// InProcessCommunicator: groups, barrier and abort. The collectives are in
// inproc_reduce.cpp (all-reduce, reduce-scatter), inproc_gather.cpp (all-gather, broadcast,
// all-to-all) and inproc_p2p.cpp (send, recv).
#include "core/engine/comm/inproc_communicator.h"

#include <algorithm>

namespace meshwork::engine {

InProcessCommunicator::InProcessCommunicator(InProcessWorld& world,
                                             std::shared_ptr<InprocGroup> group, int world_rank)
    : world_(world), group_(std::move(group)), world_rank_(world_rank), rank_(-1) {
    const auto& m = group_->members();
    const auto it = std::find(m.begin(), m.end(), world_rank);
    if (it == m.end()) {
        throw CommError("rank " + std::to_string(world_rank) + " is not in group " + group_->label());
    }
    rank_ = static_cast<int>(it - m.begin());
}

std::unique_ptr<Communicator> InProcessCommunicator::split(
    const std::vector<std::vector<int>>& groups, const std::string& label) {
    // Groups are named by their members, so every member finds the same shared state
    // without a rendezvous.
    for (const auto& g : groups) {
        if (std::find(g.begin(), g.end(), world_rank_) != g.end()) {
            return std::make_unique<InProcessCommunicator>(world_, world_.group(g, label),
                                                           world_rank_);
        }
    }
    return nullptr;
}

void InProcessCommunicator::check_counts(const char* op, const std::vector<std::size_t>& counts) const {
    if (static_cast<int>(counts.size()) != size()) {
        throw CommError(std::string(op) + "(" + label() + "): " + std::to_string(counts.size()) +
                        " counts for a group of " + std::to_string(size()));
    }
}

void InProcessCommunicator::barrier() {
    InprocSlot slot;
    slot.op = "barrier";
    group_->arrive(rank_, slot);
    group_->depart(rank_);
}

}  // namespace meshwork::engine
