#include "core/engine/model/pre_norm.h"

#include "core/engine/model/tp_regions.h"

namespace meshwork::engine {

Tensor PreNorm::forward(RankContext& ctx, ParamStore& store, const Tensor& x, Tensor& cached_x, Floats& rstd) const {
    Backend& be = ctx.be;
    cached_x = clone(ctx, x);
    Tensor hr(be, x.rows, d.hidden);
    rstd = Floats(be, static_cast<std::size_t>(x.rows));
    {
        RankContext::Op op(ctx, prefix + ".norm.fwd", block, 0);
        be.rmsnorm_forward(x.ptr(), store.value(norm), hr.ptr(), rstd.data(), x.rows, d.hidden, d.rms_eps, ctx.compute);
    }
    return gather_for_tp(ctx, d, hr);
}

Tensor PreNorm::backward(RankContext& ctx, ParamStore& store, const Tensor& cached_x, const Floats& rstd, Tensor& dh,
                         const Tensor& dout) const {
    Backend& be = ctx.be;
    Tensor dhr = reduce_tp_input_grad(ctx, d, dh);
    Tensor dx(be, cached_x.rows, d.hidden);
    RankContext::Op op(ctx, prefix + ".norm.bwd", block, 0);
    be.rmsnorm_backward(dhr.ptr(), cached_x.ptr(), store.value(norm), rstd.data(), dx.ptr(), store.grad(norm),
                        cached_x.rows, d.hidden, ctx.compute);
    be.axpy(dx.ptr(), dout.ptr(), dx.size(), 1.0f, ctx.compute);
    return dx;
}

}  // namespace meshwork::engine
