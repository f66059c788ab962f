#include "core/common/error.h"
#include "core/export/canonical_layout.h"
#include "core/export/deepspeed_config.h"
#include "core/export/stage_split.h"

namespace meshwork {

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
    // ZeRO-Offload / ZeRO-Infinity (deepspeed/runtime/zero/offload_config.py: device none|cpu|nvme).
    if (t.offload_optimizer != Offload::None) {
        j["zero_optimization"]["offload_optimizer"] = {{"device", to_string(t.offload_optimizer)}};
    }
    if (t.offload_params != Offload::None) {
        j["zero_optimization"]["offload_param"] = {{"device", to_string(t.offload_params)}};
    }
    j["bf16"] = {{"enabled", t.dtype == DType::Bf16}};
    j["fp16"] = {{"enabled", t.dtype == DType::Fp16}};
    if (m.tp > 1) j["tensor_parallel"] = {{"autotp_size", m.tp}};
    if (m.cp > 1) j["sequence_parallel_size"] = m.cp;
    // AutoEP (runtime/config.py:69,128; module_inject/auto_ep_config.py:46-49).
    if (m.ep > 1) {
        j["expert_parallel"] = {{"enabled", true}, {"autoep_size", m.ep}, {"expert_tensor_parallel_size", m.etp}};
        if (m.tp > 1 && t.zero_stage == 3) {
            lost.push_back("AutoEP with AutoTP under ZeRO-3: DeepSpeed does not support it yet (runtime/engine.py)");
        }
    }
    // The pipeline engine reads activation_checkpoint_interval (pipe/engine.py:223), never
    // "stages" (config.py get_pipeline_config): the stage count is PipelineModule's.
    if (m.pp > 1) {
        j["pipeline"] = {{"activation_checkpoint_interval", t.recompute == Recompute::Full ? 1 : 0}};
        lost.push_back("pipeline stages: DeepSpeed takes them from PipelineModule(num_stages=" + std::to_string(m.pp) +
                       ") in the training script, not from its config (import with --pipeline-stages " +
                       std::to_string(m.pp) + ")");
    } else if (t.recompute == Recompute::Full) {
        lost.push_back("full recompute without a pipeline: DeepSpeed's activation checkpointing is "
                       "called from the model code");
    }

    if (t.dtype == DType::Fp8) lost.push_back("fp8: DeepSpeed's config has no FP8 training switch");
    if (t.dtype == DType::Tf32) lost.push_back("tf32: DeepSpeed's config has no TF32 switch");
    if (t.recompute == Recompute::Selective) {
        lost.push_back("selective recompute: DeepSpeed checkpoints whole layers");
    }
    if (t.recompute == Recompute::Full && t.recompute_num_layers > 0) {
        lost.push_back("full recompute of only " + std::to_string(t.recompute_num_layers) +
                       " layers per stage: DeepSpeed's interval checkpoints every layer group");
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
    return j;
}

ExportResult export_deepspeed(const Layout& layout) {
    ExportResult r;
    r.text = deepspeed_config_json(layout, r.lost).dump(2) + "\n";
    return r;
}

}  // namespace meshwork
