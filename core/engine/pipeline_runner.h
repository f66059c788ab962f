// Runs one rank's passes of a training step in the order of the pipeline schedule generator
// that the simulator also uses (schedule/pipeline_schedule.h), exchanging activations and
// their gradients with the neighbouring stages by send/recv.
#pragma once

#include <memory>
#include <vector>

#include "core/engine/model/model_chunk.h"
#include "core/schedule/pipeline_schedule.h"

namespace meshwork::engine {

// chunks[c] is this rank's model chunk c (global chunk c·pp + stage); mbs[m] micro-batch m.
void run_pipeline(RankContext& ctx, ParamStore& store, const ModelDims& d,
                  std::vector<std::unique_ptr<ModelChunk>>& chunks,
                  const std::vector<PipeOp>& ops, std::vector<MicroBatch>& mbs);

}  // namespace meshwork::engine
