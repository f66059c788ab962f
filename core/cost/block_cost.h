// The cost of one transformer block, the embedding and the output head for one micro-batch
// on one rank of a layout: kernel times, the collectives on the critical path, FLOPs,
// stored activations and parameters. The estimate (cost_model.h) and the simulator
// (core/sim) both assemble pipeline passes from these, so they agree by construction.
#pragma once

#include "core/cluster/cluster_spec.h"
#include "core/cost/collective_time.h"
#include "core/cost/group_topology.h"
#include "core/cost/kernel_time.h"
#include "core/cost/memory_model.h"
#include "core/cost/model_profile.h"
#include "core/layout/layout.h"

namespace meshwork::cost {

// One direction (forward or backward) of one block on one rank.
struct PassParts {
    double attention_s = 0;  // kernels of the attention half (norm, GEMMs, core attention)
    double mlp_s = 0;        // kernels of the MLP / MoE half
    double recompute_s = 0;  // backward only: forward work recomputed first
    double tp_s = 0;         // tensor/sequence-parallel collectives left exposed
    double ep_s = 0;         // expert all-to-all (dispatch and combine)
    double cp_s = 0;         // context-parallel ring exchange not hidden by attention
    double tp_total_s = 0;   // all TP collective time, hidden or not
    double cp_total_s = 0;
    // GPU time lost to the host: launches it cannot issue as fast as the kernels run, and
    // device-to-host synchronisations (core/cost/launch_cost.h); 0 on host-computing ranks.
    double host_s = 0;
    // Activation copies to or from the host that the next layer's compute does not hide
    // (core/cost/activation_offload.h); 0 without activation offload.
    double offload_s = 0;

