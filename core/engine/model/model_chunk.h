// One model chunk (a pipeline stage, or one of a stage's virtual stages under the
// interleaved schedule): a run of transformer blocks, plus the embedding on the first chunk
// and the final norm, LM head and loss on the last.
#pragma once

#include <memory>
#include <vector>

#include "core/engine/model/attention.h"
#include "core/engine/model/embedding.h"
#include "core/engine/model/mlp.h"
#include "core/engine/model/moe.h"

namespace meshwork::engine {

class ModelChunk {
public:
    ModelChunk(ParamStore& store, const ModelDims& d, const Layout& layout,
               const RankCoords& coords, int first_layer, int num_layers, bool first, bool last);

    [[nodiscard]] bool first() const { return embedding_ != nullptr; }
    [[nodiscard]] bool last() const { return head_ != nullptr; }

    // input: the previous chunk's output (ignored on the first chunk). Returns the output
    // activation (empty on the last chunk, which keeps the loss instead).
    Tensor forward(RankContext& ctx, ParamStore& store, const MicroBatch& mb, Tensor input);
    // dout: gradient of the output (ignored on the last chunk). Returns the gradient of the
    // input (empty on the first chunk).
    Tensor backward(RankContext& ctx, ParamStore& store, const MicroBatch& mb, Tensor dout);

    double take_loss();
    double take_aux_loss();

private:
    struct Block {
        int layer = 0;  // transformer block index in the whole model (NVTX range names)
        std::unique_ptr<AttentionLayer> attention;
        std::unique_ptr<MlpLayer> mlp;
        std::unique_ptr<MoeLayer> moe;
    };
    std::unique_ptr<EmbeddingLayer> embedding_;
    std::vector<Block> blocks_;
    std::unique_ptr<LmHeadLayer> head_;
};

}  // namespace meshwork::engine
