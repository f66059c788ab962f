// The speed-only knobs of a layout: settings that production recipes tune and that change
// how fast a step runs (and, for the recompute modules, what memory it holds) but not what
// it computes. The search explores every one the user did not pin, per candidate, and the
// candidate keeps what it chose (docs/search.md, "Speed-only knobs").
//
// Why per candidate: the best value of a knob depends on the rest of the layout (TP overlap
// only matters with SP and tp > 1, the data-parallel overlaps with a data-parallel
// reduction, the all-to-all overlap where Megatron-LM runs it), so one job-wide value
// compares a tuned run with an untuned prediction (issue 28, pattern 4).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/cost/cost_model.h"
#include "core/layout/layout.h"
#include "core/layout/recompute_modules.h"

namespace meshwork::search {

struct Candidate;
struct SearchOptions;

// One candidate's knob values.
struct Tuning {
    TpOverlap tp_comm_overlap = TpOverlap::None;  // only with SP and tp > 1
    bool overlap_grad_reduce = true;
    bool overlap_param_gather = true;  // only with overlap_grad_reduce
    MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;
    MoeFlexBackend moe_flex_backend = MoeFlexBackend::DeepEP;
    bool moe_a2a_overlap = false;  // only where rules::moe_a2a_overlap_runs
    // Selective candidates: the recomputed modules as bits (1 << RecomputeModule); 0 is
    // Megatron-LM's default (core_attn) or the job's pinned list.
    std::uint32_t recompute_modules = 0;
    // CUDA-graph capture (training.cuda_graphs, core/layout/speed_knobs.h): per layer where
    // the layer runs once per pass (no full recomputation), full iteration where no dropless
    // MoE layer forbids it (rules::per_layer_graphs_without_full_recompute,
    // rules::full_iteration_graphs_capturable).
    CudaGraphs cuda_graphs = CudaGraphs::None;
    // Which of the knobs above apply to the candidate (bits set by Tuner::tune; the label
    // shows only these).
    std::uint8_t applicable = 0;
    bool operator==(const Tuning&) const = default;
};

// What the user pinned (a value) or left to the search (nullopt).
struct KnobPins {
    std::optional<TpOverlap> tp_comm_overlap;
    std::optional<bool> overlap_grad_reduce;
    std::optional<bool> overlap_param_gather;
    std::optional<MoeDispatcher> moe_dispatcher;  // with flex, moe_flex_backend pins the library
    std::optional<MoeFlexBackend> moe_flex_backend;
    std::optional<bool> moe_a2a_overlap;
    std::optional<std::vector<RecomputeModule>> recompute_modules;
    // A pinned value the candidate's rules forbid (per-layer with full recomputation) leaves
    // that candidate without graphs, as Megatron-LM would refuse the pair.
    std::optional<CudaGraphs> cuda_graphs;
};

// Writes `t` over the layout fields the cost model reads. `modules` is the list
// t.recompute_modules names (Tuner::modules); copied without allocating once
// training.recompute_modules has room for every module.
void apply_tuning(const Tuning& t, const std::vector<RecomputeModule>& modules, ParallelConfig& parallel,
                  TrainingConfig& training);

// ", tp overlap ring, dp overlap grad+param, dispatcher flex/hybridep, a2a overlap, cuda graphs
// per-layer" etc.: the
// knobs that apply to the candidate, for its label.
std::string tuning_label(const Candidate& c);

// The recompute-module list a bit set names, in kAllRecomputeModules order.
std::vector<RecomputeModule> recompute_module_list(std::uint32_t bits);

// Chooses the knobs of one candidate at a time. Owns its scratch estimates; does not
// allocate after construction.
class Tuner {
  public:
    Tuner(const SearchOptions& options, const ModelSpec& model, std::size_t max_pp);

    // Tunes `c` (its structural settings already written over parallel, placement and
    // training by apply_candidate) and leaves in `out` the estimate of the chosen knobs.
    // First the candidate's least-memory tuning (every applicable recompute module): when
    // that does not fit, no tuning does (only the modules change memory) and `out` is its
    // estimate. Otherwise a coordinate search from it, knob by knob in a fixed order, keeps a
    // value when it fits and is faster (recompute modules: drops modules by steepest descent
    // while the result fits and is no slower). With `must_beat_tokens_per_s` > 0 (the worst
    // of the results kept so far, when full) the search stops after the first estimate when
    // no tuning could beat it (a lower bound on the step, tuning.cpp). Returns the
    // cost-model calls made.
    int tune(Candidate& c, const CostModel& cost, ParallelConfig& parallel, const Placement& placement,
             TrainingConfig& training, Estimate& out, double must_beat_tokens_per_s = 0);

  private:
    [[nodiscard]] const std::vector<RecomputeModule>& modules(std::uint32_t bits) const;

    KnobPins pins_;
    std::uint32_t searched_modules_ = 0;  // the applicable modules, when not pinned
    std::vector<RecomputeModule> pinned_modules_;
    std::vector<std::vector<RecomputeModule>> lists_;  // by bit set, built up front
    DType dtype_ = DType::Bf16;
    int mtp_layers_ = 0;
    bool moe_ = false;
    Estimate trial_;
};

}  // namespace meshwork::search
