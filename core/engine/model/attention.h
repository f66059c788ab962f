// Causal self-attention (MHA/GQA) with rotary positions, preceded by its RMSNorm and
// followed by the residual add: column-parallel Q/K/V (heads split over tp), row-parallel
// output projection, K/V passed around the cp ring.
#pragma once

#include <map>

#include "core/engine/model/dims.h"
#include "core/engine/model/pre_norm.h"
#include "core/engine/model/micro_batch.h"
#include "core/engine/params.h"
#include "core/engine/rank_context.h"

namespace meshwork::engine {

class AttentionLayer {
public:
    AttentionLayer(ParamStore& store, const ModelDims& d, int block, int tp_rank);
    // x: the residual stream (region layout). Returns x + attention(norm(x)).
    Tensor forward(RankContext& ctx, ParamStore& store, const MicroBatch& mb, const Tensor& x);
    // dout: gradient of the output; returns the gradient of x. Frees the micro-batch's cache.
    Tensor backward(RankContext& ctx, ParamStore& store, const MicroBatch& mb, const Tensor& dout);

private:
    [[nodiscard]] PreNorm pre_norm() const;
    struct Cache {
        Tensor x, h, q, k, v, kseq, vseq, probs, ctx;
        Floats rstd;
    };
    ModelDims d_;
    int block_;
    int norm_, wq_, wk_, wv_, wo_;
    std::map<int, Cache> cache_;
};

}  // namespace meshwork::engine
