// Communicator: the collectives of one process group (core/engine/communicator.h).
// Implementations: in-process threads (core/engine/comm/inproc_communicator.h), MPI
// processes (core/engine/comm/mpi_communicator.h), and NCCL for GPUs, which plugs in here.
//
// Buffers are device addresses of the calling rank's Backend. Every call is enqueued on the
// given stream (communication runs on its own stream so that it overlaps compute) and
// returns; completion is observed through the backend event the caller records on that
// stream afterwards. An implementation whose device is the host may complete at once.
//
// Groups come from the layout's mesh: split() is collective over the parent and every rank
// passes the same list of groups (DeviceMesh::groups(axis)), as Megatron's parallel_state
// and ncclCommSplit do.
//
// Faults: a collective that does not complete within timeout_s (set at construction) throws
// CommError naming the group, the collective and the ranks not yet arrived; abort() makes
// every rank of the world fail its pending and future calls with the given reason.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/backend.h"

namespace meshwork::engine {

enum class ReduceOp { Sum, Max };

// A collective failed, timed out, or another rank aborted the world.
class CommError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class Communicator {
public:
    virtual ~Communicator() = default;

    [[nodiscard]] virtual int rank() const = 0;  // within this group
    [[nodiscard]] virtual int size() const = 0;
    [[nodiscard]] virtual int world_rank() const = 0;
    [[nodiscard]] virtual const std::string& label() const = 0;  // "world", "tp", "dp", ...
    [[nodiscard]] virtual std::string kind() const = 0;          // "inproc", "mpi", "nccl"

    // Collective over this group: `groups` partitions (a subset of) its world ranks; each
    // rank gets the group it belongs to, or null when it is in none.
    virtual std::unique_ptr<Communicator> split(const std::vector<std::vector<int>>& groups,
                                                const std::string& label) = 0;

    // recv = op over ranks of send; send == recv is allowed (in place).
    virtual void all_reduce(const float* send, float* recv, std::size_t count, ReduceOp op,
                            Stream s) = 0;
    // recv = concatenation of every rank's send (counts[r] floats from rank r).
    virtual void all_gather_v(const float* send, float* recv, const std::vector<std::size_t>& counts,
                              Stream s) = 0;
    // send holds size() consecutive segments (counts[r] floats each); rank r receives the
    // sum over ranks of segment r.
    virtual void reduce_scatter_v(const float* send, float* recv,
                                  const std::vector<std::size_t>& counts, Stream s) = 0;
    // send_counts[p] floats go to rank p (consecutive in send); recv_counts[p] come from p.
    virtual void all_to_all_v(const float* send, const std::vector<std::size_t>& send_counts,
                              float* recv, const std::vector<std::size_t>& recv_counts,
                              Stream s) = 0;
    virtual void broadcast(float* buffer, std::size_t count, int root, Stream s) = 0;
    // Point to point by group rank; messages between a pair with equal tags arrive in order.
    // send does not wait for the matching recv (pipeline schedules rely on that).
    virtual void send(const float* buffer, std::size_t count, int peer, int tag, Stream s) = 0;
    virtual void recv(float* buffer, std::size_t count, int peer, int tag, Stream s) = 0;
    virtual void barrier() = 0;

    // Marks the world failed: every rank's pending and later calls throw CommError(reason).
    virtual void abort(const std::string& reason) = 0;

    // Equal-count conveniences.
    void all_gather(const float* send, float* recv, std::size_t count_per_rank, Stream s) {
        all_gather_v(send, recv, std::vector<std::size_t>(static_cast<std::size_t>(size()), count_per_rank), s);
    }
    void reduce_scatter(const float* send, float* recv, std::size_t count_per_rank, Stream s) {
        reduce_scatter_v(send, recv, std::vector<std::size_t>(static_cast<std::size_t>(size()), count_per_rank), s);
    }
};

}  // namespace meshwork::engine
