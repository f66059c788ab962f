// NcclCommunicator: creation, split, point-to-point, barrier. The collectives are in
// nccl_collectives.cpp.
#include "core/engine/nccl/nccl_communicator.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "core/engine/cuda/cuda_check.h"

namespace meshwork::engine::nccl_detail {

std::unique_ptr<Communicator> NcclCommunicator::create_world(CudaBackend& backend, int size,
                                                             const ncclUniqueId& id, int rank,
                                                             double timeout_s,
                                                             std::shared_ptr<NcclFault> fault) {
    auto state = std::make_shared<NcclRankState>(backend, rank, timeout_s, std::move(fault));
    backend.activate();
    ncclConfig_t cfg = state->config("world");
    ncclComm_t comm = nullptr;
    const ncclResult_t r = ncclCommInitRankConfig(&comm, size, id, rank, &cfg);
    if (comm == nullptr) {
        state->fail("ncclCommInitRank on rank " + std::to_string(rank) + " failed: " +
                    ncclGetErrorString(r));
    }
    state->add_comm(comm, "world");
    state->wait_ready(comm, r, "ncclCommInitRank(world)");
    std::vector<int> members(static_cast<std::size_t>(size));
    std::iota(members.begin(), members.end(), 0);
    return std::make_unique<NcclCommunicator>(std::move(state), comm, "world", std::move(members));
}

NcclCommunicator::NcclCommunicator(std::shared_ptr<NcclRankState> state, ncclComm_t comm,
                                   std::string label, std::vector<int> members)
    : st_(std::move(state)), comm_(comm), label_(std::move(label)), members_(std::move(members)) {
    const auto it = std::find(members_.begin(), members_.end(), st_->world_rank);
    if (it == members_.end()) {
        throw CommError("rank " + std::to_string(st_->world_rank) + " is not in group " + label_);
    }
    rank_ = static_cast<int>(it - members_.begin());
    make_p2p();
}

NcclCommunicator::~NcclCommunicator() {
    for (auto& [tag, q] : self_mail_) {
        for (auto& b : q) st_->backend.deallocate(b);
    }
    for (auto& [key, q] : unexpected_) {
        for (auto& m : q) {
            st_->backend.deallocate(m.data);
            st_->backend.destroy_event(m.done);
        }
    }
    st_->backend.deallocate(header_);
    st_->release(down_);
    st_->release(up_);
    st_->release(comm_);
}

void NcclCommunicator::make_p2p() {
    if (size() == 1) return;  // every message is to self
    st_->backend.activate();
    for (ncclComm_t* dir : {&up_, &down_}) {
        const std::string name = label_ + (dir == &up_ ? " p2p up" : " p2p down");
        ncclConfig_t cfg = st_->config(name.c_str());
        const ncclResult_t r = ncclCommSplit(comm_, 0, rank_, dir, &cfg);
        if (*dir == nullptr) {
            st_->fail("ncclCommSplit(" + name + ") on rank " + std::to_string(st_->world_rank) +
                      " failed: " + nccl_error_text(r, comm_));
        }
        st_->add_comm(*dir, name);
        st_->wait_ready(*dir, r, "ncclCommSplit(" + name + ")");
    }
}

std::unique_ptr<Communicator> NcclCommunicator::split(const std::vector<std::vector<int>>& groups,
                                                      const std::string& label) {
    st_->ensure_healthy();
    int color = NCCL_SPLIT_NOCOLOR, key = 0;
    std::vector<int> members;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const auto it = std::find(groups[g].begin(), groups[g].end(), st_->world_rank);
        if (it != groups[g].end()) {
            color = static_cast<int>(g);
            key = static_cast<int>(it - groups[g].begin());
            members = groups[g];
        }
    }
    st_->backend.activate();
    ncclConfig_t cfg = st_->config(label.c_str());
    ncclComm_t sub = nullptr;
    const ncclResult_t r = ncclCommSplit(comm_, color, key, &sub, &cfg);
    if (color == NCCL_SPLIT_NOCOLOR) {
        st_->wait_ready(comm_, r, "ncclCommSplit(" + label + ")");
        return nullptr;
    }
    if (sub == nullptr) {
        st_->fail("ncclCommSplit(" + label + ") on rank " + std::to_string(st_->world_rank) +
                  " failed: " + nccl_error_text(r, comm_));
    }
    st_->add_comm(sub, label);
    st_->wait_ready(sub, r, "ncclCommSplit(" + label + ")");
    return std::make_unique<NcclCommunicator>(st_, sub, label, std::move(members));
}

