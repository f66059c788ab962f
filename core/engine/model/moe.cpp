#include "core/engine/model/moe.h"

#include <utility>

#include "core/engine/model/index.h"
#include "core/engine/model/linear.h"
#include "core/engine/model/tp_regions.h"

namespace meshwork::engine {

MoeLayer::MoeLayer(ParamStore& store, const ModelDims& d, int block, const RankCoords& coords,
                   const std::vector<std::vector<int>>& experts_per_ep_rank)
    : d_(d), block_(block), tp_rank_(coords.tp), cp_rank_(coords.cp), placement_(experts_per_ep_rank, d.experts) {
    norm_ = store.add({.name = "block." + std::to_string(block) + ".post_attention_norm",
                       .full_rows = 1, .full_cols = d.hidden, .init = ParamInit::Ones,
                       .tp_partial_grad = d.sp, .weight_decay = false});
    // Each TP rank routes different tokens, so the router's gradient is partial over TP.
    router_ = store.add({.name = pname("router"), .full_rows = d.hidden, .full_cols = d.experts,
                         .tp_partial_grad = d.tp > 1});
    for (int e : placement_.experts_of_rank.at(ix(coords.ep))) {
        const std::string base = "expert." + std::to_string(e) + ".";
        const auto add = [&](const std::string& w, int r, int c) {
            return store.add({.name = pname(base + w), .full_rows = r, .full_cols = c,
                              .group = ReduceGroup::Expert});
        };
        MoeExpert x;
        x.id = e;
        x.w_gate = add("w_gate", d.hidden, d.expert_ffn);
        x.w_up = add("w_up", d.hidden, d.expert_ffn);
        x.w_down = add("w_down", d.expert_ffn, d.hidden);
        local_.push_back(x);
    }
}

std::string MoeLayer::pname(const std::string& what) const {
    return "block." + std::to_string(block_) + ".moe." + what;
}

double MoeLayer::take_aux_loss() { return std::exchange(aux_loss_, 0.0); }

RouteShape MoeLayer::route_shape(int row0) const {
    const int n = routed_tokens();
    return {.tokens = n, .experts = d_.experts, .top_k = d_.top_k,
            .capacity = moe_capacity(d_.capacity_factor, n, d_.top_k, d_.experts),
            .first_row = row0, .seq_local = d_.seq_local, .sequences = d_.mbs};
}

ExpertBlock MoeLayer::expert_block(const Cache& c, const std::string& op) const {
    return {.experts = local_, .rows = c.exchange.expert_rows, .ffn = d_.expert_ffn,
            .op_name = pname(op), .layer = block_};
}

// RMSNorm of the block's input, then the rows this rank routes.
Tensor MoeLayer::normalise(RankContext& ctx, ParamStore& store, const Tensor& x, Cache& c) {
    Backend& be = ctx.be;
    const int H = d_.hidden, n = routed_tokens();
    c.rstd = Floats(be, ix(x.rows));
    Tensor hr(be, x.rows, H);
    {
        RankContext::Op op(ctx, pname("norm.fwd"), block_, 0);
        be.rmsnorm_forward(x.ptr(), store.value(norm_), hr.ptr(), c.rstd.data(), x.rows, H, d_.rms_eps, ctx.compute);
    }
    c.row0 = (d_.tp > 1) ? tp_rank_ * n : 0;
    Tensor htok(be, n, H);
    be.copy(htok.ptr(), split_tokens() ? hr.row(c.row0) : hr.ptr(), ix(n) * ix(H) * sizeof(float), ctx.compute);
    return htok;
}

// Router probabilities on the device; the top-k choice is on the host (the dispatch needs
// the counts there anyway).
std::vector<float> MoeLayer::router_forward(RankContext& ctx, ParamStore& store, const Tensor& htok) {
    Backend& be = ctx.be;
    const int n = htok.rows, E = d_.experts;
    Tensor probs(be, n, E);
    {
        RankContext::Op op(ctx, pname("router.fwd"), block_, gemm_flops(n, E, d_.hidden));
        matmul(be, ctx.compute, htok.ptr(), store.value(router_), probs.ptr(), n, E, d_.hidden);
        be.softmax_rows(probs.ptr(), n, E, ctx.compute);
    }
    return download(be, probs.ptr(), probs.size(), ctx.compute);
}

// Per-sequence load and probability, summed over the ranks that hold parts of a sequence;
// the loss is counted on one rank per TP×CP group. Returns its gradient.
std::vector<float> MoeLayer::balance_loss(RankContext& ctx, std::vector<float> sequence_stats,
                                          const RouteShape& shape) {
    Backend& be = ctx.be;
    Floats dev(be, sequence_stats.size());
    be.copy_to_device(dev.data(), sequence_stats.data(), sequence_stats.size() * sizeof(float), ctx.compute);
    if (d_.tp > 1) ctx.all_reduce(Axis::Tp, dev.data(), dev.size());
    if (d_.cp > 1) ctx.all_reduce(Axis::Cp, dev.data(), dev.size());
    sequence_stats = download(be, dev.data(), dev.size(), ctx.compute);
    AuxLoss aux = load_balancing_loss(sequence_stats, shape, d_.seq, d_.aux_coef, d_.global_batch);
    if (tp_rank_ == 0 && cp_rank_ == 0) aux_loss_ += aux.loss;
    return std::move(aux.grad);
}

// Without sequence parallelism each TP rank routed 1/tp of the rows: all of them again.
Tensor MoeLayer::gather_routed(RankContext& ctx, Tensor routed) {
    if (!split_tokens()) return routed;
    Tensor all(ctx.be, d_.rows, d_.hidden);
    ctx.all_gather(Axis::Tp, routed.ptr(), all.ptr(), routed.size());
    return all;
}

Tensor MoeLayer::forward(RankContext& ctx, ParamStore& store, const MicroBatch& mb, const Tensor& x) {
    Cache c;
    c.x = clone(ctx, x);
    c.htok = normalise(ctx, store, x, c);
    const RouteShape shape = route_shape(c.row0);
    c.routing = route_tokens(router_forward(ctx, store, c.htok), shape);
    c.aux_grad = balance_loss(ctx, c.routing.sequence_stats, shape);
    const DispatchPlan plan = plan_dispatch(c.routing.kept, c.routing.weights, d_.top_k, placement_);
    c.sent = plan.rows;
    Tensor expert_in = dispatch_tokens(ctx, plan, static_cast<int>(local_.size()), c.htok, c.exchange);
    const Tensor expert_out = experts_forward(ctx, store, expert_block(c, "experts.fwd"), std::move(expert_in), c.experts);
    Tensor y = combine_forward(ctx, c.exchange, expert_out, shape.tokens, {pname("combine.fwd"), block_}, c.returned);
    Tensor out = gather_routed(ctx, std::move(y));
    ctx.be.axpy(out.ptr(), x.ptr(), out.size(), 1.0f, ctx.compute);
    cache_[mb.index] = std::move(c);
    return out;
}

// Through the renormalised top-k weights and the load-balancing loss, then the softmax:
// the router's weight gradient, and its input gradient added to `dhtok`.
void MoeLayer::router_backward(RankContext& ctx, ParamStore& store, const Cache& c, const Floats& d_weights,
                               Tensor& dhtok) {
    Backend& be = ctx.be;
    const Stream s = ctx.compute;
    const int n = dhtok.rows, E = d_.experts, H = d_.hidden;
    const std::vector<float> dlogits =
        router_logit_grad(c.routing, route_shape(c.row0), c.sent, download(be, d_weights.data(), d_weights.size(), s),
                          c.aux_grad);
    RankContext::Op op(ctx, pname("router.bwd"), block_, 2 * gemm_flops(n, E, H));
    Floats dl(be, dlogits.size());
    be.copy_to_device(dl.data(), dlogits.data(), dlogits.size() * sizeof(float), s);
    matmul_nt(be, s, dl.data(), store.value(router_), dhtok.ptr(), n, H, E, 1.0f);
    matmul_tn(be, s, c.htok.ptr(), dl.data(), store.grad(router_), H, E, n);
}

Tensor MoeLayer::backward(RankContext& ctx, ParamStore& store, const MicroBatch& mb, const Tensor& dout) {
    Backend& be = ctx.be;
    Cache c = std::move(cache_.at(mb.index));
    cache_.erase(mb.index);
    // The gradient of each token's output: the slice this rank routed.
    const float* dy = split_tokens() ? dout.row(c.row0) : dout.ptr();
    CombineGrad g = combine_backward(ctx, c.exchange, dy, c.returned);
    const Tensor dx_expert = experts_backward(ctx, store, expert_block(c, "experts.bwd"), c.experts, g.d_expert_out);
    Tensor dhtok = dispatch_backward(ctx, c.exchange, dx_expert, routed_tokens());
    router_backward(ctx, store, c, g.d_weights, dhtok);
    const Tensor dh = gather_routed(ctx, std::move(dhtok));
    Tensor dx(be, c.x.rows, d_.hidden);
    RankContext::Op op(ctx, pname("norm.bwd"), block_, 0);
    be.rmsnorm_backward(dh.ptr(), c.x.ptr(), store.value(norm_), c.rstd.data(), dx.ptr(), store.grad(norm_),
                        c.x.rows, d_.hidden, ctx.compute);
    be.axpy(dx.ptr(), dout.ptr(), dx.size(), 1.0f, ctx.compute);
    return dx;
}

}  // namespace meshwork::engine
