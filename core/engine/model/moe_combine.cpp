#include "core/engine/model/moe_combine.h"

#include "core/engine/model/index.h"

namespace meshwork::engine {

Tensor combine_forward(RankContext& ctx, const MoeExchange& x, const Tensor& expert_out, int tokens,
                       const CombineOp& op, Tensor& returned) {
    Backend& be = ctx.be;
    const Stream s = ctx.compute;
    const int H = expert_out.cols;
    Tensor by_source(be, x.received, H);
    be.fill(by_source.ptr(), by_source.size(), 0.0f, s);
    be.scatter_add_rows(expert_out.ptr(), x.perm.data(), nullptr, by_source.ptr(), x.received, H, s);
    returned = Tensor(be, x.sent, H);
    ctx.all_to_all_v(Axis::Ep, by_source.ptr(), x.recv_counts, returned.ptr(), x.send_counts);
    Tensor y(be, tokens, H);
    RankContext::Op traced(ctx, op.op_name, op.layer, 0);
    be.fill(y.ptr(), y.size(), 0.0f, s);
    be.scatter_add_rows(returned.ptr(), x.token_index.data(), x.weights.data(), y.ptr(), x.sent, H, s);
    return y;
}

CombineGrad combine_backward(RankContext& ctx, const MoeExchange& x, const float* dy, const Tensor& returned) {
    Backend& be = ctx.be;
    const Stream s = ctx.compute;
    const int H = returned.cols;
    Tensor dy_sent(be, x.sent, H), d_back(be, x.sent, H);
    CombineGrad g;
    g.d_weights = Floats(be, ix(x.sent));
    be.gather_rows(dy, x.token_index.data(), dy_sent.ptr(), x.sent, H, s);
    be.row_dot(dy_sent.ptr(), returned.ptr(), g.d_weights.data(), x.sent, H, s);
    be.fill(d_back.ptr(), d_back.size(), 0.0f, s);
    be.scatter_add_rows(dy_sent.ptr(), x.identity.data(), x.weights.data(), d_back.ptr(), x.sent, H, s);
    Tensor d_recv(be, x.received, H);
    g.d_expert_out = Tensor(be, x.received, H);
    ctx.all_to_all_v(Axis::Ep, d_back.ptr(), x.send_counts, d_recv.ptr(), x.recv_counts);
    be.gather_rows(d_recv.ptr(), x.perm.data(), g.d_expert_out.ptr(), x.received, H, s);
    return g;
}

}  // namespace meshwork::engine