cudaStream_t NcclCommunicator::begin(Stream s) {
    st_->ensure_healthy();
    st_->backend.activate();
    return st_->backend.native_stream(s);
}

void NcclCommunicator::finish(ncclComm_t comm, ncclResult_t status, cudaStream_t stream,
                              const std::string& what) {
    st_->wait_ready(comm, status, what);
    st_->track(stream, what);
}

std::string NcclCommunicator::describe(const char* op, std::size_t count) const {
    return std::string(op) + "(" + label_ + ") of " + std::to_string(count) + " floats";
}

void NcclCommunicator::check_counts(const char* op, const std::vector<std::size_t>& counts) const {
    if (static_cast<int>(counts.size()) != size()) {
        throw CommError(std::string(op) + "(" + label_ + "): " + std::to_string(counts.size()) +
                        " counts for a group of " + std::to_string(size()));
    }
}

void NcclCommunicator::check_peer(const char* op, int peer) const {
    if (peer < 0 || peer >= size()) {
        throw CommError(std::string(op) + "(" + label_ + "): peer " + std::to_string(peer) +
                        " outside a group of " + std::to_string(size()));
    }
}

Stream NcclCommunicator::send_stream(int peer) {
    // One per peer: a send that waits for a slow receiver holds up only later sends to it.
    auto it = send_streams_.find(peer);
    if (it == send_streams_.end()) {
        it = send_streams_.emplace(peer, st_->backend.create_stream("nccl send " + label_ + " to " +
                                                                     std::to_string(peer)))
                 .first;
    }
    return it->second;
}

Stream NcclCommunicator::recv_stream() {
    if (recv_stream_ < 0) {
        recv_stream_ = st_->backend.create_stream("nccl recv " + label_).id;
        header_ = st_->backend.allocate(2 * sizeof(std::int64_t));
    }
    return Stream{recv_stream_};
}

void NcclCommunicator::send(const float* buffer, std::size_t count, int peer, int tag, Stream s) {
    check_peer("send", peer);
    (void)begin(s);
    CudaBackend& be = st_->backend;
    // Stage the message: the caller may overwrite `buffer` once its stream moves on.
    DeviceBuffer staged = be.allocate(count * sizeof(float));
    be.copy(staged.ptr, buffer, count * sizeof(float), s);
    if (peer == rank_) {
        self_mail_[tag].push_back(staged);
        return;
    }
    const std::int64_t host_header[2] = {tag, static_cast<std::int64_t>(count)};
    DeviceBuffer header = be.allocate(sizeof host_header);
    be.copy_to_device(header.ptr, host_header, sizeof host_header, s);
    const Stream out = send_stream(peer);
    const Event ready = be.create_event();
    be.record_event(ready, s);
    be.wait_event(out, ready);
    be.destroy_event(ready);
    const cudaStream_t native = be.native_stream(out);
    ncclComm_t dir = peer > rank_ ? up_ : down_;
    ncclResult_t inside = ncclGroupStart();
    if (inside == ncclSuccess) inside = ncclSend(header.ptr, 2, ncclInt64, peer, dir, native);
    if (inside == ncclSuccess && count > 0) inside = ncclSend(staged.ptr, count, ncclFloat, peer, dir, native);
    const ncclResult_t end = ncclGroupEnd();
    finish(dir, inside != ncclSuccess ? inside : end, native,
           describe("send", count) + " to group rank " + std::to_string(peer) + " (tag " +
               std::to_string(tag) + ")");
    // Parked by the allocator until every stream, the send stream included, passed here.
    be.deallocate(header);
    be.deallocate(staged);
}

