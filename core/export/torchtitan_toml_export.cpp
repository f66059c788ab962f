#include <algorithm>

#include "core/export/canonical_layout.h"
#include "core/export/torchtitan_config.h"
#include "core/export/torchtitan_facts.h"

namespace meshwork {

ExportResult export_torchtitan_toml(const Layout& layout) {
    const Layout l = canonical_layout(layout);
    const auto& m = l.parallel.mesh;
    const auto& t = l.training;
    ExportResult r;
    auto& lost = r.lost;
    std::string s;
    s += "# torchtitan v0.2.x job config for the Meshwork layout '" + l.name + "'\n";
    s += "# (meshwork-cli export --format torchtitan-toml; key names of torchtitan v0.2.2, the "
         "last\n";
    s += "# release with TOML configs). Run with NGPU=" + std::to_string(l.gpus) +
         " CONFIG_FILE=FILE ./run_train.sh, or torchrun ... -m torchtitan.train --job.config_file "
         "FILE\n\n";
    s += "[job]\ndescription = " + torchtitan_quoted(l.description.empty() ? l.name : l.description) +
         "\n\n";

    const TorchtitanFlavor* known = torchtitan_flavor_of_layout(l, TorchtitanTarget::V02);
    std::string name = known != nullptr ? known->name : "llama3";
    std::string flavor = known != nullptr ? known->flavor : "";
    if (known == nullptr) {
        flavor = l.model_ref.empty() ? l.model.name : l.model_ref;
        lost.push_back("model " + flavor +
                       ": torchtitan has no flavor of this architecture "
                       "(written as flavor \"" +
                       flavor + "\", which torchtitan must register)");
    }
    s += "[model]\nname = " + torchtitan_quoted(name) + "\nflavor = " + torchtitan_quoted(flavor) + "\n";
    if (t.dtype == DType::Fp8) {
        // v0.2.x registers the float8 converters under these names; "float8" is a KeyError.
        s += std::string("converters = [\"") + kV02Float8Linear + "\"";
        if (l.model.is_moe()) s += std::string(", \"") + kV02Float8GroupedMm + "\"";
        s += "]\n";
    }
    s += "\n";

    // torchtitan's local_batch_size is the per-rank batch of one optimizer step's forward
    // (split into pipeline micro-batches when pp > 1); global_batch_size adds gradient
    // accumulation on top.
    const int local = m.pp > 1 ? t.global_batch_size / m.dp : t.micro_batch_size;
    s += "[training]\nlocal_batch_size = " + std::to_string(local) + "\n";
    s += "global_batch_size = " + std::to_string(t.global_batch_size) + "\n";
    s += "seq_len = " + std::to_string(t.seq_length) + "\n";
    if (torchtitan_cpu_offload(layout)) s += "enable_cpu_offload = true\n";
    if (t.dtype == DType::Fp32) {
        s += "mixed_precision_param = \"float32\"\n";
    } else {
        s += "mixed_precision_param = \"bfloat16\"\n";
        if (t.dtype == DType::Fp16)
            lost.push_back("fp16: torchtitan trains in bfloat16 or float32");
        if (t.dtype == DType::Tf32) lost.push_back("tf32: torchtitan has no TF32 switch");
    }
    s += "\n[parallelism]\n";
    // What torchtitan v0.2.x runs: DDP only as the sole axis, FSDP/HSDP otherwise, and the
    // expert mesh inside dp_shard × cp × tp (torchtitan_facts.cpp).
    const TorchtitanDataParallel dp = plan_torchtitan_data_parallel(l, TorchtitanTarget::V02, lost);
    const int replicate = dp.replicate, shard = dp.shard;
    const std::string& reshard = dp.reshard;
    s += "data_parallel_replicate_degree = " + std::to_string(replicate) + "\n";
    s += "data_parallel_shard_degree = " + std::to_string(shard) + "\n";
    if (!reshard.empty()) s += "fsdp_reshard_after_forward = " + torchtitan_quoted(reshard) + "\n";
    s += "tensor_parallel_degree = " + std::to_string(m.tp) + "\n";
    if (m.tp > 1 && !l.parallel.sequence_parallel) {
        lost.push_back(
            "tensor parallelism without sequence parallelism: torchtitan's TP plan "
            "always shards norms over the sequence");
    }
    s += "pipeline_parallel_degree = " + std::to_string(m.pp) + "\n";
    if (m.pp > 1) {
        s += "pipeline_parallel_schedule = " + torchtitan_quoted(torchtitan_schedule_name(t.schedule)) +
             "\n";
        s += "pipeline_parallel_microbatch_size = " + std::to_string(t.micro_batch_size) + "\n";
        const TorchtitanStages st = torchtitan_stages(l, lost);
        if (st.written) {
            s += "pipeline_parallel_layers_per_stage = " + std::to_string(st.layers_per_stage) +
                 "\n";
            s += "pipeline_parallel_first_stage_less_layers = " + std::to_string(st.first_less) +
                 "\n";
            s +=
                "pipeline_parallel_last_stage_less_layers = " + std::to_string(st.last_less) + "\n";
        }
    }
    s += "context_parallel_degree = " + std::to_string(m.cp) + "\n";
    if (l.model.is_moe() || m.ep > 1) {
        s += "expert_parallel_degree = " + std::to_string(m.ep) + "\n";
        s += "expert_tensor_parallel_degree = " + std::to_string(dp.etp) + "\n";
    }
    if (torchtitan_writes_async_tp(l)) s += "enable_async_tensor_parallel = true\n";
    torchtitan_common_lost(l, lost);
    // Fused element-wise kernels are torch.compile's; v0.2.x also refuses async TP unless the
    // model is compiled (distributed/tensor_parallel.py:20-23).
    if (torchtitan_writes_compile(l)) s += "\n[compile]\nenable = true\n";

    s += "\n[activation_checkpoint]\n";
    switch (t.recompute) {
        case Recompute::None:
            s += "mode = \"none\"\n";
            break;
        case Recompute::Selective:
        case Recompute::SelectiveOp:
            // Op-level selective AC: saves matmul outputs, recomputes the cheap ops around them.
            s += "mode = \"selective\"\nselective_ac_option = \"op\"\n";
            break;
        case Recompute::Full:
            s += "mode = \"full\"\n";
            break;
    }
    if (t.dtype == DType::Fp8) {
        // deepseek_v3's parallelize refuses tensorwise float8 (the default recipe) with TP.
        // torchao's rowwise recipe is written as such (training.fp8_recipe rowwise).
        if ((name == "deepseek_v3" && m.tp > 1) || t.fp8_recipe == Fp8Recipe::Rowwise)
            s += "\n[quantize.linear.float8]\nrecipe_name = \"rowwise\"\n";
        // The grouped-GEMM converter converts only the MoE modules named here (none by default).
        if (l.model.is_moe()) s += "\n[quantize.grouped_mm.float8]\nfqns = [\"experts\"]\n";
    }
    r.text = s;
    return r;
}

}  // namespace meshwork
