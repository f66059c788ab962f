#include "core/engine/nccl/nccl_rank_state.h"

#include <algorithm>
#include <thread>

#include "core/engine/cuda/cuda_check.h"
#include "core/engine/stop.h"

namespace meshwork::engine::nccl_detail {

namespace {
constexpr auto kPollSleep = std::chrono::microseconds(50);
}

std::string NcclFault::fail(const std::string& reason) {
    std::lock_guard lk(mu_);
    if (!failed_.load(std::memory_order_relaxed)) {
        reason_ = reason;
        failed_.store(true, std::memory_order_release);
    }
    return reason_;
}

std::string NcclFault::reason() const {
    std::lock_guard lk(mu_);
    return reason_;
}

std::string nccl_error_text(ncclResult_t r, ncclComm_t comm) {
    std::string text = ncclGetErrorString(r);
    const char* last = ncclGetLastError(comm);
    if (last != nullptr && *last != '\0') text += std::string(": ") + last;
    return text;
}

NcclRankState::NcclRankState(CudaBackend& be, int rank, double timeout, std::shared_ptr<NcclFault> f)
    : backend(be), world_rank(rank), timeout_s(timeout), fault(std::move(f)) {
    send_stream = backend.create_stream("nccl send");
    barrier_stream = backend.create_stream("nccl barrier");
    hook_ = backend.add_wait_hook([this] { check(); });
}

NcclRankState::~NcclRankState() {
    backend.remove_wait_hook(hook_);
    for (auto& f : in_flight_) cudaEventDestroy(f.done);
    for (cudaEvent_t e : spare_events_) cudaEventDestroy(e);
}

ncclConfig_t NcclRankState::config(const char* name) const {
    ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
    c.blocking = 0;
    c.commName = name;
    return c;
}

void NcclRankState::add_comm(ncclComm_t comm, const std::string& label) {
    if (comm != nullptr) comms_.push_back({comm, label});
}

void NcclRankState::release(ncclComm_t comm) {
    if (comm == nullptr) return;
    const auto it = std::find_if(comms_.begin(), comms_.end(),
                                 [comm](const Comm& c) { return c.comm == comm; });
    if (it == comms_.end()) return;  // aborted (ncclCommAbort frees it) or never added
    comms_.erase(it);
    if (aborted_) return;
    // Finalize flushes this rank's outstanding work; nonblocking, so bound the wait and abort
    // a communicator whose peers are gone.
    backend.activate();
    ncclResult_t r = ncclCommFinalize(comm);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (r == ncclInProgress && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(kPollSleep);
        ncclCommGetAsyncError(comm, &r);
    }
    if (r == ncclSuccess) {
        ncclCommDestroy(comm);
    } else {
        ncclCommAbort(comm);
    }
}

void NcclRankState::ensure_healthy() {
    if (fault->failed()) {
        abort_local();
        throw CommError(fault->reason());
    }
}

void NcclRankState::wait_ready(ncclComm_t comm, ncclResult_t status, const std::string& what) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (status == ncclInProgress) {
        if (fault->failed()) {
            abort_local();
            throw CommError(fault->reason());
        }
        if (std::chrono::steady_clock::now() > deadline) {
            fail(what + " on rank " + std::to_string(world_rank) + " did not complete within " +
                 std::to_string(timeout_s) + " s (NCCL initialisation or enqueue)");
        }
        throw_if_stopped(backend.stop_token());
        std::this_thread::sleep_for(kPollSleep);
        if (ncclCommGetAsyncError(comm, &status) != ncclSuccess) break;
    }
    if (status != ncclSuccess) {
        fail(what + " on rank " + std::to_string(world_rank) + " failed: " +
             nccl_error_text(status, comm));
    }
}

cudaEvent_t NcclRankState::new_event() {
    if (!spare_events_.empty()) {
        cudaEvent_t e = spare_events_.back();
        spare_events_.pop_back();
        return e;
    }
    cudaEvent_t e = nullptr;
    cuda_detail::check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
                            "cudaEventCreate (nccl)", backend.device_index());
    return e;
}

void NcclRankState::track(cudaStream_t stream, std::string what) {
    // Reap what finished so the list stays as long as the work in flight.
    std::erase_if(in_flight_, [this](InFlight& f) {
        if (cudaEventQuery(f.done) != cudaSuccess) return false;
        spare_events_.push_back(f.done);
        return true;
    });
    cudaEvent_t e = new_event();
    cuda_detail::check_cuda(cudaEventRecord(e, stream), "cudaEventRecord (nccl)",
                            backend.device_index());
    in_flight_.push_back({e, std::chrono::steady_clock::now(), std::move(what)});
}

void NcclRankState::check() {
    if (reported_) return;  // this rank already threw its fault once
    if (fault->failed()) {
        abort_local();
        reported_ = true;
        throw CommError(fault->reason());
    }
    for (const auto& c : comms_) {
        ncclResult_t r = ncclSuccess;
        ncclCommGetAsyncError(c.comm, &r);
        if (r != ncclSuccess && r != ncclInProgress) {
            fail("NCCL error in group " + c.label + " on rank " + std::to_string(world_rank) +
                 ": " + nccl_error_text(r, c.comm));
        }
    }
    const auto now = std::chrono::steady_clock::now();
    for (auto& f : in_flight_) {
        if (cudaEventQuery(f.done) == cudaSuccess) continue;
        if (std::chrono::duration<double>(now - f.enqueued).count() > timeout_s) {
            fail(f.what + " on rank " + std::to_string(world_rank) + " did not complete within " +
                 std::to_string(timeout_s) + " s");
        }
    }
}

void NcclRankState::abort_local() {
    if (aborted_) return;
    aborted_ = true;
    // ncclCommAbort makes this rank's NCCL kernels return, so its streams drain.
    for (const auto& c : comms_) ncclCommAbort(c.comm);
    comms_.clear();
}

void NcclRankState::abort(const std::string& reason) {
    const std::string recorded = fault->fail(reason);
    abort_local();
    if (fault->escalate) fault->escalate(recorded);
}

void NcclRankState::fail(const std::string& reason) {
    abort(reason);
    reported_ = true;
    throw CommError(fault->reason());
}

}  // namespace meshwork::engine::nccl_detail
