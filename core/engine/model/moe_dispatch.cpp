#include "core/engine/model/moe_dispatch.h"

#include <cstdint>

#include "core/engine/model/index.h"

namespace meshwork::engine {

namespace {

// The per-expert row counts of every EP rank for this rank's experts: each rank sends each
// other rank the rows it routes to each of that rank's experts.
std::vector<int> exchange_counts(RankContext& ctx, const DispatchPlan& plan, int local_experts) {
    Backend& be = ctx.be;
    const Stream s = ctx.compute;
    const int ranks = static_cast<int>(plan.rows_to_expert.size());
    std::vector<float> count_send;
    std::vector<std::size_t> csend, crecv(ix(ranks), ix(local_experts));
    for (const auto& per_expert : plan.rows_to_expert) {
        count_send.insert(count_send.end(), per_expert.begin(), per_expert.end());
        csend.push_back(per_expert.size());
    }
    Floats ds(be, count_send.size()), dr(be, ix(local_experts) * ix(ranks));
    be.copy_to_device(ds.data(), count_send.data(), count_send.size() * sizeof(float), s);
    ctx.all_to_all_v(Axis::Ep, ds.data(), csend, dr.data(), crecv);
    std::vector<int> counts;
    for (float rows : download(be, dr.data(), dr.size(), s)) counts.push_back(static_cast<int>(rows));
    return counts;
}

std::vector<std::size_t> floats_per_rank(const std::vector<int>& rows, int cols) {
    std::vector<std::size_t> out;
    for (int r : rows) out.push_back(ix(r) * ix(cols));
    return out;
}

}  // namespace

Tensor dispatch_tokens(RankContext& ctx, const DispatchPlan& plan, int local_experts, const Tensor& tokens,
                       MoeExchange& x) {
    Backend& be = ctx.be;
    const Stream s = ctx.compute;
    const int H = tokens.cols;
    x.sent = plan.size();
    std::vector<std::int32_t> token(ix(x.sent)), identity(ix(x.sent));
    for (int a = 0; a < x.sent; ++a) {
        token[ix(a)] = plan.rows[ix(a)].token;
        identity[ix(a)] = a;
    }
    x.send_counts = floats_per_rank(plan.rows_to_rank, H);
    x.token_index = upload_ints(be, token, s);
    x.identity = upload_ints(be, identity, s);
    x.weights = Floats(be, plan.weights.size());
    be.copy_to_device(x.weights.data(), plan.weights.data(), plan.weights.size() * sizeof(float), s);

    const ReceivePlan recv = plan_receive(exchange_counts(ctx, plan, local_experts),
                                          static_cast<int>(plan.rows_to_rank.size()), local_experts);
    x.recv_counts = floats_per_rank(recv.rows_from_rank, H);
    x.expert_rows = recv.expert_rows;
    x.received = recv.rows;
    Tensor send_rows(be, x.sent, H), recv_rows(be, x.received, H);
    be.gather_rows(tokens.ptr(), x.token_index.data(), send_rows.ptr(), x.sent, H, s);
    ctx.all_to_all_v(Axis::Ep, send_rows.ptr(), x.send_counts, recv_rows.ptr(), x.recv_counts);
    // Received rows come by source then expert; experts want theirs contiguous.
    x.perm = upload_ints(be, recv.perm, s);
    Tensor expert_rows(be, x.received, H);
    be.gather_rows(recv_rows.ptr(), x.perm.data(), expert_rows.ptr(), x.received, H, s);
    return expert_rows;
}

Tensor dispatch_backward(RankContext& ctx, const MoeExchange& x, const Tensor& d_expert_rows, int tokens) {
    Backend& be = ctx.be;
    const Stream s = ctx.compute;
    const int H = d_expert_rows.cols;
    Tensor d_recv(be, x.received, H), d_back(be, x.sent, H);
    be.fill(d_recv.ptr(), d_recv.size(), 0.0f, s);
    be.scatter_add_rows(d_expert_rows.ptr(), x.perm.data(), nullptr, d_recv.ptr(), x.received, H, s);
    ctx.all_to_all_v(Axis::Ep, d_recv.ptr(), x.recv_counts, d_back.ptr(), x.send_counts);
    Tensor d_tokens(be, tokens, H);
    be.fill(d_tokens.ptr(), d_tokens.size(), 0.0f, s);
    be.scatter_add_rows(d_back.ptr(), x.token_index.data(), nullptr, d_tokens.ptr(), x.sent, H, s);
    return d_tokens;
}

}  // namespace meshwork::engine
