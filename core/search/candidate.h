// One point of the search space, kept as plain values (no allocation) until it is turned
// into a Layout for the results.
#pragma once

#include <string>

#include "core/layout/layout.h"
#include "core/search/search_options.h"
#include "core/search/stage_splits.h"
#include "core/search/tuning.h"

namespace meshwork::search {

// The axis sizes come from AxisSizes (core/mesh/mesh_shape.h); the rank order is the
// request's.
struct Candidate : AxisSizes {
    int vpp = 1;
    bool sequence_parallel = false;
    Schedule schedule = Schedule::OneFOneB;
    StageSplit split;
    int zero_stage = 0;
    Recompute recompute = Recompute::None;
    int micro_batch_size = 1;
    Tuning tuning;  // the speed-only knobs the search chose (tuning.h)
    bool operator==(const Candidate&) const = default;
};

// Writes the candidate's settings over `parallel`, `placement` and `training`, leaving the
// rest (order, global batch, sequence, dtype) as it is. Does not allocate once
// placement.layers_per_stage has capacity for pp·vpp entries.
void apply_candidate(const Candidate& c, ParallelConfig& parallel, Placement& placement,
                     TrainingConfig& training);

// The complete layout of `c` for the request's model, cluster and job.
Layout candidate_layout(const Candidate& c, const SearchRequest& request);

// A one-line description: "tp8 pp16 dp8 cp1 | 1f1b mbs1 | recompute selective, sp, zero1,
// modules core_attn, tp overlap ring, dp overlap grad+param" (the knobs that apply).
std::string candidate_label(const Candidate& c);

}  // namespace meshwork::search
