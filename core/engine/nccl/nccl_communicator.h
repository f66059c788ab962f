// The NCCL communicator of one rank for one process group (engine/communicator.h).
//
// Each group holds three NCCL communicators over the same ranks: one for collectives and
// two for point-to-point traffic, one per direction ("up" carries messages to higher group
// ranks, "down" to lower). NCCL runs the operations of one communicator in issue order, so
// a pipeline stage that sends forward and receives backward on a single communicator could
// wait on its neighbour doing the same; with one communicator per direction each carries a
// one-way flow.
//
// Point-to-point semantics are those of the contract: send returns at once (the message is
// staged, then sent from a per-peer send stream, so the caller's stream never waits for
// the receiver), and messages are matched by tag. NCCL has no tags, so every message is a
// small header (tag, count) followed by the payload; recv reads headers from its peer in
// order, keeps payloads meant for other tags until asked for, and receives its own straight
// into the caller's buffer. Reading a header is a host wait, as a recv is on the other
// communicators.
#pragma once

#include <nccl.h>

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/engine/communicator.h"
#include "core/engine/nccl/nccl_rank_state.h"

namespace meshwork::engine::nccl_detail {

class NcclCommunicator final : public Communicator {
public:
    // The world communicator: ncclCommInitRank on this thread's GPU, then the p2p pair.
    static std::unique_ptr<Communicator> create_world(CudaBackend& backend, int size,
                                                      const ncclUniqueId& id, int rank,
                                                      double timeout_s,
                                                      std::shared_ptr<NcclFault> fault);

    // Takes `comm` (already initialised, this group's collective communicator).
    NcclCommunicator(std::shared_ptr<NcclRankState> state, ncclComm_t comm, std::string label,
                     std::vector<int> members);
    ~NcclCommunicator() override;
    NcclCommunicator(const NcclCommunicator&) = delete;
    NcclCommunicator& operator=(const NcclCommunicator&) = delete;

    [[nodiscard]] int rank() const override { return rank_; }
    [[nodiscard]] int size() const override { return static_cast<int>(members_.size()); }
    [[nodiscard]] int world_rank() const override { return st_->world_rank; }
    [[nodiscard]] const std::string& label() const override { return label_; }
    [[nodiscard]] std::string kind() const override { return "nccl"; }

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
    void abort(const std::string& reason) override { st_->abort(reason); }

private:
    // Common prologue of every call: healthy world, this GPU current, the native stream.
    cudaStream_t begin(Stream s);
    // Completes a nonblocking NCCL call (or group) and watches it for the timeout.
    void finish(ncclComm_t comm, ncclResult_t status, cudaStream_t stream, const std::string& what);
    void check_counts(const char* op, const std::vector<std::size_t>& counts) const;
    void check_peer(const char* op, int peer) const;
    [[nodiscard]] std::string describe(const char* op, std::size_t count) const;
    // Two duplicates of comm_ for the directions of point-to-point traffic.
    void make_p2p();

    std::shared_ptr<NcclRankState> st_;
    ncclComm_t comm_ = nullptr;
    ncclComm_t up_ = nullptr;    // to higher group ranks
    ncclComm_t down_ = nullptr;  // to lower group ranks
    std::string label_;
    std::vector<int> members_;  // world ranks, in group-rank order
    int rank_ = 0;
    // A received payload waiting for its recv: ready when `done` completed.
    struct Staged {
        DeviceBuffer data;
        std::size_t count = 0;
        Event done;
    };
    Stream send_stream(int peer);
    Stream recv_stream();
    std::map<int, Stream> send_streams_;                   // per peer
    int recv_stream_ = -1;
    DeviceBuffer header_;                                  // 2 × int64: tag, count
    std::map<std::pair<int, int>, std::deque<Staged>> unexpected_;  // (peer, tag) → payloads
    std::map<int, std::deque<DeviceBuffer>> self_mail_;    // tag → staged sends to self
};

}  // namespace meshwork::engine::nccl_detail
