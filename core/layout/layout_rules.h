// The rules a layout must keep, as predicates on plain values: the one owner of each rule.
// validate_layout (layout_validate.cpp) builds its messages around them; the search's
// feasibility checks (core/search/feasibility.cpp) call them on millions of candidates
// without building a Layout. Each returns true when the rule holds. The upstream source of
// each rule is in docs/upstream-megatron.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/layout/layout.h"

namespace meshwork::rules {

// Attention heads split evenly over tp.
[[nodiscard]] inline bool tp_divides_heads(int heads, int tp) { return heads % tp == 0; }
// KV heads are split when tp divides them, replicated when they divide tp (MLA has none).
[[nodiscard]] inline bool tp_fits_kv_heads(int kv_heads, int tp, bool uses_mla) {
    return uses_mla || kv_heads % tp == 0 || tp % kv_heads == 0;
}
// The dense MLP's hidden size splits over tp (when the model has a dense MLP).
[[nodiscard]] inline bool tp_divides_mlp(std::int64_t ffn_hidden, int tp, bool has_dense_mlp) {
    return !has_dense_mlp || ffn_hidden % tp == 0;
}
// Every pipeline stage holds at least one layer.
[[nodiscard]] inline bool pp_within_layers(int pp, int layers) { return pp <= layers; }
// An even split gives every one of the pp·vpp model chunks a layer.
[[nodiscard]] inline bool layers_fill_chunks(int layers, long long chunks) { return layers >= chunks; }
// A model chunk holds at least one transformer layer; with two or more chunks the first and
// the last may hold none: the embedding alone, or the LM head and loss alone (Megatron-LM's
// accounted split, transformer_block.py:191-201 at d98e8a64).
[[nodiscard]] inline bool chunk_holds_enough(int layers, bool end_chunk) {
    return layers >= (end_chunk ? 0 : 1);
}
// Expert parallel axes exist only where there are experts.
[[nodiscard]] inline bool expert_axis_needs_experts(bool moe, int size) { return moe || size <= 1; }
// Expert layers fold onto the dense ranks: etp·ep divides tp·cp·dp (owned by mesh_shape.h).
using meshwork::experts_fold;
// ep splits the experts evenly.
[[nodiscard]] inline bool ep_divides_experts(int experts, int ep) { return experts % ep == 0; }
// etp splits each expert's hidden size.
[[nodiscard]] inline bool etp_divides_expert_mlp(std::int64_t expert_ffn_hidden, int etp) {
    return expert_ffn_hidden % etp == 0;
}
// Causal load balancing gives each CP rank two chunks: the sequence is a multiple of 2·cp.
[[nodiscard]] inline bool cp_balances_sequence(int seq_length, int cp) {
    return cp <= 1 || seq_length % (2 * cp) == 0;
}
// Sequence parallelism splits each CP rank's sequence over tp.
[[nodiscard]] inline bool sp_divides_sequence(int seq_length, int cp, int tp, bool sequence_parallel) {
    return !sequence_parallel || tp <= 1 || (seq_length / cp) % tp == 0;
}
// Tiled TP communication overlap needs sequence parallelism with tp > 1: Megatron-LM turns SP
// off at tp 1 and then asserts SP for --tp-comm-overlap (training/arguments.py:1436-1442).
[[nodiscard]] inline bool tp_overlap_needs_sp(TpOverlap overlap, int tp, bool sequence_parallel) {
    return overlap == TpOverlap::None || (tp > 1 && sequence_parallel);
}
// Recompute modules are read only with selective recomputation (Megatron-LM applies
// --recompute-modules with --recompute-granularity selective alone, transformer_config.py:
// 1943 at d98e8a64).
[[nodiscard]] inline bool recompute_modules_need_selective(Recompute recompute, std::size_t modules) {
    return modules == 0 || recompute == Recompute::Selective;
}
// "mla_up_proj" needs multi-latent attention (Megatron raises otherwise, :1969-1973).
[[nodiscard]] inline bool mla_up_proj_needs_mla(const std::vector<RecomputeModule>& modules, bool uses_mla) {
    for (RecomputeModule m : modules) {
        if (m == RecomputeModule::MlaUpProj && !uses_mla) return false;
    }
    return true;
}
// Megatron-LM runs the MoE all-to-all overlap (--overlap-moe-expert-parallel-comm) only with
// expert parallelism, the alltoall or flex dispatcher, virtual stages when pp > 1, no full
// recomputation, a 16-bit (or fp8) model and at most one MTP layer
// (transformer_config.py:3002-3046 at d98e8a64). The validation names each; the cost model
// and the search apply the overlap only where this holds.
[[nodiscard]] inline bool moe_a2a_overlap_runs(int ep, MoeDispatcher dispatcher, int pp, int vpp,
                                               Recompute recompute, DType dtype, int mtp_layers) {
    return ep > 1 && dispatcher != MoeDispatcher::AllGather && (pp == 1 || vpp > 1) &&
           recompute != Recompute::Full && dtype != DType::Fp32 && dtype != DType::Tf32 && mtp_layers <= 1;
}
// CUDA graphs per layer need a layer that runs once per pass: full recomputation reruns it
// inside the backward, which only the full-iteration graph captures (Megatron-LM d98e8a64
// transformer_config.py:2855-2858, "full recompute is only supported with full iteration CUDA
// graph"). An error.
[[nodiscard]] inline bool per_layer_graphs_without_full_recompute(CudaGraphs graphs, Recompute recompute) {
    return graphs != CudaGraphs::PerLayer || recompute != Recompute::Full;
}
// Megatron FSDP (ZeRO-3) with the MoE all-to-all overlap accepts no per-layer graphs
// (core/distributed/fsdp/mcore_fsdp_adapter.py:177-187 at d98e8a64). An error.
[[nodiscard]] inline bool per_layer_graphs_without_fsdp_a2a_overlap(CudaGraphs graphs, int zero_stage,
                                                                   bool moe_a2a_overlap) {
    return graphs != CudaGraphs::PerLayer || zero_stage != 3 || !moe_a2a_overlap;
}
// Static MoE shapes: capacity-padded routing, or HybridEP's per-rank token budget (sync-free
// experts; transformer_config.py:1019-1025, paged_stash.md:14-24 at d98e8a64).
[[nodiscard]] inline bool moe_static_shapes(double capacity_factor, double rank_capacity_factor) {
    return capacity_factor > 0 || rank_capacity_factor > 0;
}
// A full-iteration graph must capture every kernel of the step, which a dropless MoE layer's
// token-count synchronisation and dynamic shapes forbid (moe/README.md:514, "the resulting
// dynamic shapes make MoE layers uncapturable"; docs/user-guide/features/cuda_graph.md:161-175,
// "MoE expert dispatch involves dynamic shapes and cannot be captured"), unless the shapes are
// static (moe_static_shapes; the paged stash, cuda_graph.md:170-181). Megatron asserts nothing
// at start-up; the capture fails, so validation warns and the search never picks it for
// dynamic shapes.
[[nodiscard]] inline bool full_iteration_graphs_capturable(CudaGraphs graphs, bool moe, double capacity_factor,
                                                           double rank_capacity_factor) {
    return graphs != CudaGraphs::FullIteration || !moe || moe_static_shapes(capacity_factor, rank_capacity_factor);
}
// moe_expert_rank_capacity_factor "requires moe_flex_dispatcher_backend to be 'hybridep' or
// 'ncclep'" (transformer_config.py:1868-1873 at d98e8a64): the flex dispatcher with HybridEP.
[[nodiscard]] inline bool rank_capacity_needs_hybridep(double rank_capacity_factor, MoeDispatcher dispatcher,
                                                       MoeFlexBackend backend) {
    return rank_capacity_factor <= 0 || (dispatcher == MoeDispatcher::Flex && backend == MoeFlexBackend::HybridEP);
}
// Activation offload to the host (training.offload_activation_layers, Megatron-LM's
// --cpu-offloading-num-layers), each rule as Megatron-LM d98e8a64 transformer_config.py
// raises it. Errors.
// Fewer offloaded layers than the model has (:1884-1889).
[[nodiscard]] inline bool activation_offload_within_layers(int offload_layers, int layers) {
    return offload_layers < layers;
}
// One pipeline stage only (:1891-1894).
[[nodiscard]] inline bool activation_offload_without_pp(int offload_layers, int pp) {
    return offload_layers <= 0 || pp <= 1;
}
// No activation recomputation of any granularity (:1896-1899).
[[nodiscard]] inline bool activation_offload_without_recompute(int offload_layers, Recompute recompute) {
    return offload_layers <= 0 || recompute == Recompute::None;
}
// CUDA graphs only as a full-iteration graph (:2800-2801).
[[nodiscard]] inline bool activation_offload_graphs(int offload_layers, CudaGraphs graphs) {
    return offload_layers <= 0 || graphs == CudaGraphs::None || graphs == CudaGraphs::FullIteration;
}
// The interleaved schedule needs vpp ≥ 2 and pp ≥ 2.
[[nodiscard]] inline bool interleaved_has_chunks(Schedule schedule, int pp, int vpp) {
    return schedule != Schedule::Interleaved || (vpp >= 2 && pp >= 2);
}
// vpp > 1 means the interleaved schedule.
[[nodiscard]] inline bool vpp_needs_interleaved(Schedule schedule, int vpp) {
    return schedule == Schedule::Interleaved || vpp <= 1;
}
// The global batch is whole micro-batches on every data-parallel rank.
[[nodiscard]] inline bool batch_divides(long long global_batch, int dp, int micro_batch) {
    return global_batch % (static_cast<long long>(dp) * micro_batch) == 0;
}
// Megatron's interleaved schedule needs at least pp micro-batches: its micro-batch group
// lies in [pp, m] (pipeline_parallel/schedules.py:1160-1169); when pp does not divide m a
// larger group keeps the last one at least pp (interleaved_group_size, core/schedule).
[[nodiscard]] inline bool interleaved_micro_batches(Schedule schedule, int pp, long long micro_batches) {
    return schedule != Schedule::Interleaved || pp < 2 || micro_batches <= 0 || micro_batches >= pp;
}
// DeepSpeed refuses ZeRO-2/3 with pipeline parallelism; Megatron offers ZeRO-1 only with pp.
[[nodiscard]] inline bool zero_allows_pipeline(int zero_stage, int pp) { return zero_stage < 2 || pp <= 1; }
// fp32 parameter shards (training.fsdp_fp32_shards) are how ZeRO-3 keeps its parameters: only
// stage 3 shards them.
[[nodiscard]] inline bool fsdp_fp32_shards_need_zero3(bool fp32_shards, int zero_stage) {
    return !fp32_shards || zero_stage == 3;
}
// Hybrid sharding replicates a ZeRO shard group: it needs ZeRO (stage 1-3).
[[nodiscard]] inline bool zero_replicas_need_zero(int zero_replicas, int zero_stage) {
    return zero_replicas <= 1 || zero_stage >= 1;
}
// The replicas split the data-parallel group (and the expert-data-parallel group, edp > 0
// when experts fold) into equal shard groups: zero_replicas divides both. Megatron-LM asserts
// it of dp·cp and of edp (parallel_state.py:922-926, 1448-1450 at d98e8a64); a layout asks it
// of dp, so that a shard group holds whole context-parallel groups.
[[nodiscard]] inline bool zero_replicas_divide(int zero_replicas, int dp, int edp) {
    return zero_replicas >= 1 && dp % zero_replicas == 0 && (edp <= 0 || edp % zero_replicas == 0);
}
// The GPU has units for the training type: a peak listed for it (no fp8 on an A100).
[[nodiscard]] inline bool gpu_runs_dtype(const GpuKind& gpu, DType dtype) { return gpu.peak_flops(dtype) > 0; }
// recompute_num_layers counts fully recomputed layers per stage: only full recomputation has it.
[[nodiscard]] inline bool recompute_layers_need_full(Recompute recompute, int recompute_num_layers) {
    return recompute == Recompute::Full || recompute_num_layers <= 0;
}
// Optimizer offload moves ZeRO's optimizer partitions (DeepSpeed's offload_optimizer is a
// zero_optimization setting): ZeRO stage 1 or more.
[[nodiscard]] inline bool offload_optimizer_needs_zero(Offload offload, int zero_stage) {
    return offload == Offload::None || zero_stage >= 1;
}
// Parameter offload moves ZeRO-3's parameter shards (DeepSpeed's offload_param): stage 3.
[[nodiscard]] inline bool offload_params_needs_zero3(Offload offload, int zero_stage) {
    return offload == Offload::None || zero_stage >= 3;
}
// Anything offloaded crosses the cluster's host link (GPU to host memory).
[[nodiscard]] inline bool offload_needs_host_link(Offload offload, double host_link_bytes_per_s) {
    return offload == Offload::None || host_link_bytes_per_s > 0;
}
// bf16 gradient reduction means something only where the parameters train in bf16 (bf16, or
// fp8/fp4 GEMMs around bf16 weights; fp32 and fp16 training keep gradients in the parameters'
// type). A warning, not an error.
[[nodiscard]] inline bool grad_bf16_fits_dtype(bool grad_reduce_in_bf16, DType dtype) {
    return !grad_reduce_in_bf16 || dtype == DType::Bf16 || quantized_gemms(dtype);
}
// A capacity factor drops tokens routed to full experts: only MoE models have any. A warning.
[[nodiscard]] inline bool capacity_factor_needs_experts(double capacity_factor, bool moe) {
    return capacity_factor <= 0 || moe;
}

}  // namespace meshwork::rules
