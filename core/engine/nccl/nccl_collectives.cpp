// NcclCommunicator collectives. Equal counts map to NCCL's own collective; uneven ones
// (the v-variants) to a group of rooted operations or of sends and receives, which NCCL
// schedules as one.
#include <algorithm>

#include "core/engine/nccl/nccl_communicator.h"

namespace meshwork::engine::nccl_detail {

namespace {

bool all_equal(const std::vector<std::size_t>& counts) {
    return std::adjacent_find(counts.begin(), counts.end(), std::not_equal_to<>()) == counts.end();
}

std::vector<std::size_t> offsets(const std::vector<std::size_t>& counts) {
    std::vector<std::size_t> o(counts.size(), 0);
    for (std::size_t i = 1; i < counts.size(); ++i) o[i] = o[i - 1] + counts[i - 1];
    return o;
}

std::size_t total(const std::vector<std::size_t>& counts) {
    std::size_t t = 0;
    for (std::size_t c : counts) t += c;
    return t;
}

// ncclGroupEnd's status wins over the first failing call inside the group.
ncclResult_t group_result(ncclResult_t inside, ncclResult_t end) {
    return inside != ncclSuccess ? inside : end;
}

}  // namespace

void NcclCommunicator::all_reduce(const float* send, float* recv, std::size_t count, ReduceOp op,
                                  Stream s) {
    const cudaStream_t st = begin(s);
    const ncclResult_t r = ncclAllReduce(send, recv, count, ncclFloat,
                                         op == ReduceOp::Sum ? ncclSum : ncclMax, comm_, st);
    finish(comm_, r, st, describe("all_reduce", count));
}

void NcclCommunicator::all_gather_v(const float* send, float* recv,
                                    const std::vector<std::size_t>& counts, Stream s) {
    check_counts("all_gather_v", counts);
    const cudaStream_t st = begin(s);
    const std::string what = describe("all_gather_v", total(counts));
    if (all_equal(counts)) {
        finish(comm_, ncclAllGather(send, recv, counts[0], ncclFloat, comm_, st), st, what);
        return;
    }
    // One broadcast per rank of its own segment, grouped.
    const auto off = offsets(counts);
    ncclResult_t inside = ncclGroupStart();
    for (int r = 0; r < size(); ++r) {
        const auto ur = static_cast<std::size_t>(r);
        const void* src = r == rank_ ? static_cast<const void*>(send) : recv + off[ur];
        const ncclResult_t x = ncclBroadcast(src, recv + off[ur], counts[ur], ncclFloat, r, comm_, st);
        if (inside == ncclSuccess) inside = x;
    }
    finish(comm_, group_result(inside, ncclGroupEnd()), st, what);
}

void NcclCommunicator::reduce_scatter_v(const float* send, float* recv,
                                        const std::vector<std::size_t>& counts, Stream s) {
    check_counts("reduce_scatter_v", counts);
    const cudaStream_t st = begin(s);
    const std::string what = describe("reduce_scatter_v", total(counts));
    if (all_equal(counts)) {
        finish(comm_, ncclReduceScatter(send, recv, counts[0], ncclFloat, ncclSum, comm_, st), st,
               what);
        return;
    }
    // One reduce per segment to its owner, grouped. Non-root ranks never write the receive
    // buffer of a reduce; they get their own as a valid address.
    const auto off = offsets(counts);
    ncclResult_t inside = ncclGroupStart();
    for (int r = 0; r < size(); ++r) {
        const auto ur = static_cast<std::size_t>(r);
        const ncclResult_t x =
            ncclReduce(send + off[ur], recv, counts[ur], ncclFloat, ncclSum, r, comm_, st);
        if (inside == ncclSuccess) inside = x;
    }
    finish(comm_, group_result(inside, ncclGroupEnd()), st, what);
}

void NcclCommunicator::all_to_all_v(const float* send, const std::vector<std::size_t>& send_counts,
                                    float* recv, const std::vector<std::size_t>& recv_counts,
                                    Stream s) {
    check_counts("all_to_all_v", send_counts);
    check_counts("all_to_all_v", recv_counts);
    const cudaStream_t st = begin(s);
    const auto so = offsets(send_counts), ro = offsets(recv_counts);
    ncclResult_t inside = ncclGroupStart();
    for (int p = 0; p < size(); ++p) {
        const auto up = static_cast<std::size_t>(p);
        if (send_counts[up] > 0) {
            const ncclResult_t x = ncclSend(send + so[up], send_counts[up], ncclFloat, p, comm_, st);
            if (inside == ncclSuccess) inside = x;
        }
        if (recv_counts[up] > 0) {
            const ncclResult_t x = ncclRecv(recv + ro[up], recv_counts[up], ncclFloat, p, comm_, st);
            if (inside == ncclSuccess) inside = x;
        }
    }
    finish(comm_, group_result(inside, ncclGroupEnd()), st,
           describe("all_to_all_v", total(send_counts)));
}

void NcclCommunicator::broadcast(float* buffer, std::size_t count, int root, Stream s) {
    check_peer("broadcast", root);
    const cudaStream_t st = begin(s);
    finish(comm_, ncclBroadcast(buffer, buffer, count, ncclFloat, root, comm_, st), st,
           describe("broadcast", count));
}

}  // namespace meshwork::engine::nccl_detail
