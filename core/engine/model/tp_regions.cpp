#include "core/engine/model/tp_regions.h"

#include <vector>

namespace meshwork::engine {

namespace {
std::vector<std::size_t> row_counts(const ModelDims& d, int cols) {
    return std::vector<std::size_t>(static_cast<std::size_t>(d.tp),
                                    static_cast<std::size_t>(d.region_rows) * static_cast<std::size_t>(cols));
}
}  // namespace

Tensor clone(RankContext& ctx, const Tensor& t) {
    Tensor out(ctx.be, t.rows, t.cols);
    ctx.be.copy(out.ptr(), t.ptr(), t.size() * sizeof(float), ctx.compute);
    return out;
}

Tensor gather_for_tp(RankContext& ctx, const ModelDims& d, const Tensor& region) {
    if (!d.sp) return clone(ctx, region);
    Tensor full(ctx.be, d.rows, region.cols);
    ctx.all_gather_v(Axis::Tp, region.ptr(), full.ptr(), row_counts(d, region.cols));
    return full;
}

Tensor reduce_from_tp(RankContext& ctx, const ModelDims& d, Tensor& partial) {
    if (!d.sp) {
        ctx.all_reduce(Axis::Tp, partial.ptr(), partial.size());
        return std::move(partial);
    }
    Tensor region(ctx.be, d.region_rows, partial.cols);
    ctx.reduce_scatter_v(Axis::Tp, partial.ptr(), region.ptr(), row_counts(d, partial.cols));
    return region;
}

Tensor reduce_tp_input_grad(RankContext& ctx, const ModelDims& d, Tensor& partial) {
    return reduce_from_tp(ctx, d, partial);
}

}  // namespace meshwork::engine
