#include "core/layout/layout_validate.h"

#include <numeric>
#include <set>

#include "core/layout/layout_rules.h"
#include "core/mesh/device_mesh.h"
#include "core/schedule/pipeline_schedule.h"

namespace meshwork {

namespace {

class Checker {
public:
    Checker(const std::string& file, ValidationResult& out) : file_(file), out_(out) {}
    void error(const std::string& field, const std::string& message) {
        out_.errors.push_back({file_, field, message});
    }
    void warning(const std::string& field, const std::string& message) {
        out_.warnings.push_back({file_, field, message});
    }

private:
    const std::string& file_;
    ValidationResult& out_;
};

std::string str(long long v) { return std::to_string(v); }

void check_mesh(const Layout& l, Checker& c) {
    const auto& m = l.parallel.mesh;
    const long long world = m.world_size();
    if (world != l.gpus) {
        c.error("parallel", "tp×pp×cp×dp = " + str(m.tp) + "×" + str(m.pp) + "×" + str(m.cp) +
                                "×" + str(m.dp) + " = " + str(world) + " but gpus = " +
                                str(l.gpus));
    }
    if (l.gpus > l.cluster.max_gpus()) {
        c.error("gpus", str(l.gpus) + " GPUs but cluster '" + l.cluster.name + "' has at most " +
                            str(l.cluster.max_gpus()) + " (" + str(l.cluster.max_nodes) +
                            " nodes × " + str(l.cluster.gpus_per_node) + ")");
    }
    if (!is_axis_order(m.order)) c.error("parallel.order", axis_order_error(m.order));
    if (m.tp > l.cluster.gpus_per_node) {
        c.warning("parallel.tp", "tp " + str(m.tp) + " spans more than one node (" +
                                     str(l.cluster.gpus_per_node) +
                                     " GPUs per node): TP traffic crosses the inter-node links");
    }
}

void check_tensor_parallel(const Layout& l, Checker& c) {
    const auto& md = l.model;
    const int tp = l.parallel.mesh.tp;
    if (!rules::tp_divides_heads(md.num_heads, tp)) {
        c.error("parallel.tp", "tp " + str(tp) + " does not divide the " + str(md.num_heads) +
                                   " attention heads of " + md.name);
    }
    if (!rules::tp_fits_kv_heads(md.num_kv_heads, tp, md.uses_mla)) {
        c.error("parallel.tp",
                "tp " + str(tp) + " and the " + str(md.num_kv_heads) +
                    " KV heads of " + md.name +
                    " neither divide one another (KV heads are split when tp divides them, "
                    "replicated when they divide tp)");
    } else if (!md.uses_mla && tp > md.num_kv_heads) {
        c.warning("parallel.tp", "tp " + str(tp) + " exceeds the " + str(md.num_kv_heads) +
                                     " KV heads: each KV head is replicated on " +
                                     str(tp / md.num_kv_heads) + " ranks");
    }
    if (md.global_attention.num_kv_heads > 0 &&
        !rules::tp_fits_kv_heads(md.global_attention.num_kv_heads, tp, md.uses_mla)) {
        c.error("parallel.tp", "tp " + str(tp) + " and the " + str(md.global_attention.num_kv_heads) +
                                   " KV heads of " + md.name +
                                   "'s full-attention blocks neither divide one another");
    }
    const bool has_dense_mlp = md.num_moe_blocks() < md.num_layers;
    if (!rules::tp_divides_mlp(md.ffn_hidden_size, tp, has_dense_mlp)) {
        c.error("parallel.tp", "tp " + str(tp) + " does not divide the MLP hidden size " +
                                   str(md.ffn_hidden_size));
    }
    if (l.parallel.sequence_parallel && tp == 1) {
        c.warning("parallel.sequence_parallel", "sequence parallelism has no effect with tp 1");
    }
    if (!rules::tp_overlap_needs_sp(l.parallel.tp_comm_overlap, tp, l.parallel.sequence_parallel)) {
        c.error("parallel.tp_comm_overlap",
                "TP communication overlap '" + to_string(l.parallel.tp_comm_overlap) +
                    "' needs sequence parallelism with tp > 1 (found tp " + str(tp) + ", sp " +
                    (l.parallel.sequence_parallel ? "on" : "off") +
                    "); Megatron-LM asserts the same");
    }
    if (l.parallel.overlap_param_gather && !l.parallel.overlap_grad_reduce) {
        c.error("parallel.overlap_param_gather",
                "overlapping the parameter gather needs overlap_grad_reduce (Megatron-LM asserts "
                "--overlap-param-gather with --overlap-grad-reduce)");
    }
}

void check_pipeline(const Layout& l, Checker& c) {
    const int pp = l.parallel.mesh.pp;
    const int vpp = l.parallel.vpp;
    const int layers = l.model.num_layers;
    const long long chunks = static_cast<long long>(pp) * vpp;
    const auto& split = l.placement.layers_per_stage;
    if (split.empty()) {
        if (!rules::layers_fill_chunks(layers, chunks)) {
            c.error("placement.layers_per_stage",
                    str(layers) + " layers cannot fill pp×vpp = " + str(chunks) + " model chunks");
        } else if (layers % chunks != 0) {
            const auto chosen = balanced_stage_split(layers, static_cast<int>(chunks));
            std::string text;
            for (int n : chosen) text += (text.empty() ? "" : ",") + str(n);
            c.warning("placement.layers_per_stage",
                      str(layers) + " layers do not split evenly over pp×vpp = " + str(chunks) +
                          " model chunks; using " + text + " (first/last lighter)");
        }
    } else {
        if (static_cast<long long>(split.size()) != chunks) {
            c.error("placement.layers_per_stage",
                    str(static_cast<long long>(split.size())) + " entries but pp×vpp = " +
                        str(chunks) + " model chunks");
        }
        long long sum = 0;
        for (std::size_t i = 0; i < split.size(); ++i) {
            sum += split[i];
            // The first chunk also holds the embedding and the last the LM head and loss:
            // Megatron-LM builds them alone when the split counts them as layers
            // (transformer_block.py:191-201 at d98e8a64). Any other chunk needs a layer.
            const bool end = (i == 0 || i + 1 == split.size()) && split.size() > 1;
            if (!rules::chunk_holds_enough(split[i], end)) {
                c.error("placement.layers_per_stage[" + str(static_cast<long long>(i)) + "]",
                        end
                            ? "must not be negative"
                            : "a model chunk must hold at least one layer (only the first and last "
                              "chunks may hold just the embedding or the LM head and loss)");
            }
        }
        if (sum != layers) {
            c.error("placement.layers_per_stage",
                    "stages cover " + str(sum) + " layers but " + l.model.name + " has " +
                        str(layers) + " (each layer must be placed exactly once)");
        }
    }
    const auto schedule = l.training.schedule;
    if (!rules::interleaved_has_chunks(schedule, pp, vpp)) {
        if (vpp < 2) {
            c.error("training.schedule", "the interleaved schedule needs vpp ≥ 2 (parallel.vpp)");
        }
        if (pp < 2) c.error("training.schedule", "the interleaved schedule needs pp ≥ 2");
    }
    const int m = l.num_micro_batches();
    if (!rules::interleaved_micro_batches(schedule, pp, m)) {
        c.error("training.global_batch_size",
                "the interleaved schedule needs at least pp (" + str(pp) +
                    ") micro-batches per step, found " + str(m));
    } else if (schedule == Schedule::Interleaved && pp > 1 && m % pp != 0) {
        c.warning("training.global_batch_size",
                  "the micro-batch count (" + str(m) + ") is not a multiple of pp (" + str(pp) +
                      "): the interleaved schedule runs groups of " +
                      str(interleaved_group_size(pp, m)) +
                      " micro-batches per chunk (Megatron-LM's "
                      "--microbatch-group-size-per-virtual-pipeline-stage), holding more in flight");
    }
    if (!rules::vpp_needs_interleaved(schedule, vpp)) {
        c.error("parallel.vpp", "vpp " + str(vpp) + " needs the interleaved schedule (training.schedule)");
    }
    if (!rules::pp_within_layers(pp, layers)) {
        c.error("parallel.pp", "pp " + str(pp) + " exceeds the " + str(layers) + " layers");
    }
}

// Megatron-LM's checks of --overlap-moe-expert-parallel-comm (transformer_config.py:3002-3046
// at d98e8a64): the combined 1F1B schedule needs two independent micro-batches in flight.
void check_moe_a2a_overlap(const Layout& l, Checker& c) {
    const auto& p = l.parallel;
    if (!p.moe_a2a_overlap) return;
    const std::string f = "parallel.moe_a2a_overlap";
    if (p.mesh.ep <= 1) c.error(f, "the MoE all-to-all overlap needs expert parallelism (ep > 1)");
    if (p.moe_dispatcher == MoeDispatcher::AllGather) {
        c.error(f, "the MoE all-to-all overlap needs the alltoall or flex dispatcher, not allgather");
    }
    if (p.mesh.pp > 1 && p.vpp <= 1) {
        c.error(f, "the MoE all-to-all overlap with pp > 1 needs virtual pipeline stages (vpp > 1)");
    }
    if (l.training.recompute == Recompute::Full) {
        c.error(f, "the MoE all-to-all overlap refuses full recomputation");
    }
    if (l.training.dtype == DType::Fp32 || l.training.dtype == DType::Tf32) {
        c.error(f, "the MoE all-to-all overlap needs bf16, fp16 or fp8 (with bf16 weights)");
    }
    if (l.model.mtp_layers > 1) {
        c.error(f, "the MoE all-to-all overlap allows at most one MTP layer, " + l.model.name + " has " +
                       str(l.model.mtp_layers));
    }
}

void check_experts(const Layout& l, Checker& c) {
    const auto& m = l.parallel.mesh;
    const auto& moe = l.model.moe;
    if (!l.model.is_moe()) {
        if (!rules::expert_axis_needs_experts(false, m.ep)) {
            c.error("parallel.ep", "ep " + str(m.ep) + " but " + l.model.name + " has no experts");
        }
        if (!rules::expert_axis_needs_experts(false, m.etp)) {
            c.error("parallel.etp", "etp " + str(m.etp) + " but " + l.model.name + " has no experts");
        }
        if (!l.placement.experts_per_ep_rank.empty()) {
            c.error("placement.experts_per_ep_rank", l.model.name + " has no experts");
        }
        return;
    }
    if (!m.experts_fold()) {
        c.error("parallel.ep", "etp×ep = " + str(m.etp) + "×" + str(m.ep) +
                                   " must divide tp×cp×dp = " + str(m.expert_fold()));
    }
    if (!rules::etp_divides_expert_mlp(moe.expert_ffn_hidden, m.etp)) {
        c.error("parallel.etp", "etp " + str(m.etp) + " does not divide the expert hidden size " +
                                    str(moe.expert_ffn_hidden));
    }
    const auto& placed = l.placement.experts_per_ep_rank;
    if (placed.empty()) {
        if (!rules::ep_divides_experts(moe.num_experts, m.ep)) {
            c.error("parallel.ep", "ep " + str(m.ep) + " does not divide the " +
                                       str(moe.num_experts) + " experts of " + l.model.name);
        }
        return;
    }
    if (static_cast<long long>(placed.size()) != m.ep) {
        c.error("placement.experts_per_ep_rank",
                str(static_cast<long long>(placed.size())) + " EP ranks listed but ep = " + str(m.ep));
    }
    std::vector<int> count(static_cast<std::size_t>(moe.num_experts), 0);
    for (std::size_t r = 0; r < placed.size(); ++r) {
        const std::string field = "placement.experts_per_ep_rank[" + str(static_cast<long long>(r)) + "]";
        if (placed[r].empty()) c.error(field, "an EP rank must hold at least one expert");
        for (int e : placed[r]) {
            if (e < 0 || e >= moe.num_experts) {
                c.error(field, "expert " + str(e) + " does not exist (the model has " +
                                   str(moe.num_experts) + ")");
            } else {
                ++count[static_cast<std::size_t>(e)];
            }
        }
    }
    for (int e = 0; e < moe.num_experts; ++e) {
        const int n = count[static_cast<std::size_t>(e)];
        if (n != 1) {
            c.error("placement.experts_per_ep_rank",
                    "expert " + str(e) + (n == 0 ? " is not placed" : " is placed " + str(n) + " times") +
                        " (each expert must be placed exactly once)");
        }
    }
}

void check_sequence_and_batch(const Layout& l, Checker& c) {
    const auto& t = l.training;
    const auto& m = l.parallel.mesh;
    if (!rules::cp_balances_sequence(t.seq_length, m.cp)) {
        c.error("parallel.cp", "cp " + str(m.cp) + " needs the sequence length (" +
                                   str(t.seq_length) +
                                   ") to be a multiple of 2×cp for causal load balancing");
    }
    if (!rules::sp_divides_sequence(t.seq_length, m.cp, m.tp, l.parallel.sequence_parallel)) {
        c.error("parallel.sequence_parallel",
                "sequence parallelism needs the per-CP sequence (" + str(t.seq_length / m.cp) +
                    ") to be a multiple of tp (" + str(m.tp) + ")");
    }
    const long long per_step = static_cast<long long>(m.dp) * t.micro_batch_size;
    if (!rules::batch_divides(t.global_batch_size, m.dp, t.micro_batch_size)) {
        c.error("training.global_batch_size",
                "global batch " + str(t.global_batch_size) + " is not a multiple of dp×micro-batch = " +
                    str(m.dp) + "×" + str(t.micro_batch_size) + " = " + str(per_step));
    }
    // The simulator and the engine hold every micro-batch of a step (the pipeline schedule
    // has pp × vpp × m slots, the simulated step one span per slot and layer); a global batch
    // of 2^30 passed here and then died in bad_alloc. 2^16 micro-batches per step is 128x the
    // 512 of the largest published run we compare with (Narayanan et al. 2021, 1T parameters:
    // batch 3072, dp 6, micro-batch 1; tests/core/cost/tst_cost_published.cpp).
    constexpr long long kMaxMicroBatchesPerStep = 1 << 16;
    if (per_step > 0 && t.global_batch_size / per_step > kMaxMicroBatchesPerStep) {
        c.error("training.global_batch_size",
                "global batch " + str(t.global_batch_size) + " makes " + str(t.global_batch_size / per_step) +
                    " micro-batches per step (dp×micro-batch = " + str(per_step) + "), more than the " +
                    str(kMaxMicroBatchesPerStep) + " the simulator and the engine hold");
    }
    if (t.seq_length > l.model.max_position_embeddings) {
        c.warning("training.seq_length", "sequence " + str(t.seq_length) + " exceeds the model's " +
                                             str(l.model.max_position_embeddings) + " positions");
    }
    if (!rules::gpu_runs_dtype(l.cluster.gpu, t.dtype)) {
        c.error("training.dtype", "GPU kind '" + l.cluster.gpu.kind + "' " +
                                      (quantized_gemms(t.dtype) ? "has no " + to_string(t.dtype) + " units"
                                                                : "lists no peak for " + to_string(t.dtype)));
    }
    if (!rules::zero_allows_pipeline(t.zero_stage, m.pp)) {
        c.warning("training.zero_stage", "ZeRO-" + str(t.zero_stage) +
                                             " with pipeline parallelism: DeepSpeed refuses it; Megatron-LM "
                                             "runs it only as Megatron-FSDP (--use-megatron-fsdp, not its "
                                             "distributed optimizer), torchtitan as FSDP");
    }
    if (!rules::fsdp_fp32_shards_need_zero3(t.fsdp_fp32_shards, t.zero_stage)) {
        c.error("training.fsdp_fp32_shards", "fp32 parameter shards are how ZeRO-3 (PyTorch FSDP) keeps its "
                                             "parameters; zero_stage is " + str(t.zero_stage));
    }
    if (!rules::zero_replicas_need_zero(t.zero_replicas, t.zero_stage)) {
        c.error("training.zero_replicas", "replicas of the ZeRO shard group (" + str(t.zero_replicas) +
                                              ") need zero_stage 1, 2 or 3: ZeRO-0 shards nothing");
    } else if (!rules::zero_replicas_divide(t.zero_replicas, m.dp, l.model.is_moe() ? m.expert_data_parallel() : 0)) {
        c.error("training.zero_replicas",
                str(t.zero_replicas) + " replicas do not divide dp " + str(m.dp) +
                    (l.model.is_moe() && m.expert_data_parallel() > 0
                         ? " and the expert-data-parallel size " + str(m.expert_data_parallel())
                         : "") +
                    " into equal shard groups");
    }
    if (!rules::recompute_layers_need_full(t.recompute, t.recompute_num_layers)) {
        c.error("training.recompute_num_layers", "only meaningful with full recomputation");
    }
    if (!rules::recompute_modules_need_selective(t.recompute, t.recompute_modules.size())) {
        c.error("training.recompute_modules",
                "modules (" + join_recompute_modules(t.recompute_modules) + ") are recomputed only with "
                "recompute: selective, not " + to_string(t.recompute));
    }
    if (!rules::mla_up_proj_needs_mla(t.recompute_modules, l.model.uses_mla)) {
        c.error("training.recompute_modules", "mla_up_proj needs multi-latent attention; model " +
                                                  l.model.name + " has none");
    }
    for (RecomputeModule mod : t.recompute_modules) {
        const bool moe_only = mod == RecomputeModule::MoeAct || mod == RecomputeModule::Moe ||
                              mod == RecomputeModule::SharedExperts;
        if (moe_only && !l.model.is_moe()) {
            c.warning("training.recompute_modules", to_string(mod) + " has no effect: model " + l.model.name +
                                                        " has no MoE layers");
        } else if (mod == RecomputeModule::SharedExperts && l.model.moe.num_shared_experts == 0 &&
                   l.model.moe.shared_ffn_hidden == 0) {
            c.warning("training.recompute_modules", "shared_experts has no effect: model " + l.model.name +
                                                        " has no shared experts");
        }
    }
    if (!rules::offload_optimizer_needs_zero(t.offload_optimizer, t.zero_stage)) {
        c.error("training.offload_optimizer", "optimizer offload works on ZeRO's optimizer partitions: "
                                              "it needs zero_stage 1, 2 or 3");
    }
    const double host_bw = l.cluster.host_link.bandwidth_bytes_per_s;
    if (!rules::offload_needs_host_link(t.offload_optimizer, host_bw) ||
        !rules::offload_needs_host_link(t.offload_params, host_bw)) {
        c.error(t.offload_optimizer != Offload::None ? "training.offload_optimizer" : "training.offload_params",
                "the cluster " + l.cluster.name + " describes no host_link (GPU to host memory) to offload over");
    }
    if (!rules::offload_params_needs_zero3(t.offload_params, t.zero_stage)) {
        c.error("training.offload_params", "parameter offload moves ZeRO-3's parameter shards: it needs zero_stage 3");
    }
    if (!rules::grad_bf16_fits_dtype(t.grad_reduce_in_bf16, t.dtype)) {
        c.warning("training.grad_reduce_in_bf16", "has no effect with " + to_string(t.dtype) +
                                                      " training (gradients keep the parameters' type)");
    }
    if (!rules::capacity_factor_needs_experts(t.moe_capacity_factor, l.model.is_moe())) {
        c.warning("training.moe_capacity_factor", l.model.name + " has no experts");
    }
    if (!rules::capacity_factor_needs_experts(t.moe_rank_capacity_factor, l.model.is_moe())) {
        c.warning("training.moe_rank_capacity_factor", l.model.name + " has no experts");
    } else if (!rules::rank_capacity_needs_hybridep(t.moe_rank_capacity_factor, l.parallel.moe_dispatcher,
                                                    l.parallel.moe_flex_backend)) {
        c.error("training.moe_rank_capacity_factor", "a per-rank token budget needs the flex dispatcher with HybridEP "
                                                     "(Megatron-LM: 'hybridep' or 'ncclep')");
    }
    const int off = t.offload_activation_layers;
    if (!rules::activation_offload_within_layers(off, l.model.num_layers)) {
        c.error("training.offload_activation_layers", str(off) + " offloaded layers, but " + l.model.name + " has " +
                                                          str(l.model.num_layers) + " (at most " +
                                                          str(l.model.num_layers - 1) + ")");
    }
    if (!rules::activation_offload_without_pp(off, l.parallel.mesh.pp)) {
        c.error("training.offload_activation_layers", "activation offload needs pp 1 (Megatron-LM has no pipeline "
                                                      "parallelism with CPU offloading)");
    }
    if (!rules::activation_offload_without_recompute(off, t.recompute)) {
        c.error("training.offload_activation_layers", "activation offload needs recompute none (Megatron-LM does not "
                                                      "offload with activation recomputation)");
    }
    if (!rules::activation_offload_graphs(off, t.cuda_graphs)) {
        c.error("training.offload_activation_layers", "activation offload runs with no CUDA graphs or a full-iteration "
                                                      "graph only (training.cuda_graphs is " +
                                                          to_string(t.cuda_graphs) + ")");
    }
    if (off > 0 && !(host_bw > 0)) {
        c.error("training.offload_activation_layers",
                "the cluster " + l.cluster.name + " describes no host_link (GPU to host memory) to offload over");
    }
    if (!rules::per_layer_graphs_without_full_recompute(t.cuda_graphs, t.recompute)) {
        c.error("training.cuda_graphs", "per-layer CUDA graphs cannot capture full recomputation (Megatron-LM "
                                        "allows it only with full-iteration graphs); use full-iteration or "
                                        "selective recomputation");
    }
    if (!rules::per_layer_graphs_without_fsdp_a2a_overlap(t.cuda_graphs, t.zero_stage, l.parallel.moe_a2a_overlap)) {
        c.error("training.cuda_graphs", "per-layer CUDA graphs do not run with ZeRO-3 (Megatron FSDP) and the MoE "
                                        "all-to-all overlap (parallel.moe_a2a_overlap); use full-iteration or none");
    }
    // --cuda-graph-modules: "must be empty when cuda_graph_impl=full_iteration", "no effect
    // when cuda_graph_impl=none" (Megatron-LM d98e8a64 transformer_config.py:1087-1088).
    if (!t.cuda_graph_modules.whole_layer() && t.cuda_graphs == CudaGraphs::FullIteration) {
        c.error("training.cuda_graph_modules", "a full-iteration graph captures every module; leave the list empty");
    }
    if (!t.cuda_graph_modules.whole_layer() && t.cuda_graphs == CudaGraphs::None) {
        c.warning("training.cuda_graph_modules", "has no effect without CUDA graphs (training.cuda_graphs is none)");
    }
    if (!rules::full_iteration_graphs_capturable(t.cuda_graphs, l.model.is_moe(), t.moe_capacity_factor,
                                                 t.moe_rank_capacity_factor)) {
        c.warning("training.cuda_graphs", "a full-iteration graph cannot capture " + l.model.name +
                                              "'s dropless MoE layers (dynamic shapes); their kernels are "
                                              "costed as launched one by one");
    }
}

}  // namespace

ValidationResult validate_layout(const Layout& layout, const std::string& file) {
    ValidationResult out;
    Checker c(file, out);
    check_mesh(layout, c);
    check_tensor_parallel(layout, c);
    check_pipeline(layout, c);
    check_experts(layout, c);
    check_moe_a2a_overlap(layout, c);
    check_sequence_and_batch(layout, c);
    return out;
}

void require_valid_layout(const Layout& layout, const std::string& file) {
    auto result = validate_layout(layout, file);
    if (!result.valid()) throw InputError(std::move(result.errors));
}

}  // namespace meshwork
