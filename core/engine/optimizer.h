// The end of a training step: gradients summed across replicas (TP partial sums first, then
// bucketed all-reduce over the data-parallel groups, or under ZeRO-1/2 a reduce-scatter so
// that each rank updates only its shard and all-gathers the parameters), and AdamW.
#pragma once

#include "core/engine/engine_options.h"
#include "core/engine/params.h"
#include "core/engine/rank_context.h"

namespace meshwork::engine {

class Optimizer {
public:
    Optimizer(RankContext& ctx, ParamStore& store, const EngineOptions& options, int zero_stage);
    // Reduces the gradients and updates the parameters; `step` is 1-based.
    void step(RankContext& ctx, ParamStore& store, int step);

    // Adam state floats this rank holds (m and v).
    [[nodiscard]] std::size_t state_floats() const;

private:
    struct GroupState {
        Axis comm = Axis::DpCp;
        bool sharded = false;
        std::size_t begin = 0, count = 0;  // this rank's range of the flat buffer
        std::vector<std::size_t> counts;   // every rank's shard (sharded only)
        Floats m, v;
    };
    void adam_range(RankContext& ctx, ParamStore& store, ReduceGroup g, std::size_t begin,
                    std::size_t count, float* m, float* v, int step);

    EngineOptions options_;
    GroupState groups_[kReduceGroups];
};

}  // namespace meshwork::engine
