// What the NCCL communicators of one rank share: the CUDA backend, the fault state of the
// world, the NCCL communicators to abort on a fault, and the operations in flight that the
// timeout watches. Used by the rank's own thread only (NCCL communicators are not
// thread-safe); the world's fault state is the one thing shared across threads.
#pragma once

#include <nccl.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/engine/communicator.h"
#include "core/engine/cuda/cuda_backend.h"

namespace meshwork::engine::nccl_detail {

// The world's fault: the first reason wins; `escalate` (MPI: end the job) runs once.
class NcclFault {
public:
    // Records `reason` unless a fault is already recorded; returns the recorded one.
    std::string fail(const std::string& reason);
    [[nodiscard]] bool failed() const { return failed_.load(std::memory_order_acquire); }
    [[nodiscard]] std::string reason() const;
    std::function<void(const std::string&)> escalate;

private:
    std::atomic<bool> failed_{false};
    mutable std::mutex mu_;
    std::string reason_;
};

// "ncclInternalError (…): last NCCL message"
std::string nccl_error_text(ncclResult_t r, ncclComm_t comm);

class NcclRankState {
public:
    NcclRankState(CudaBackend& backend, int world_rank, double timeout_s,
                  std::shared_ptr<NcclFault> fault);
    ~NcclRankState();
    NcclRankState(const NcclRankState&) = delete;
    NcclRankState& operator=(const NcclRankState&) = delete;

    CudaBackend& backend;
    const int world_rank;
    const double timeout_s;
    const std::shared_ptr<NcclFault> fault;
    Stream send_stream;     // staged sends, so the caller's stream never waits for a peer
    Stream barrier_stream;  // barrier(): a one-float all-reduce waited on by the host

    // Configuration of every communicator: nonblocking, so that initialisation, split and
    // abort never hang the host beyond the timeout.
    [[nodiscard]] ncclConfig_t config(const char* name) const;
    void add_comm(ncclComm_t comm, const std::string& label);
    // Destroys `comm` (finalize + destroy), or nothing when the rank already aborted it.
    void release(ncclComm_t comm);

    // Throws CommError when the world failed.
    void ensure_healthy();
    // Completes a nonblocking NCCL call on `comm`: polls until it left ncclInProgress,
    // failing the world on an error or after the timeout.
    void wait_ready(ncclComm_t comm, ncclResult_t status, const std::string& what);
    // Watches the operation just enqueued on `stream` for the timeout.
    void track(cudaStream_t stream, std::string what);
    // The backend's wait hook: async errors, timeouts, other ranks' faults.
    void check();
    // Marks the world failed, aborts this rank's communicators, escalates; then throws.
    [[noreturn]] void fail(const std::string& reason);
    // The same without throwing (Communicator::abort).
    void abort(const std::string& reason);

private:
    struct InFlight {
        cudaEvent_t done;
        std::chrono::steady_clock::time_point enqueued;
        std::string what;
    };
    struct Comm {
        ncclComm_t comm;
        std::string label;
    };
    void abort_local();
    cudaEvent_t new_event();

    int hook_ = -1;
    bool aborted_ = false;
    bool reported_ = false;
    std::vector<Comm> comms_;
    std::vector<InFlight> in_flight_;
    std::vector<cudaEvent_t> spare_events_;
};

}  // namespace meshwork::engine::nccl_detail
