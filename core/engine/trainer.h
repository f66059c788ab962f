// One rank's training: its model chunks and parameters (initialised as shards of the full
// tensors), its micro-batches cut from the token stream, and a step = pipeline schedule +
// gradient reduction + AdamW, with the loss summed over the world.
#pragma once

#include <memory>
#include <vector>

#include "core/engine/engine_options.h"
#include "core/engine/model/model_chunk.h"
#include "core/engine/optimizer.h"
#include "core/engine/token_stream.h"
#include "core/schedule/pipeline_schedule.h"

namespace meshwork::engine {

struct StepResult {
    int step = 0;            // 1-based
    double loss = 0;         // mean cross-entropy over the global batch plus the MoE aux loss
    double step_time_s = 0;
    double tokens_per_s = 0;
};

class RankTrainer {
public:
    RankTrainer(const Layout& layout, const EngineOptions& options, RankContext& ctx,
                const TokenStream& tokens);
    StepResult step(int step);  // 1-based
    [[nodiscard]] ParamStore& params() { return store_; }

private:
    std::vector<MicroBatch> micro_batches(int step);

    Layout layout_;
    EngineOptions options_;
    RankContext& ctx_;
    const TokenStream& tokens_;
    ModelDims d_;
    ParamStore store_;
    std::vector<std::unique_ptr<ModelChunk>> chunks_;
    PipelineSchedule schedule_;
    std::unique_ptr<Optimizer> optimizer_;
};

// Registers this rank's parameters without allocating them (memory estimates).
ParamStore plan_params(const Layout& layout, const ModelDims& d, const RankCoords& coords);

}  // namespace meshwork::engine