void NcclCommunicator::recv(float* buffer, std::size_t count, int peer, int tag, Stream s) {
    check_peer("recv", peer);
    (void)begin(s);
    CudaBackend& be = st_->backend;
    const auto mismatch = [&](std::size_t got) {
        return CommError("recv(" + label_ + ") on rank " + std::to_string(st_->world_rank) +
                         ": expected " + std::to_string(count) + " floats from group rank " +
                         std::to_string(peer) + " with tag " + std::to_string(tag) + ", got " +
                         std::to_string(got));
    };
    if (peer == rank_) {
        auto& q = self_mail_[tag];
        if (q.empty()) {
            throw CommError("recv(" + label_ + ") on rank " + std::to_string(st_->world_rank) +
                            ": no message from self with tag " + std::to_string(tag));
        }
        DeviceBuffer staged = q.front();
        q.pop_front();
        if (staged.bytes != count * sizeof(float)) throw mismatch(staged.bytes / sizeof(float));
        be.copy(buffer, staged.ptr, staged.bytes, s);
        be.deallocate(staged);
        return;
    }
    // Already here under this tag (read while looking for another one)?
    if (auto it = unexpected_.find({peer, tag}); it != unexpected_.end() && !it->second.empty()) {
        Staged m = it->second.front();
        it->second.pop_front();
        if (m.count != count) throw mismatch(m.count);
        be.wait_event(s, m.done);
        be.destroy_event(m.done);
        be.copy(buffer, m.data.ptr, count * sizeof(float), s);
        be.deallocate(m.data);
        return;
    }
    // A message from a higher rank travels on its "down" communicator, from a lower on "up".
    ncclComm_t dir = peer > rank_ ? down_ : up_;
    const Stream in = recv_stream();
    const cudaStream_t native = be.native_stream(in);
    const std::string what = describe("recv", count) + " from group rank " + std::to_string(peer) +
                             " (tag " + std::to_string(tag) + ")";
    for (;;) {
        finish(dir, ncclRecv(header_.ptr, 2, ncclInt64, peer, dir, native), native, what);
        std::int64_t h[2] = {0, 0};
        be.copy_to_host(h, header_.ptr, sizeof h, in);  // a polling wait: faults and timeouts apply
        const int got_tag = static_cast<int>(h[0]);
        const auto got = static_cast<std::size_t>(h[1]);
        if (got_tag == tag) {
            if (got != count) throw mismatch(got);
            if (count == 0) return;
            // Into the caller's buffer once the caller's stream is done with it.
            const Event free_to_write = be.create_event();
            be.record_event(free_to_write, s);
            be.wait_event(in, free_to_write);
            be.destroy_event(free_to_write);
            finish(dir, ncclRecv(buffer, count, ncclFloat, peer, dir, native), native, what);
            const Event done = be.create_event();
            be.record_event(done, in);
            be.wait_event(s, done);
            be.destroy_event(done);
            return;
        }
        Staged m{be.allocate(got * sizeof(float)), got, be.create_event()};
        if (got > 0) {
            finish(dir, ncclRecv(m.data.ptr, got, ncclFloat, peer, dir, native), native,
                   describe("recv", got) + " from group rank " + std::to_string(peer) +
                       " (tag " + std::to_string(got_tag) + ")");
        }
        be.record_event(m.done, in);
        unexpected_[{peer, got_tag}].push_back(m);
    }
}

void NcclCommunicator::barrier() {
    CudaBackend& be = st_->backend;
    const cudaStream_t st = begin(st_->barrier_stream);
    DeviceBuffer one = be.allocate(sizeof(float));
    be.fill(static_cast<float*>(one.ptr), 1, 0.0f, st_->barrier_stream);
    const ncclResult_t r = ncclAllReduce(one.ptr, one.ptr, 1, ncclFloat, ncclSum, comm_, st);
    finish(comm_, r, st, "barrier(" + label_ + ")");
    be.synchronize(st_->barrier_stream);
    be.deallocate(one);
}

}  // namespace meshwork::engine::nccl_detail
