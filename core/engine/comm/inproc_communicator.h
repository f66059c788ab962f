// The in-process communicator (one thread per rank, shared memory): for the GUI, tests and
// single-process runs. Collectives copy and reduce straight between the ranks' buffers.
#pragma once

#include <memory>

#include "core/engine/comm/inproc_world.h"
#include "core/engine/communicator.h"

namespace meshwork::engine {

class InProcessCommunicator final : public Communicator {
public:
    InProcessCommunicator(InProcessWorld& world, std::shared_ptr<InprocGroup> group,
                          int world_rank);

    [[nodiscard]] int rank() const override { return rank_; }
    [[nodiscard]] int size() const override { return group_->size(); }
    [[nodiscard]] int world_rank() const override { return world_rank_; }
    [[nodiscard]] const std::string& label() const override { return group_->label(); }
    [[nodiscard]] std::string kind() const override { return "inproc"; }

    std::unique_ptr<Communicator> split(const std::vector<std::vector<int>>& groups,
                                        const std::string& label) override;

    void all_reduce(const float* send, float* recv, std::size_t count, ReduceOp op,
                    Stream s) override;
    void all_gather_v(const float* send, float* recv, const std::vector<std::size_t>& counts,
                      Stream s) override;
    void reduce_scatter_v(const float* send, float* recv, const std::vector<std::size_t>& counts,
                          Stream s) override;
    void all_to_all_v(const float* send, const std::vector<std::size_t>& send_counts, float* recv,
                      const std::vector<std::size_t>& recv_counts, Stream s) override;
    void broadcast(float* buffer, std::size_t count, int root, Stream s) override;
    void send(const float* buffer, std::size_t count, int peer, int tag, Stream s) override;
    void recv(float* buffer, std::size_t count, int peer, int tag, Stream s) override;
    void barrier() override;
    void abort(const std::string& reason) override { world_.abort(reason); }

private:
    void check_counts(const char* op, const std::vector<std::size_t>& counts) const;

    InProcessWorld& world_;
    std::shared_ptr<InprocGroup> group_;
    int world_rank_;
    int rank_;
};

}  // namespace meshwork::engine
