#include "core/engine/model/moe_experts.h"

#include <utility>

#include "core/engine/model/index.h"
#include "core/engine/model/linear.h"

namespace meshwork::engine {

Tensor experts_forward(RankContext& ctx, ParamStore& store, const ExpertBlock& block, Tensor x,
                       ExpertActivations& keep) {
    Backend& be = ctx.be;
    const Stream s = ctx.compute;
    const int rows = x.rows, H = x.cols;
    const int Fe = block.ffn;
    keep.x = std::move(x);
    keep.gate = Tensor(be, rows, Fe);
    keep.up = Tensor(be, rows, Fe);
    keep.act = Tensor(be, rows, Fe);
    Tensor out(be, rows, H);
    RankContext::Op op(ctx, block.op_name, block.layer, gemm_flops(rows, Fe, H) * 3);
    int r0 = 0;
    for (std::size_t j = 0; j < block.experts.size(); ++j) {
        const int m = block.rows[j];
        const MoeExpert& ex = block.experts[j];
        matmul(be, s, keep.x.row(r0), store.value(ex.w_gate), keep.gate.row(r0), m, Fe, H);
        matmul(be, s, keep.x.row(r0), store.value(ex.w_up), keep.up.row(r0), m, Fe, H);
        be.swiglu_forward(keep.gate.row(r0), keep.up.row(r0), keep.act.row(r0), ix(m) * ix(Fe), s);
        matmul(be, s, keep.act.row(r0), store.value(ex.w_down), out.row(r0), m, H, Fe);
        r0 += m;
    }
    return out;
}

Tensor experts_backward(RankContext& ctx, ParamStore& store, const ExpertBlock& block,
                        const ExpertActivations& keep, const Tensor& dout) {
    Backend& be = ctx.be;
    const Stream s = ctx.compute;
    const int rows = keep.x.rows, H = keep.x.cols, Fe = keep.gate.cols;
    Tensor dx(be, rows, H);
    RankContext::Op op(ctx, block.op_name, block.layer, gemm_flops(rows, Fe, H) * 6);
    Tensor dact(be, rows, Fe), dgate(be, rows, Fe), dup(be, rows, Fe);
    int r0 = 0;
    for (std::size_t j = 0; j < block.experts.size(); ++j) {
        const int m = block.rows[j];
        const MoeExpert& ex = block.experts[j];
        matmul_nt(be, s, dout.row(r0), store.value(ex.w_down), dact.row(r0), m, Fe, H);
        matmul_tn(be, s, keep.act.row(r0), dout.row(r0), store.grad(ex.w_down), Fe, H, m);
        be.swiglu_backward(dact.row(r0), keep.gate.row(r0), keep.up.row(r0), dgate.row(r0), dup.row(r0),
                           ix(m) * ix(Fe), s);
        matmul_nt(be, s, dgate.row(r0), store.value(ex.w_gate), dx.row(r0), m, H, Fe);
        matmul_nt(be, s, dup.row(r0), store.value(ex.w_up), dx.row(r0), m, H, Fe, 1.0f);
        matmul_tn(be, s, keep.x.row(r0), dgate.row(r0), store.grad(ex.w_gate), H, Fe, m);
        matmul_tn(be, s, keep.x.row(r0), dup.row(r0), store.grad(ex.w_up), H, Fe, m);
        r0 += m;
    }
    return dx;
}

}  // namespace meshwork::engine
