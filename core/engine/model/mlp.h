// The gated MLP (SwiGLU) with its RMSNorm and residual add: gate and up projections
// column-parallel, down projection row-parallel.
#pragma once

#include <map>

#include "core/engine/model/dims.h"
#include "core/engine/model/pre_norm.h"
#include "core/engine/model/micro_batch.h"
#include "core/engine/params.h"
#include "core/engine/rank_context.h"

namespace meshwork::engine {

class MlpLayer {
public:
    MlpLayer(ParamStore& store, const ModelDims& d, int block, int tp_rank);
    Tensor forward(RankContext& ctx, ParamStore& store, const MicroBatch& mb, const Tensor& x);
    Tensor backward(RankContext& ctx, ParamStore& store, const MicroBatch& mb, const Tensor& dout);

private:
    [[nodiscard]] PreNorm pre_norm() const;
    struct Cache {
        Tensor x, h, gate, up, act;
        Floats rstd;
    };
    ModelDims d_;
    int block_;
    int norm_, wg_, wu_, wd_;
    std::map<int, Cache> cache_;
};

}  // namespace meshwork::engine
