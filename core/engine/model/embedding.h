// The vocabulary-parallel input embedding (each TP rank holds vocab/tp rows; tokens outside
// a rank's rows contribute zeros and the partial rows are summed over TP) and the
// vocabulary-parallel LM head with its final RMSNorm and the cross-entropy loss, computed
// without gathering the logits (max, sum of exponentials and target logit are all-reduced).
#pragma once

#include <map>

#include "core/engine/model/dims.h"
#include "core/engine/model/micro_batch.h"
#include "core/engine/params.h"
#include "core/engine/rank_context.h"

namespace meshwork::engine {

class EmbeddingLayer {
public:
    EmbeddingLayer(ParamStore& store, const ModelDims& d, int tp_rank);
    Tensor forward(RankContext& ctx, ParamStore& store, const MicroBatch& mb);
    void backward(RankContext& ctx, ParamStore& store, const MicroBatch& mb, const Tensor& dout);

private:
    ModelDims d_;
    int table_;
    int vocab_begin_;
};

class LmHeadLayer {
public:
    LmHeadLayer(ParamStore& store, const ModelDims& d, int tp_rank);
    // Adds this micro-batch's share of the mean loss over the global batch to the loss kept
    // for take_loss().
    void forward(RankContext& ctx, ParamStore& store, const MicroBatch& mb, const Tensor& x);
    Tensor backward(RankContext& ctx, ParamStore& store, const MicroBatch& mb);
    // Counted on TP rank 0 only (every TP rank computes the same value).
    double take_loss();

private:
    struct Cache {
        Tensor x, h, logits;
        Floats rstd, row_max, sum_exp;
    };
    ModelDims d_;
    int tp_rank_;
    int norm_, weight_;
    int vocab_begin_;
    Floats row_weight_;
    double loss_ = 0;
    std::map<int, Cache> cache_;
};

}  // namespace meshwork::engine
