#include "core/common/error.h"
#include "core/export/canonical_layout.h"
#include "core/export/deepspeed_config.h"
#include "core/export/stage_split.h"

namespace meshwork {

// The rules of validate_folding_global at the pinned commit (module_inject/auto_ep_folding.py).
std::string deepspeed_autoep_refusal(const Layout& l) {
    const auto& m = l.parallel.mesh;
    const auto& t = l.training;
    if (m.etp != 1) {
        return "AutoEP takes expert_tensor_parallel_size 1 only, etp " + std::to_string(m.etp) +
               " is reserved (auto_ep_folding.py:215)";
    }
    if (m.pp > 1 && m.tp * m.cp > 1) {
        return "AutoEP under a pipeline whose grid has model-parallel ranks: the grid's model-parallel size "
               "conflicts with AutoEP's (auto_ep_folding.py:258)";
    }
    if (m.tp > 1 && m.cp > 1) {
        return "AutoEP with AutoTP excludes Ulysses sequence parallelism (auto_ep_folding.py:211)";
    }
    if (m.tp > 1 && t.zero_stage == 3) return "AutoEP with AutoTP does not take ZeRO-3 (auto_ep_folding.py:249)";
    if (m.tp > 1 && (t.offload_optimizer != Offload::None || t.offload_params != Offload::None)) {
        return "AutoEP with AutoTP does not take ZeRO offload (auto_ep_folding.py:253)";
    }
    return {};
}

namespace {

// How the training script must build its PipelineModule for train_batch_size to hold: with
// num_stages alone DeepSpeed's grid is PipeDataParallelTopology(num_pp, world / num_pp)
// (pipe/module.py:171-178), whose data-parallel size would count the TP and CP ranks; the
// model-parallel axis of PipeModelDataParallelTopology (pipe/topology.py) holds them.
std::string pipeline_module_call(const Layout& l) {
    const auto& m = l.parallel.mesh;
    const int model_parallel = m.tp * m.cp;
    if (model_parallel == 1) return "PipelineModule(num_stages=" + std::to_string(m.pp) + ")";
    return "PipelineModule(topology=PipeModelDataParallelTopology(num_pp=" + std::to_string(m.pp) +
           ", num_mp=" + std::to_string(model_parallel) + ", num_dp=" + std::to_string(m.dp) + "))";
}

}  // namespace

nlohmann::json deepspeed_config_json(const Layout& layout, std::vector<std::string>& lost) {
    const Layout l = canonical_layout(layout);
    const auto& m = l.parallel.mesh;
    const auto& t = l.training;
    // DeepSpeed refuses ZeRO-2/3 in its pipeline engine (runtime/pipe/engine.py:76-77).
    if (t.zero_stage >= 2 && m.pp > 1) {
        throw InputError(l.name, "training.zero_stage",
                         "DeepSpeed refuses ZeRO-" + std::to_string(t.zero_stage) +
                             " with pipeline parallelism (its PipelineEngine asserts \"ZeRO-2 and ZeRO-3 are "
                             "incompatible with pipeline parallelism\"): use zero_stage 0 or 1, or pp 1");
    }
    nlohmann::json j;
    // DeepSpeed checks train_batch_size == micro batch × accumulation steps × its world
    // (runtime/config.py:937). With PipelineModule that world is the grid's data-parallel
    // size (pipe/engine.py:109-111); without an mpu it is world / sequence_parallel_size
    // (config.py:719-724), which counts the AutoTP ranks too (they see the same samples).
    const long long batch_world = m.pp > 1 ? static_cast<long long>(m.dp)
                                           : static_cast<long long>(l.gpus) / m.cp;
    j["train_batch_size"] = static_cast<long long>(t.micro_batch_size) * l.num_micro_batches() * batch_world;
    j["train_micro_batch_size_per_gpu"] = t.micro_batch_size;
    j["gradient_accumulation_steps"] = l.num_micro_batches();
    j["zero_optimization"] = {{"stage", t.zero_stage}};
    // Hybrid sharding is DeepSpeed's MiCS: ZeRO-3 only (runtime/engine.py:2468 at edaa722), its
    // shard groups cut from the whole world (runtime/zero/mics_utils.py:70-86), so only a
    // layout whose ranks are all data-parallel says what MiCS would run.
    if (t.zero_replicas > 1) {
        if (t.zero_stage == 3 && m.tp == 1 && m.pp == 1 && m.cp == 1 && m.ep == 1) {
            j["zero_optimization"]["mics_shard_size"] = m.dp / t.zero_replicas;
        } else {
            lost.push_back("hybrid sharding (" + std::to_string(t.zero_replicas) +
                           " replicas of the ZeRO shard group): DeepSpeed's MiCS shards ZeRO-3 over groups cut "
                           "from the whole world (mics_utils.py:70-86), not ZeRO-" + std::to_string(t.zero_stage) +
                           (t.zero_stage == 3 ? " beside tp, pp, cp or ep" : "") +
                           "; written as one shard group over all data-parallel ranks");
        }
    }
    // ZeRO-Offload / ZeRO-Infinity (deepspeed/runtime/zero/offload_config.py: device none|cpu|nvme).
    if (t.offload_optimizer != Offload::None) {
        j["zero_optimization"]["offload_optimizer"] = {{"device", to_string(t.offload_optimizer)}};
    }
    if (t.offload_params != Offload::None) {
        j["zero_optimization"]["offload_param"] = {{"device", to_string(t.offload_params)}};
    }
    if (t.fsdp_fp32_shards) {
        lost.push_back("fsdp_fp32_shards: ZeRO-3 keeps a 16-bit parameter partition beside its fp32 master "
                       "(read back off)");
    }
    j["bf16"] = {{"enabled", t.dtype == DType::Bf16}};
    j["fp16"] = {{"enabled", t.dtype == DType::Fp16}};
    // Gradient accumulation and reduction type (runtime/engine.py:1485-1496, :1979-2021 at
    // edaa722): unset is the model's type; bf16 with fp32 gradients needs ZeRO (without it
    // DeepSpeed raises "unsupported mix").
    if (t.dtype == DType::Bf16) {
        if (t.zero_stage >= 1) {
            j["data_types"] = {{"grad_accum_dtype", t.grad_reduce_in_bf16 ? "bf16" : "fp32"}};
        } else if (!t.grad_reduce_in_bf16) {
            lost.push_back("fp32 gradient accumulation with bf16 and ZeRO-0: DeepSpeed accumulates in bf16 "
                           "there (engine.py:2011-2021); written with its default");
        }
    }
    // AutoTP builds (world / tp, tp) groups that ignore a pipeline (utils/groups.py
    // _init_tp_mesh_device) and becomes the engine's mpu (runtime/engine.py:332-333, :671,
    // :1796), so PipelineEngine's dp_world_size == grid.data_parallel_size (pipe/engine.py:109)
    // fails for pp > 1: there the model code splits its layers over the topology's model axis.
    if (m.tp > 1 && m.pp == 1) j["tensor_parallel"] = {{"autotp_size", m.tp}};
    if (m.tp > 1 && m.pp > 1) {
        lost.push_back("tensor parallelism (tp " + std::to_string(m.tp) +
                       ") under a pipeline: not AutoTP, whose groups ignore the pipeline and fail "
                       "PipelineEngine's data-parallel check (pipe/engine.py:109); the model code splits its "
                       "layers over the topology's model axis (num_mp)");
    }
    if (m.cp > 1) j["sequence_parallel_size"] = m.cp;
    // AutoEP (runtime/config.py:69,128; module_inject/auto_ep_config.py:46-49), where DeepSpeed
    // accepts it; otherwise the experts stay replicated and EP is listed as lost.
    if (m.ep > 1) {
        const std::string refused = deepspeed_autoep_refusal(l);
        if (refused.empty()) {
            j["expert_parallel"] = {{"enabled", true}, {"autoep_size", m.ep}, {"expert_tensor_parallel_size", m.etp}};
        } else {
            lost.push_back("expert parallelism (ep " + std::to_string(m.ep) + "): " + refused +
                           "; written without expert_parallel (experts replicated)");
        }
    }
    // The pipeline engine reads activation_checkpoint_interval (pipe/engine.py:223), never
    // "stages" (config.py get_pipeline_config): the stage count is PipelineModule's.
    if (m.pp > 1) {
        j["pipeline"] = {{"activation_checkpoint_interval", t.recompute == Recompute::Full ? 1 : 0}};
        lost.push_back("pipeline stages: DeepSpeed takes them from " + pipeline_module_call(l) +
                       " in the training script, not from its config (import with --pipeline-stages " +
                       std::to_string(m.pp) + ")");
    } else if (t.recompute == Recompute::Full) {
        lost.push_back("full recompute without a pipeline: DeepSpeed's activation checkpointing is "
                       "called from the model code");
    }

    if (quantized_gemms(t.dtype)) {
        lost.push_back(to_string(t.dtype) + ": DeepSpeed's config has no " + to_string(t.dtype) + " training switch");
    }
    if (t.cuda_graphs != CudaGraphs::None) {
        lost.push_back("CUDA graphs " + to_string(t.cuda_graphs) + ": not written into a DeepSpeed config");
    }
    if (t.offload_activation_layers > 0) {
        // DeepSpeed's activation_checkpointing.cpu_checkpointing moves checkpoints of
        // recomputed layers, not the saved activations of layers that are not recomputed.
        lost.push_back("activation offload of " + std::to_string(t.offload_activation_layers) +
                       " layers: DeepSpeed offloads only activation checkpoints (cpu_checkpointing)");
    }
    if (t.dtype == DType::Tf32) lost.push_back("tf32: DeepSpeed's config has no TF32 switch");
    if (t.recompute == Recompute::Selective || t.recompute == Recompute::SelectiveOp) {
        lost.push_back(t.recompute_modules.empty() || t.recompute == Recompute::SelectiveOp
                           ? std::string("selective recompute: DeepSpeed checkpoints whole layers")
                           : "selective recompute of modules " + join_recompute_modules(t.recompute_modules) +
                                 ": DeepSpeed checkpoints whole layers");
    }
    if (t.recompute == Recompute::Full && t.recompute_num_layers > 0) {
        lost.push_back("full recompute of only " + std::to_string(t.recompute_num_layers) +
                       " layers per stage: DeepSpeed's interval checkpoints every layer group");
    }
    if (l.parallel.tp_comm_overlap != TpOverlap::None && m.tp > 1) {
        // AutoTP's tp_overlap_comm (runtime/tensor_parallel/config.py:50 at edaa7221) overlaps
        // only the backward all-reduce with the weight-gradient GEMM, what every layout's
        // efficiency.tp_comm_overlap already stands for; nothing tiles the collectives.
        lost.push_back("tiled TP communication overlap: AutoTP's tp_overlap_comm overlaps only "
                       "the backward all-reduce");
    }
    if (l.parallel.sequence_parallel && m.tp > 1) {
        lost.push_back("Megatron-style sequence parallelism: AutoTP has none");
    }
    if (l.parallel.vpp > 1 || t.schedule == Schedule::Interleaved) {
        lost.push_back("interleaved virtual pipeline stages: DeepSpeed's pipeline has one stage per rank");
    }
    if (t.schedule == Schedule::GPipe) lost.push_back("GPipe schedule: DeepSpeed's pipeline runs 1F1B");
    if (!classify_split(l.stage_layers()).even) {
        lost.push_back("uneven layers per stage: PipelineModule's uniform partition splits layers evenly");
    }
    if (!l.placement.experts_per_ep_rank.empty()) lost.push_back("expert placement");
    if (m.order != kDefaultAxisOrder) lost.push_back("rank order " + m.order);
    if (!t.flash_attention) lost.push_back("unfused attention: attention kernels are the model code's choice");
    if (t.moe_capacity_factor > 0) lost.push_back("MoE capacity factor: set in the model code");
    // DeepSpeed-MoE exchanges tokens with one all-to-all per direction (deepspeed/moe/sharded_moe.py).
    if (l.model.is_moe() && l.parallel.moe_dispatcher != MoeDispatcher::AllToAll) {
        lost.push_back("MoE " + to_string(l.parallel.moe_dispatcher) +
                       " dispatcher: DeepSpeed-MoE dispatches by all-to-all");
    }
    if (l.model.is_moe() && l.parallel.moe_a2a_overlap) {
        lost.push_back("MoE all-to-all overlap (Megatron-LM's combined 1F1B): DeepSpeed has no such schedule");
    }
    // What the model code decides and the config cannot say: the import takes Meshwork's
    // defaults for them, so any other value is declared here rather than changed on re-import.
    const TrainingConfig defaults;
    if (t.cross_entropy != defaults.cross_entropy) {
        lost.push_back("the loss implementation (" + to_string(t.cross_entropy) +
                       "): the model code's choice; a DeepSpeed config has none (re-imported as " +
                       to_string(defaults.cross_entropy) + ")");
    }
    if (t.attention_kernel != defaults.attention_kernel) {
        lost.push_back("the attention kernel (" + to_string(t.attention_kernel) +
                       "): the model code's choice; a DeepSpeed config has none (re-imported as " +
                       to_string(defaults.attention_kernel) + ")");
    }
    if (t.fused_elementwise != defaults.fused_elementwise) {
        lost.push_back("unfused element-wise kernels: the model code's choice; a DeepSpeed config has none");
    }
    const ParallelConfig parallel_defaults;
    if (l.parallel.overlap_grad_reduce != parallel_defaults.overlap_grad_reduce ||
        l.parallel.overlap_param_gather != parallel_defaults.overlap_param_gather) {
        lost.push_back(std::string("data-parallel overlap settings (gradient reduction ") +
                       (l.parallel.overlap_grad_reduce ? "overlapped" : "not overlapped") + ", parameter gather " +
                       (l.parallel.overlap_param_gather ? "overlapped" : "not overlapped") +
                       "): DeepSpeed's overlap_comm and prefetching are tuning keys the import does not read");
    }
    return j;
}

ExportResult export_deepspeed(const Layout& layout) {
    ExportResult r;
    r.text = deepspeed_config_json(layout, r.lost).dump(2) + "\n";
    return r;
}

}  // namespace meshwork
