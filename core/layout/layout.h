// A Layout: model + cluster + mesh + placement + training settings. The unit that every
// stage of Meshwork (cost model, simulator, search, engine, exporters, GUI) consumes.
#pragma once

#include <string>
#include <vector>

#include "core/cluster/cluster_spec.h"
#include "core/layout/recompute_modules.h"
#include "core/layout/speed_knobs.h"
#include "core/mesh/device_mesh.h"
#include "core/model/model_spec.h"

namespace meshwork {

enum class Schedule { GPipe, OneFOneB, Interleaved };
// Selective: Megatron-LM's selective recomputation (core attention rerun in the backward,
// Korthikanti et al. 2022 §5). SelectiveOp: torchtitan's op-level selective activation
// checkpointing (activation_checkpoint mode "selective", selective_ac_option "op"): each
// block saves the outputs of every other matmul, of attention and of reduce-scatters, and
// reruns the rest (docs/cost-model.md, "Op-level selective checkpointing").
enum class Recompute { None, Selective, Full, SelectiveOp };
// How the loss over the logits is computed (docs/cost-model.md, "Embedding, head, buffers,
// reserve"; the peak of each, cost::loss_bytes_per_logit): VocabParallel, Megatron-LM's
// vocabulary-parallel cross entropy, unfused or fused natively (--cross-entropy-fusion-impl
// native), one fp32 copy of the logits worked on in place; Upcast, PyTorch's
// cross_entropy(logits.float()) as torchtitan calls it (torchtitan/components/loss.py), an
// fp32 copy, an fp32 log-softmax and, in the backward, two fp32 gradients of the logits;
// Te, Transformer Engine's parallel cross entropy (--cross-entropy-loss-fusion
// --cross-entropy-fusion-impl te) from TE 2.18 on, an fp32 gradient beside the logits;
// TeInPlace, the same before TE 2.18, the gradient written over the logits (what the
// Megatron-Bridge performance recipes of 2025-2026 ran); FlashAttn, flash-attn's fused
// cross entropy (flash_attn.losses.cross_entropy.CrossEntropyLoss) on the 16-bit logits, its
// gradient in their dtype beside them (llm-foundry's MPT default, loss_fn fused_crossentropy).
enum class CrossEntropy { VocabParallel, Upcast, Te, TeInPlace, FlashAttn };
// Which fused attention kernel the framework runs (docs/cost-model.md, "Attention rate by head
// dim, length and mask"): Fused, Transformer Engine's fused attention (cuDNN, or
// FlashAttention-3 on Hopper), what Megatron-LM and Megatron-Bridge run; Sdpa, PyTorch's
// scaled_dot_product_attention at its default priority, flash first (aten/src/ATen/Context.h
// sdp_priority_order): FlashAttention-2's kernels on Hopper and Ampere, what torchtitan runs
// there (torchtitan e7c0cae torchtitan/models/attention.py:196-207 puts cuDNN first only on
// Blackwell, where the two are the same kernel).
enum class AttentionKernel { Fused, Sdpa };
// Where DeepSpeed's ZeRO-Offload / ZeRO-Infinity keeps state instead of the GPU.
enum class Offload { None, Cpu, Nvme };
// How tensor-parallel collectives overlap the GEMMs beside them (docs/cost-model.md,
// "TP communication overlap"): not at all (beyond Megatron's asynchronous input-gradient
// all-reduce), or tiled as Transformer Engine's userbuffers do it (Megatron-LM's
// --tp-comm-overlap): each all-gather / reduce-scatter split into tp chunks that run
// during the GEMM's chunks, either pipelined (one chunk's transfer left exposed: TE's
// "pipeline" method, Calculon's "pipe") or as a ring exchange (none exposed: TE's
// "ring_exchange", Calculon's "ring").
enum class TpOverlap { None, Pipe, Ring };
// How an MoE layer moves its tokens to the ranks of their experts and back (Megatron-LM's
// --moe-token-dispatcher-type, transformer_config.py:891 at d98e8a64; docs/cost-model.md,
// "Expert dispatch"): AllGather, every EP rank gathers all tokens of the group and keeps its
// experts' (Megatron's default); AllToAll, one copy per (token, expert) sent to the expert's
// rank; Flex, a fused per-node dispatcher (DeepEP or HybridEP, MoeFlexBackend) that sends a
// token once to each node holding one of its experts and fans it out over NVLink there.
enum class MoeDispatcher { AllGather, AllToAll, Flex };
// The library behind the flex dispatcher (--moe-flex-dispatcher-backend, :898; default deepep).
enum class MoeFlexBackend { DeepEP, HybridEP };

std::string to_string(Schedule s);     // "gpipe", "1f1b", "interleaved"
std::string to_string(Recompute r);    // "none", "selective", "full", "selective-op"
bool parse_schedule(const std::string& text, Schedule& out);
bool parse_recompute(const std::string& text, Recompute& out);
std::string to_string(CrossEntropy c);  // "vocab-parallel", "upcast", "te", "te-inplace", "flash-attn"
bool parse_cross_entropy(const std::string& text, CrossEntropy& out);
std::string to_string(AttentionKernel k);  // "fused", "sdpa"
bool parse_attention_kernel(const std::string& text, AttentionKernel& out);
std::string to_string(Offload o);      // "none", "cpu", "nvme"
bool parse_offload(const std::string& text, Offload& out);
std::string to_string(TpOverlap o);    // "none", "pipe", "ring"
bool parse_tp_overlap(const std::string& text, TpOverlap& out);
// "bf16" or "fp32" (the --grad-reduce-dtype flags): whether gradients are reduced in bf16.
bool parse_grad_reduce_dtype(const std::string& text, bool& in_bf16);
std::string to_string(MoeDispatcher d);   // "allgather", "alltoall", "flex"
bool parse_moe_dispatcher(const std::string& text, MoeDispatcher& out);
std::string to_string(MoeFlexBackend b);  // "deepep", "hybridep"
bool parse_moe_flex_backend(const std::string& text, MoeFlexBackend& out);

struct ParallelConfig {
    MeshShape mesh;                 // tp, cp, dp, pp, ep, etp, order
    int vpp = 1;                    // virtual pipeline stages (model chunks) per pipeline rank
    bool sequence_parallel = false; // Megatron SP: shard norms/dropout activations over tp
    // Tiled TP communication overlap (needs SP and tp > 1, as Megatron-LM asserts). Off by
    // default, as in Megatron-LM (model_parallel_config.py:265 at d98e8a64).
    TpOverlap tp_comm_overlap = TpOverlap::None;
    // Megatron-LM's --overlap-grad-reduce: each model chunk's data-parallel gradient
    // reduction runs beside later backward work (docs/cost-model.md, "Data-parallel
    // overlap"); off, it runs after the rank's last backward. On by default: Megatron-LM's
    // own default is off (distributed_data_parallel_config.py:18 at d98e8a64), but
    // production recipes turn it on with the distributed optimizer (Megatron-Bridge
    // comm_overlap.py:539-546 at 00b7660b).
    bool overlap_grad_reduce = true;
    // --overlap-param-gather: the distributed optimizer's parameter all-gather runs beside the
    // next step's forwards instead of after the optimizer step. Needs overlap_grad_reduce
    // (Megatron asserts it, arguments.py:1028-1029); no effect without a parameter gather
    // (ZeRO-0, ZeRO-3).
    bool overlap_param_gather = true;
    // MoE token dispatch (MoeDispatcher). Default alltoall, what Meshwork's cost model has
    // always priced and what production recipes choose without DeepEP/HybridEP (Megatron-Bridge
    // scripts/performance/utils/overrides.py:243-246 at 21d102f5e); Megatron-LM's own default
    // is allgather, which the importer reads when the flag is absent.
    MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;
    MoeFlexBackend moe_flex_backend = MoeFlexBackend::DeepEP;  // only with Flex
    // Megatron-LM's --overlap-moe-expert-parallel-comm ("1F1B A2A overlap",
    // model_parallel_config.py:343-346): in the 1F1B phase each layer's dispatch and combine of
    // one micro-batch run beside another micro-batch's compute (combined 1F1B schedule). Needs
    // ep > 1, the alltoall or flex dispatcher, virtual stages when pp > 1, no full
    // recomputation (transformer_config.py:3002-3046). Off by default, as in Megatron-LM.
    bool moe_a2a_overlap = false;
    bool operator==(const ParallelConfig&) const = default;
};

struct Placement {
    // Layers per model chunk in layer order, pp·vpp entries; chunk c runs on stage c % pp.
    // Empty means an even split.
    std::vector<int> layers_per_stage;
    // Routed experts held by each EP rank, ep entries. Empty means contiguous blocks.
    std::vector<std::vector<int>> experts_per_ep_rank;
    bool operator==(const Placement&) const = default;
};

struct TrainingConfig {
    int micro_batch_size = 1;
    int global_batch_size = 1;
    int seq_length = 2048;
    DType dtype = DType::Bf16;
    Schedule schedule = Schedule::OneFOneB;
    Recompute recompute = Recompute::None;
    int recompute_num_layers = 0;   // full recompute: layers per stage recomputed (0 = all)
    // Selective recompute: the modules recomputed (Megatron-LM's --recompute-modules, in the
    // order written); empty = Megatron's default, core attention alone. Only with
    // recompute == Selective (validation: training.recompute_modules). core/layout/
    // recompute_modules.h says what each module is.
    std::vector<RecomputeModule> recompute_modules;
    // 0 none, 1 optimizer states (= Megatron's distributed optimizer), 2, 3. Default 1: every
    // production recipe of Megatron-Core, NeMo and torchtitan shards the optimizer, and with
    // dp = 1 it changes nothing.
    int zero_stage = 1;
    // Hybrid sharding (HSDP): the ZeRO state is sharded over (dp·cp) / zero_replicas ranks
    // and that shard group is replicated zero_replicas times; gradients are reduce-scattered
    // inside a shard group, then the shard all-reduced across the replicas. 1 = one shard
    // group over all data-parallel ranks. Megatron-LM's --num-distributed-optimizer-instances
    // (parallel_state.py:922-929, 984-1000 at d98e8a64), torchtitan's
    // data_parallel_replicate_degree, DeepSpeed's MiCS (dp / mics_shard_size). Expert state
    // is split the same way over the expert-data-parallel group (parallel_state.py:1448-1451).
    int zero_replicas = 1;
    // ZeRO-3 as PyTorch FSDP keeps it under mixed precision (FSDP1's MixedPrecision, FSDP2's
    // MixedPrecisionPolicy: torchtitan, llm-foundry, torch-based stacks): each parameter's
    // shard is its fp32 master weight, cast to the training precision only for the all-gather,
    // and its gradient shard is kept in fp32 (the parameter's dtype). false: a training-
    // precision shard beside the fp32 master, as Megatron-FSDP and DeepSpeed ZeRO-3 keep it
    // (2 bytes per parameter more in bf16 training). Only with zero_stage 3.
    bool fsdp_fp32_shards = false;
    bool flash_attention = true;    // fused attention: no s×s score activations stored
    AttentionKernel attention_kernel = AttentionKernel::Fused;  // which fused kernel runs it
    CrossEntropy cross_entropy = CrossEntropy::VocabParallel;
    // Element-wise work (norms, rotary embedding, activation function, residual adds) in
    // fused kernels, as Megatron-LM / Transformer Engine and torch.compile run it; false:
    // PyTorch eager, one kernel per op with fp32 intermediates (torchtitan without compile).
    bool fused_elementwise = true;
    // bf16/fp8 training: gradients accumulated and reduced in bf16 (Megatron-LM's
    // --grad-reduce-in-bf16, Megatron-Bridge's grad_reduce_in_fp32 = False, DeepSpeed's
    // default grad_accum_dtype) rather than in fp32 (Megatron-LM's default for bf16,
    // arguments.py:1204-1216 at d98e8a64). Halves the gradient buffers and the DP traffic.
    bool grad_reduce_in_bf16 = false;
    double moe_capacity_factor = 0; // 0 = dropless
    // A static token budget per expert rank (Megatron-LM's moe_expert_rank_capacity_factor,
    // transformer_config.py:1019-1025 at d98e8a64): HybridEP receives at most factor × the
    // average routed tokens, so the experts run without the dispatcher's device-to-host
    // synchronisation and with static shapes, which CUDA graphs capture (the paged stash,
    // docs/user-guide/features/paged_stash.md:14-24, cuda_graph.md:170-181). Tokens over the
    // budget are dropped; balanced routing drops none. 0: none (dynamic shapes).
    double moe_rank_capacity_factor = 0;
    // Optimizer states (and the optimizer step) on the host: ZeRO stage >= 1.
    Offload offload_optimizer = Offload::None;
    // ZeRO-3's parameter shards on the host, fetched for each pass: ZeRO stage 3.
    Offload offload_params = Offload::None;
    // fp8 training: how the GEMM operands are scaled (core/layout/speed_knobs.h); read only
    // with dtype fp8.
    Fp8Recipe fp8_recipe = Fp8Recipe::Tensorwise;
    // CUDA-graph capture (core/layout/speed_knobs.h): removes the host's launch cost of what
    // is captured (core/cost/launch_cost.h).
    CudaGraphs cuda_graphs = CudaGraphs::None;
    // Which regions of a layer per-layer graphs capture (Megatron-LM's --cuda-graph-modules);
    // empty: the whole layer. A production recipe lists e.g. attn moe_router moe_preprocess,
    // or mlp alone, and launches the rest from the host.
    GraphModules cuda_graph_modules;
    // Activations of the first N transformer layers copied to host memory after their forward
    // and back before their backward (Megatron-LM's --cpu-offloading-num-layers, Transformer
    // Engine's CPU offload; core/layout/speed_knobs.h). 0: none.
    int offload_activation_layers = 0;
    bool operator==(const TrainingConfig&) const = default;
};

struct Layout {
    std::string name;
    std::string description;
    std::string model_ref;    // preset name or path as written; empty when inline
    ModelSpec model;
    std::string cluster_ref;  // preset name or path as written; empty when inline
    ClusterSpec cluster;
    int gpus = 1;
    ParallelConfig parallel;
    Placement placement;
    TrainingConfig training;

    // Micro-batches per step per pipeline: gbs / (dp · mbs).
    [[nodiscard]] int num_micro_batches() const;
    // Layers of each model chunk (pp·vpp entries): the explicit split, or
    // balanced_stage_split(). Empty when there are fewer layers than chunks.
    [[nodiscard]] std::vector<int> stage_layers() const;
    // First layer index of each model chunk.
    [[nodiscard]] std::vector<int> stage_first_layer() const;
    // Routed experts of each EP rank, resolving contiguous blocks.
    [[nodiscard]] std::vector<std::vector<int>> ep_experts() const;
    [[nodiscard]] DeviceMesh mesh() const;

    bool operator==(const Layout&) const = default;
};

// Splits `layers` over `chunks` as evenly as possible; when they do not divide, the chunks
// at the two ends get one layer less (they also hold the embedding and the LM head).
std::vector<int> balanced_stage_split(int layers, int chunks);

}  // namespace meshwork
