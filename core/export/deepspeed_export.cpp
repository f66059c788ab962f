#include "export/canonical_layout.h"
#include "export/deepspeed_config.h"
#include "export/stage_split.h"

namespace meshwork {

nlohmann::json deepspeed_config_json(const Layout& layout, std::vector<std::string>& lost) {
    const Layout l = canonical_layout(layout);
    const auto& m = l.parallel.mesh;
    const auto& t = l.training;
    nlohmann::json j;
    // DeepSpeed checks train_batch_size = micro batch × accumulation steps × data-parallel
    // size, where the data-parallel size is world / (AutoTP × pipeline × sequence parallel).
    j["train_batch_size"] = t.global_batch_size;
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
    // The pipeline engine reads "stages" and "activation_checkpoint_interval" (layers per
    // checkpoint, 0 = none); PipelineModule(num_stages=...) in the script must agree.
    j["pipeline"] = {{"stages", m.pp},
                     {"partition", "uniform"},
                     {"activation_checkpoint_interval", t.recompute == Recompute::Full ? 1 : 0}};

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
    if (m.ep > 1) lost.push_back("expert parallelism: DeepSpeed sets ep_size in the model code (MoE layer)");
    if (l.model.is_moe() && m.etp != 1) lost.push_back("expert tensor parallelism: not in DeepSpeed's config");
    if (l.parallel.vpp > 1 || t.schedule == Schedule::Interleaved) {
        lost.push_back("interleaved virtual pipeline stages: DeepSpeed's pipeline has one stage per rank");
    }
    if (t.schedule == Schedule::GPipe) lost.push_back("GPipe schedule: DeepSpeed's pipeline runs 1F1B");
    if (!classify_split(l.stage_layers()).even) {
        lost.push_back("uneven layers per stage: DeepSpeed's uniform partition splits layers evenly");
    }
    if (!l.placement.experts_per_ep_rank.empty()) lost.push_back("expert placement");
    if (m.order != "tp-cp-ep-dp-pp") lost.push_back("rank order " + m.order);
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
