#include "core/engine/model/mlp.h"

#include "core/engine/model/linear.h"
#include "core/engine/model/pre_norm.h"
#include "core/engine/model/tp_regions.h"

namespace meshwork::engine {

namespace {
std::string pname(int block, const char* what) {
    return "block." + std::to_string(block) + ".mlp." + what;
}
}  // namespace

PreNorm MlpLayer::pre_norm() const { return {d_, norm_, block_, "block." + std::to_string(block_) + ".mlp"}; }

MlpLayer::MlpLayer(ParamStore& store, const ModelDims& d, int block, int tp_rank)
    : d_(d), block_(block) {
    norm_ = store.add({.name = "block." + std::to_string(block) + ".post_attention_norm",
                       .full_rows = 1, .full_cols = d.hidden, .init = ParamInit::Ones,
                       .tp_partial_grad = d.sp, .weight_decay = false});
    wg_ = store.add({.name = pname(block, "w_gate"), .full_rows = d.hidden, .full_cols = d.ffn,
                     .split = SplitDim::Cols, .parts = d.tp, .index = tp_rank});
    wu_ = store.add({.name = pname(block, "w_up"), .full_rows = d.hidden, .full_cols = d.ffn,
                     .split = SplitDim::Cols, .parts = d.tp, .index = tp_rank});
    wd_ = store.add({.name = pname(block, "w_down"), .full_rows = d.ffn, .full_cols = d.hidden,
                     .split = SplitDim::Rows, .parts = d.tp, .index = tp_rank});
}

Tensor MlpLayer::forward(RankContext& ctx, ParamStore& store, const MicroBatch& mb,
                         const Tensor& x) {
    Backend& be = ctx.be;
    const Stream s = ctx.compute;
    const int rows = d_.rows, H = d_.hidden, F = d_.ffn_local;
    Cache c;
    c.h = pre_norm().forward(ctx, store, x, c.x, c.rstd);
    c.gate = Tensor(be, rows, F);
    c.up = Tensor(be, rows, F);
    c.act = Tensor(be, rows, F);
    Tensor y(be, rows, H);
    {
        RankContext::Op op(ctx, pname(block_, "fwd"), block_, gemm_flops(rows, F, H) * 3);
        matmul(be, s, c.h.ptr(), store.value(wg_), c.gate.ptr(), rows, F, H);
        matmul(be, s, c.h.ptr(), store.value(wu_), c.up.ptr(), rows, F, H);
        be.swiglu_forward(c.gate.ptr(), c.up.ptr(), c.act.ptr(), c.act.size(), s);
        matmul(be, s, c.act.ptr(), store.value(wd_), y.ptr(), rows, H, F);
    }
    Tensor out = reduce_from_tp(ctx, d_, y);
    be.axpy(out.ptr(), x.ptr(), out.size(), 1.0f, s);
    cache_[mb.index] = std::move(c);
    return out;
}

Tensor MlpLayer::backward(RankContext& ctx, ParamStore& store, const MicroBatch& mb,
                          const Tensor& dout) {
    Backend& be = ctx.be;
    const Stream s = ctx.compute;
    Cache c = std::move(cache_.at(mb.index));
    cache_.erase(mb.index);
    const int rows = d_.rows, H = d_.hidden, F = d_.ffn_local;
    Tensor dy = gather_for_tp(ctx, d_, dout);
    Tensor dh(be, rows, H);
    {
        RankContext::Op op(ctx, pname(block_, "bwd"), block_, gemm_flops(rows, F, H) * 6);
        Tensor dact(be, rows, F), dgate(be, rows, F), dup(be, rows, F);
        matmul_nt(be, s, dy.ptr(), store.value(wd_), dact.ptr(), rows, F, H);
        matmul_tn(be, s, c.act.ptr(), dy.ptr(), store.grad(wd_), F, H, rows);
        be.swiglu_backward(dact.ptr(), c.gate.ptr(), c.up.ptr(), dgate.ptr(), dup.ptr(), dact.size(), s);
        matmul_nt(be, s, dgate.ptr(), store.value(wg_), dh.ptr(), rows, H, F);
        matmul_nt(be, s, dup.ptr(), store.value(wu_), dh.ptr(), rows, H, F, 1.0f);
        matmul_tn(be, s, c.h.ptr(), dgate.ptr(), store.grad(wg_), H, F, rows);
        matmul_tn(be, s, c.h.ptr(), dup.ptr(), store.grad(wu_), H, F, rows);
    }
    return pre_norm().backward(ctx, store, c.x, c.rstd, dh, dout);
}

}  // namespace meshwork::engine
