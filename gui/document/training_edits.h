// Edits of the training settings (layout.training and the pipeline split) that the Training
// dock makes. Each is one setting changed through set_setting(), described "Set recompute to
// full" in the undo history; whether the result is allowed is decided by validate_layout() in
// LayoutDocument::apply() (which also refuses an edit that changes nothing).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gui/document/layout_edits.h"

namespace meshwork::gui {

// The generic edit: `change` applied to a copy of `layout`, named after `setting` and `value`
// ("Set <setting> to <value>"); consecutive edits of one setting merge into one undo step.
// New settings need only a line that calls it.
ProposedEdit set_setting(const Layout& layout, const std::string& setting, const std::string& value,
                         const std::function<void(Layout&)>& change);

ProposedEdit set_micro_batch_size(const Layout& layout, int sequences);
ProposedEdit set_global_batch_size(const Layout& layout, int sequences);
ProposedEdit set_seq_length(const Layout& layout, int tokens);
ProposedEdit set_zero_stage(const Layout& layout, int stage);
// Hybrid sharding: the ZeRO shard group replicated `replicas` times (training.zero_replicas).
ProposedEdit set_zero_replicas(const Layout& layout, int replicas);
// ZeRO-3's shards as PyTorch FSDP keeps them (training.fsdp_fp32_shards).
ProposedEdit set_fsdp_fp32_shards(const Layout& layout, bool on);
// Leaving full recomputation also clears recompute_num_layers (it counts fully recomputed
// layers: layout_rules.h recompute_layers_need_full), as SP off turns the TP overlap off.
ProposedEdit set_recompute(const Layout& layout, Recompute recompute);
ProposedEdit set_recompute_num_layers(const Layout& layout, int layers);  // 0: every layer
// The modules selective recomputation reruns (training.recompute_modules; empty: Megatron's
// default, core attention alone). Leaving selective recomputation clears them (they are read
// only with it: layout_rules.h recompute_modules_need_selective).
ProposedEdit set_recompute_modules(const Layout& layout, const std::vector<RecomputeModule>& modules);
ProposedEdit set_offload_optimizer(const Layout& layout, Offload where);
ProposedEdit set_offload_params(const Layout& layout, Offload where);
// Activations of the first `layers` layers on the host (training.offload_activation_layers).
ProposedEdit set_offload_activation_layers(const Layout& layout, int layers);
ProposedEdit set_dtype(const Layout& layout, DType dtype);
// Gradients kept and reduced in bf16 (training.grad_reduce_in_bf16) or in fp32.
ProposedEdit set_grad_reduce_in_bf16(const Layout& layout, bool on);
ProposedEdit set_cross_entropy(const Layout& layout, CrossEntropy loss);
ProposedEdit set_attention_kernel(const Layout& layout, AttentionKernel kernel);
ProposedEdit set_flash_attention(const Layout& layout, bool on);
ProposedEdit set_fused_elementwise(const Layout& layout, bool on);
// The fp8 GEMMs' scaling (training.fp8_recipe) and CUDA-graph capture (training.cuda_graphs).
ProposedEdit set_fp8_recipe(const Layout& layout, Fp8Recipe recipe);
ProposedEdit set_cuda_graphs(const Layout& layout, CudaGraphs graphs);
// What per-layer graphs capture (training.cuda_graph_modules; empty: the whole layer).
ProposedEdit set_cuda_graph_modules(const Layout& layout, GraphModules modules);
ProposedEdit set_schedule(const Layout& layout, Schedule schedule);
ProposedEdit set_moe_capacity_factor(const Layout& layout, double factor);  // 0: dropless
// HybridEP's per-rank token budget (training.moe_rank_capacity_factor); 0: none.
ProposedEdit set_moe_rank_capacity_factor(const Layout& layout, double factor);

// The pipeline split as Megatron-LM's flags state it (core/layout/pipeline_split.h, the one
// owner of the arithmetic): even, the embedding and/or the loss counted as a layer, or uneven
// first / last pipeline ranks (nullopt: that rank holds the middle count). Refused with
// Megatron-LM's reason where it refuses the combination.
struct PipelineSplitRule {
    enum class Kind { Even, Accounted, Uneven } kind = Kind::Even;
    bool embedding = false, loss = false;
    std::optional<int> first, last;
};
ProposedEdit set_pipeline_split(const Layout& layout, const PipelineSplitRule& rule);
// The rule that builds the layout's current split; nullopt for a split placed by hand.
std::optional<PipelineSplitRule> pipeline_split_rule(const Layout& layout);
// Transformer layers on each pipeline rank (the sum of its vpp chunks), pp entries.
std::vector<int> layers_per_pipeline_rank(const Layout& layout);

}  // namespace meshwork::gui
