// The analytical cost model: memory per stage, step time, MFU and bubble of a layout.
//
//     CostModel model(layout.model, layout.cluster);  // once per model and cluster
//     Estimate e;
//     model.estimate(layout, e);                      // per layout: no allocation once
//                                                      // e.stages has room for pp entries
//
// or, for one layout, `estimate_layout(layout)`, which validates first. Formulas, sources
// and limits: docs/cost-model.md. The simulator (core/sim) shares the per-block costs.
#pragma once

#include "core/cluster/cluster_spec.h"
#include "core/cost/block_cost.h"
#include "core/cost/estimate.h"
#include "core/cost/model_profile.h"
#include "core/layout/layout.h"

namespace meshwork {

// One micro-batch through one model chunk on one rank: the unit the pipeline is made of.
struct ChunkCost {
    int chunk = 0;        // global model chunk, 0 … pp·vpp − 1
    int first_layer = 0;
    int layers = 0;
    int moe_layers = 0;
    int recomputed_layers = 0;  // fully recomputed blocks
    cost::PassParts fwd;        // embedding / head included on the first / last chunk
    cost::PassParts bwd;        // recomputation included
    double dense_params = 0, expert_params = 0;
    double activation_bytes = 0;  // stored for one micro-batch
    double working_bytes = 0;     // transient: one fully recomputed block's activations
    double transient_bytes = 0;   // logits of the live micro-batch (last chunk)
    double hardware_flops = 0;
    double edge_params = 0;       // embedding / head parameters (first / last chunk)
};

class CostModel {
public:
    CostModel(const ModelSpec& model, const ClusterSpec& cluster);
    explicit CostModel(const Layout& layout) : CostModel(layout.model, layout.cluster) {}

    // Costs the parallel, placement and training settings of `layout` (its model and
    // cluster must be those this CostModel was built for). Assumes a layout that
    // validate_layout accepts; throws InputError for sizes no validation lets through.
    // Keeps no state: one CostModel may serve several threads, each with its own `out`.
    void estimate(const Layout& layout, Estimate& out) const;
    void estimate(const ParallelConfig& parallel, const Placement& placement,
                  const TrainingConfig& training, Estimate& out) const;

    [[nodiscard]] const cost::ModelProfile& profile() const { return profile_; }
    [[nodiscard]] const ModelSpec& model() const { return model_; }
    [[nodiscard]] const ClusterSpec& cluster() const { return cluster_; }

    // The per-block costs of a layout (what estimate() starts from; the simulator uses it).
    void prepare(const ParallelConfig& parallel, const TrainingConfig& training,
                 cost::LayoutCosts& out) const;
    // Cost of global model chunk `chunk` under prepared costs `c`.
    [[nodiscard]] ChunkCost chunk_cost(const cost::LayoutCosts& c, const Placement& placement,
                                       int chunk) const;
    // The same with the chunk's first layer given: estimate() carries it from stage to stage
    // (summing an explicit split up to each chunk is quadratic in the chunk count).
    [[nodiscard]] ChunkCost chunk_cost(const cost::LayoutCosts& c, const Placement& placement,
                                       int chunk, int first_layer) const;

    // Layers of global model chunk `chunk` (of pp·vpp) and its first layer, resolving the
    // even split without allocating (the same split as Layout::stage_layers()).
    static int chunk_layers(const Placement& placement, int layers, int chunks, int chunk);
    // Blocks with an MoE layer among layers [first, first + count).
    [[nodiscard]] int moe_blocks(int first, int count) const;
    // Most routed experts any EP rank holds.
    [[nodiscard]] int max_local_experts(const Placement& placement, int ep) const;

private:
    ModelSpec model_;
    ClusterSpec cluster_;
    cost::ModelProfile profile_;
};

// Validates (require_valid_layout: InputError for an invalid layout) and estimates.
Estimate estimate_layout(const Layout& layout);

// Closed forms of the pipeline bubble for uniform stages, as fractions of the pipeline
// span: GPipe and 1F1B (p − 1)/(m + p − 1); interleaved (p − 1)/(v·m + p − 1). Relative to
// the ideal time they are (p − 1)/m and (p − 1)/(v·m).
double pipeline_bubble_fraction(Schedule schedule, int pp, int vpp, int micro_batches);

}  // namespace meshwork
