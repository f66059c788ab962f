#include "core/engine/model/embedding.h"

#include <cmath>
#include <vector>

#include "core/engine/model/linear.h"
#include "core/engine/model/tp_regions.h"

namespace meshwork::engine {

EmbeddingLayer::EmbeddingLayer(ParamStore& store, const ModelDims& d, int tp_rank)
    : d_(d), vocab_begin_(tp_rank * d.vocab_local) {
    table_ = store.add({.name = "embedding", .full_rows = d.vocab, .full_cols = d.hidden,
                        .split = SplitDim::Rows, .parts = d.tp, .index = tp_rank});
}

Tensor EmbeddingLayer::forward(RankContext& ctx, ParamStore& store, const MicroBatch& mb) {
    Tensor partial(ctx.be, d_.rows, d_.hidden);
    {
        RankContext::Op op(ctx, "embedding.fwd", -1, 0);
        ctx.be.embedding_forward(store.value(table_), mb.tokens.data(), partial.ptr(), d_.rows,
                                 d_.hidden, vocab_begin_, d_.vocab_local, ctx.compute);
    }
    return reduce_from_tp(ctx, d_, partial);
}

void EmbeddingLayer::backward(RankContext& ctx, ParamStore& store, const MicroBatch& mb,
                              const Tensor& dout) {
    Tensor full = gather_for_tp(ctx, d_, dout);
    RankContext::Op op(ctx, "embedding.bwd", -1, 0);
    ctx.be.embedding_backward(full.ptr(), mb.tokens.data(), store.grad(table_), d_.rows,
                              d_.hidden, vocab_begin_, d_.vocab_local, ctx.compute);
}

LmHeadLayer::LmHeadLayer(ParamStore& store, const ModelDims& d, int tp_rank)
    : d_(d), tp_rank_(tp_rank), vocab_begin_(tp_rank * d.vocab_local) {
    norm_ = store.add({.name = "final_norm", .full_rows = 1, .full_cols = d.hidden,
                       .init = ParamInit::Ones, .tp_partial_grad = d.sp, .weight_decay = false});
    weight_ = store.add({.name = "lm_head", .full_rows = d.hidden, .full_cols = d.vocab,
                         .split = SplitDim::Cols, .parts = d.tp, .index = tp_rank});
}

void LmHeadLayer::forward(RankContext& ctx, ParamStore& store, const MicroBatch& mb,
                          const Tensor& x) {
    Backend& be = ctx.be;
    const Stream s = ctx.compute;
    const int rows = d_.rows, H = d_.hidden, V = d_.vocab_local;
    if (row_weight_.empty()) {
        // The loss is the mean over every token of the global batch.
        row_weight_ = Floats(be, static_cast<std::size_t>(rows));
        be.fill(row_weight_.data(), row_weight_.size(),
                static_cast<float>(1.0 / (static_cast<double>(d_.global_batch) * d_.seq)), s);
    }
    Cache c;
    c.x = clone(ctx, x);
    c.rstd = Floats(be, static_cast<std::size_t>(x.rows));
    Tensor hr(be, x.rows, H);
    {
        RankContext::Op op(ctx, "final_norm.fwd", -1, 0);
        be.rmsnorm_forward(x.ptr(), store.value(norm_), hr.ptr(), c.rstd.data(), x.rows, H, d_.rms_eps, s);
    }
    c.h = gather_for_tp(ctx, d_, hr);
    c.logits = Tensor(be, rows, V);
    c.row_max = Floats(be, static_cast<std::size_t>(rows));
    c.sum_exp = Floats(be, static_cast<std::size_t>(rows));
    Floats target_logit(be, static_cast<std::size_t>(rows));
    {
        RankContext::Op op(ctx, "lm_head.fwd", -1, gemm_flops(rows, V, H));
        matmul(be, s, c.h.ptr(), store.value(weight_), c.logits.ptr(), rows, V, H);
        be.row_max(c.logits.ptr(), c.row_max.data(), rows, V, s);
    }
    ctx.all_reduce(Axis::Tp, c.row_max.data(), c.row_max.size(), ReduceOp::Max);
    {
        RankContext::Op op(ctx, "cross_entropy.fwd", -1, 0);
        be.row_sum_exp_and_target(c.logits.ptr(), c.row_max.data(), mb.targets.data(), vocab_begin_,
                                  c.sum_exp.data(), target_logit.data(), rows, V, s);
    }
    ctx.all_reduce(Axis::Tp, c.sum_exp.data(), c.sum_exp.size());
    ctx.all_reduce(Axis::Tp, target_logit.data(), target_logit.size());
    const auto mx = download(be, c.row_max.data(), c.row_max.size(), s);
    const auto se = download(be, c.sum_exp.data(), c.sum_exp.size(), s);
    const auto tl = download(be, target_logit.data(), target_logit.size(), s);
    double sum = 0;
    for (int r = 0; r < rows; ++r) {
        sum += std::log(static_cast<double>(se[static_cast<std::size_t>(r)])) + mx[static_cast<std::size_t>(r)] -
               tl[static_cast<std::size_t>(r)];
    }
    if (tp_rank_ == 0) loss_ += sum / (static_cast<double>(d_.global_batch) * d_.seq);
    cache_[mb.index] = std::move(c);
}

Tensor LmHeadLayer::backward(RankContext& ctx, ParamStore& store, const MicroBatch& mb) {
    Backend& be = ctx.be;
    const Stream s = ctx.compute;
    Cache c = std::move(cache_.at(mb.index));
    cache_.erase(mb.index);
    const int rows = d_.rows, H = d_.hidden, V = d_.vocab_local;
    Tensor dh(be, rows, H);
    {
        RankContext::Op op(ctx, "lm_head.bwd", -1, 2 * gemm_flops(rows, V, H));
        be.cross_entropy_backward(c.logits.ptr(), c.row_max.data(), c.sum_exp.data(), mb.targets.data(),
                                  vocab_begin_, row_weight_.data(), rows, V, s);
        matmul_nt(be, s, c.logits.ptr(), store.value(weight_), dh.ptr(), rows, H, V);
        matmul_tn(be, s, c.h.ptr(), c.logits.ptr(), store.grad(weight_), H, V, rows);
    }
    Tensor dhr = reduce_tp_input_grad(ctx, d_, dh);
    Tensor dx(be, c.x.rows, H);
    RankContext::Op op(ctx, "final_norm.bwd", -1, 0);
    be.rmsnorm_backward(dhr.ptr(), c.x.ptr(), store.value(norm_), c.rstd.data(), dx.ptr(),
                        store.grad(norm_), c.x.rows, H, s);
    return dx;
}

double LmHeadLayer::take_loss() { return std::exchange(loss_, 0.0); }

}  // namespace meshwork::engine