    [[nodiscard]] double compute_s() const { return attention_s + mlp_s + recompute_s; }
    [[nodiscard]] double comm_s() const { return tp_s + ep_s + cp_s; }
    [[nodiscard]] double total_s() const { return compute_s() + comm_s() + host_s + offload_s; }
    // Inline: the search sums these for every chunk of every candidate (out of line they
    // were a fifth of a search's time under perf).
    PassParts& operator+=(const PassParts& o) {
        attention_s += o.attention_s;
        mlp_s += o.mlp_s;
        recompute_s += o.recompute_s;
        tp_s += o.tp_s;
        ep_s += o.ep_s;
        cp_s += o.cp_s;
        tp_total_s += o.tp_total_s;
        cp_total_s += o.cp_total_s;
        host_s += o.host_s;
        offload_s += o.offload_s;
        return *this;
    }
};
inline PassParts operator*(const PassParts& p, double k) {
    PassParts r;
    r.attention_s = p.attention_s * k;
    r.mlp_s = p.mlp_s * k;
    r.recompute_s = p.recompute_s * k;
    r.tp_s = p.tp_s * k;
    r.ep_s = p.ep_s * k;
    r.cp_s = p.cp_s * k;
    r.tp_total_s = p.tp_total_s * k;
    r.cp_total_s = p.cp_total_s * k;
    r.host_s = p.host_s * k;
    r.offload_s = p.offload_s * k;
    return r;
}

struct BlockCost {
    PassParts fwd;
    PassParts bwd;            // without recomputation (recompute_s = 0)
    PassParts full_recompute; // what full recomputation adds to bwd (a forward again)
    // What selective recomputation adds to bwd: core attention (Megatron's selective), or
    // the ops op-level checkpointing reruns (torchtitan's selective "op").
    double selective_recompute_s = 0;
    // Op-level checkpointing: what the block holds during its own backward beyond what it
    // saved (the recomputed tensors), like full recomputation's working block.
    double recompute_working_bytes = 0;
    double attention_flops_fwd = 0;  // executed forward FLOPs of the attention half
    double mlp_flops_fwd = 0;        // executed forward FLOPs of the MLP / MoE half
    double tp_bytes = 0;             // payload of one TP collective
    double ep_bytes = 0;             // payload of one expert all-to-all
    double model_flops = 0;      // forward + backward, causal attention, per rank
    double hardware_flops = 0;   // executed, without recomputation
    double recompute_flops_full = 0;
    double recompute_flops_selective = 0;
    double activation_bytes = 0;   // stored for backward (no full recomputation; op-level
                                   // checkpointing: what its policy saves)
    double checkpoint_bytes = 0;   // stored under full recomputation
    double dense_params = 0;       // per rank, reduced over dp×cp
    double expert_params = 0;      // per rank, reduced over edp
};

// Embedding (first model chunk) or final norm + output head + loss (last chunk).
struct EdgeCost {
    PassParts fwd;
    PassParts bwd;
    double model_flops = 0;
    double activation_bytes = 0;  // per micro-batch in flight
    double transient_bytes = 0;   // held once (logits of the live micro-batch)
    double dense_params = 0;
};

// Everything about a layout the pipeline assembly needs; plain data, no allocation.
struct LayoutCosts : AxisSizes {
    int vpp = 1;
    int edp = 1;  // AxisSizes::expert_data_parallel(), kept for the formulas' hot loops
    int micro_batches = 1;
    int gpus_per_node = 1;
    bool sequence_parallel = false;  // SP in effect (requested and tp > 1)
    double tokens = 0;           // tokens of one micro-batch on one CP rank
    Schedule schedule = Schedule::OneFOneB;
    Recompute recompute = Recompute::None;
    int recompute_num_layers = 0;
    // What selective recomputation reruns (the layout's recompute_modules; empty unless
    // recompute is selective). Bits: no allocation on the search's path.
    RecomputeSet recompute_modules;
    int zero_stage = 0;
    bool fsdp_fp32_shards = false;  // training.fsdp_fp32_shards: ZeRO-3's shard is the fp32 master
    bool offload_optimizer = false;  // optimizer states on the host (not in GPU memory)
    bool offload_params = false;     // ZeRO-3 parameter shards on the host
    double host_bytes_per_s = 0;     // the cluster's GPU <-> host link, per direction
    double host_latency_s = 0;
    // Activations of the model's first N layers on the host (TrainingConfig::
    // offload_activation_layers; core/cost/activation_offload.h).
    int offload_activation_layers = 0;
    DType dtype = DType::Bf16;
    // Layer passes lose GPU time to the host's launches and synchronisations (GPU ranks;
    // core/cost/launch_cost.h), less what CUDA graphs capture.
    bool host_launches = false;
    CudaGraphs cuda_graphs = CudaGraphs::None;
    GraphModules cuda_graph_modules;  // what per-layer graphs capture (empty: the whole layer)
    ParamStateBytes state_bytes;  // bytes per parameter of weights, gradients, optimizer
    KernelModel kernel;
    LinkModel link;
    GroupSpan tp_span, cp_span, dp_span, dpcp_span, ep_span, etp_span, edp_span;
    // ZeRO's shard groups and their replicas (TrainingConfig::zero_replicas; one group over
    // all data-parallel ranks when 1): the dense state's shard group is dp/replicas × cp
    // ranks, the inner part of the data-parallel axis (Megatron-LM slices the dp-cp rank
    // list, parallel_state.py:984-992; torchtitan's mesh puts dp_shard inside
    // dp_replicate); the replicas are `zero_replicas` ranks, one in each shard group.
    int zero_replicas = 1;
    GroupSpan dense_shard_span, dense_replica_span, expert_shard_span, expert_replica_span;
    bool pp_crosses_nodes = false;
    BlockCost dense;
    BlockCost moe;
    EdgeCost embedding;
    EdgeCost head;
    double p2p_s = 0;            // send/recv of one activation between stages (per pass)
    double p2p_bytes = 0;
    double tied_embedding_sync_s = 0;  // first/last stage all-reduce of tied embeddings
    double tp_overlap = 0;       // Efficiency::tp_comm_overlap
    // Tiled TP communication overlap in effect (ParallelConfig::tp_comm_overlap; None
    // without SP or at tp 1).
    TpOverlap tp_tiling = TpOverlap::None;
    // Share of the GPU the TP and CP collectives take while they overlap compute
    // (Efficiency::intra/inter_node_interference of the tier their group spans).
    double tp_interference = 0;
    double cp_interference = 0;
    double dp_overlap = 1;       // Efficiency::dp_comm_overlap
    // Megatron's --overlap-grad-reduce / --overlap-param-gather (ParallelConfig; the gather
    // only where there is one: ZeRO-1/2), and the share of the GPU the data-parallel
    // collectives take beside compute (the tier of the dense gradient group).
    bool overlap_grad_reduce = true;
    bool overlap_param_gather = true;
    double dp_interference = 0;
    int interleaved_group = 1;   // micro-batches per chunk group (interleaved schedule)
    MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;  // ParallelConfig::moe_dispatcher
    MoeFlexBackend moe_flex_backend = MoeFlexBackend::DeepEP;  // ParallelConfig::moe_flex_backend
    // Share of the passes whose MoE all-to-alls overlap another micro-batch's compute
    // (ParallelConfig::moe_a2a_overlap; 0 without it), and the share of the GPU the hidden
    // all-to-alls take (the dispatcher's SMs over the GPU's, core/cost/ep_comm_sms.h; the
    // interference of the EP group's tier where the GPU states no SM count).
    double a2a_paired_share = 0;
    double ep_interference = 0;
    double tokens_per_step = 0;  // gbs × seq
    double model_flops_per_step = 0;
    double peak_flops_per_s = 1;
    double hbm_bytes = 0;
    double reserved_fixed_bytes = 0;
    double fragmentation = 0;
    double element_bytes = 2;
    // Bytes a value of a sequence-parallel all-gather of a GEMM input moves: the quantized
    // tensor under fp8 and fp4 training (gemm_input_bytes), element_bytes otherwise.
    double tp_gather_bytes = 2;
};

// Fills `out` for a layout of `model` on `cluster`. The sizes must be positive (validation
// runs first); throws InputError for sizes no validation would let through.
void prepare_layout_costs(const ModelProfile& model, const ClusterSpec& cluster,
                          const ParallelConfig& parallel, const TrainingConfig& training,
                          LayoutCosts& out);

// Time of the data-parallel gradient reduction and the parameter all-gather (ZeRO ≥ 1)
// for `dense_params` and `expert_params` parameters held by one rank.
struct GradSyncCost {
    double reduce_s = 0;   // after the backward: all-reduce (ZeRO-0), reduce-scatter (ZeRO-1)
    double gather_s = 0;   // parameter all-gather after the optimizer step (ZeRO-1, ZeRO-2)
    // ZeRO-2/3 reduce-scatter the gradients of every micro-batch during its backward.
    double per_micro_batch_reduce_s = 0;
    // ZeRO-3 gathers the parameters before each forward and each backward pass.
    double per_pass_gather_s = 0;
};
GradSyncCost grad_sync_cost(const LayoutCosts& c, double dense_params, double expert_params);
// The ZeRO-2/3 traffic one pass leaves exposed: ZeRO-3's parameter gather, prefetched behind
// the previous pass, shows where it outlasts the pass's compute; ZeRO-2/3's gradient
// reduce-scatter, issued on the communication stream as the backward produces the gradients,
// shows where it outlasts dp_overlap of the compute that follows it before the chunk's next
// backward: that backward alone, or, where a forward of another micro-batch follows every
// backward (`forward_follows_backward`: 1F1B and interleaved 1F1B in their steady state, pp >
// 1), the backward and that forward.
// The one formula of the cost model (per stage) and the simulator (per chunk).
struct ZeroExposure {
    double fwd_s = 0;
    double bwd_s = 0;
};
ZeroExposure zero_exposure(double gather_per_pass_s, double reduce_per_micro_batch_s,
                           double fwd_compute_s, double bwd_compute_s, double dp_overlap,
                           bool forward_follows_backward);
// Whether a forward of another micro-batch follows each backward of a chunk: pipelines that
// alternate them (1F1B, interleaved), not GPipe's all-forwards-then-all-backwards.
[[nodiscard]] bool forward_follows_backward(const LayoutCosts& c);
// Adam step over the optimizer shard of one rank.
double optimizer_step_s(const LayoutCosts& c, double dense_params, double expert_params);
// DeepSpeed offload over the host link (full duplex): per step, the gradient shard down and
// the updated weights up (offload_optimizer); per pass, the weight shard up (offload_params).
double offload_step_s(const LayoutCosts& c, double dense_params, double expert_params);
double offload_pass_s(const LayoutCosts& c, double dense_params, double expert_params);

}  // namespace meshwork::cost
