#include "core/engine/model/model_chunk.h"

#include "core/engine/nvtx/scoped_range.h"

namespace meshwork::engine {

ModelChunk::ModelChunk(ParamStore& store, const ModelDims& d, const Layout& layout,
                       const RankCoords& coords, int first_layer, int num_layers, bool first,
                       bool last) {
    if (first) embedding_ = std::make_unique<EmbeddingLayer>(store, d, coords.tp);
    const auto experts = layout.ep_experts();
    for (int b = first_layer; b < first_layer + num_layers; ++b) {
        Block blk;
        blk.layer = b;
        blk.attention = std::make_unique<AttentionLayer>(store, d, b, coords.tp);
        if (layout.model.is_moe_block(b)) {
            blk.moe = std::make_unique<MoeLayer>(store, d, b, coords, experts);
        } else {
            blk.mlp = std::make_unique<MlpLayer>(store, d, b, coords.tp);
        }
        blocks_.push_back(std::move(blk));
    }
    if (last) head_ = std::make_unique<LmHeadLayer>(store, d, coords.tp);
}

Tensor ModelChunk::forward(RankContext& ctx, ParamStore& store, const MicroBatch& mb,
                           Tensor input) {
    Tensor x = embedding_ ? embedding_->forward(ctx, store, mb) : std::move(input);
    for (auto& blk : blocks_) {
        const ScopedRange range(ctx.be, range_name::layer(blk.layer, "fwd"));
        x = blk.attention->forward(ctx, store, mb, x);
        x = blk.moe ? blk.moe->forward(ctx, store, mb, x) : blk.mlp->forward(ctx, store, mb, x);
    }
    if (head_) {
        head_->forward(ctx, store, mb, x);
        return {};
    }
    return x;
}

Tensor ModelChunk::backward(RankContext& ctx, ParamStore& store, const MicroBatch& mb,
                            Tensor dout) {
    Tensor dx = head_ ? head_->backward(ctx, store, mb) : std::move(dout);
    for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
        const ScopedRange range(ctx.be, range_name::layer(it->layer, "bwd"));
        dx = it->moe ? it->moe->backward(ctx, store, mb, dx) : it->mlp->backward(ctx, store, mb, dx);
        dx = it->attention->backward(ctx, store, mb, dx);
    }
    if (embedding_) {
        embedding_->backward(ctx, store, mb, dx);
        return {};
    }
    return dx;
}

double ModelChunk::take_loss() { return head_ ? head_->take_loss() : 0.0; }

double ModelChunk::take_aux_loss() {
    double sum = 0;
    for (auto& blk : blocks_) {
        if (blk.moe) sum += blk.moe->take_aux_loss();
    }
    return sum;
}

}  // namespace meshwork::engine
