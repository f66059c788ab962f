#include <algorithm>
#include <array>

#include "export/canonical_layout.h"
#include "export/stage_split.h"
#include "export/torchtitan_config.h"

namespace meshwork {

namespace {

struct Flavor {
    const char* preset;
    const char* name;
    const char* flavor;
};
// torchtitan/models/*/__init__.py flavors with the same layers, widths, heads, experts and
// vocabulary as the preset (torchtitan's llama3 flavors are the Llama 3.1 checkpoints).
constexpr std::array<Flavor, 4> kFlavors{{
    {"llama3-8b", "llama3", "8B"},
    {"llama3-70b", "llama3", "70B"},
    {"llama3.1-405b", "llama3", "405B"},
    {"deepseek-v3", "deepseek_v3", "671B"},
}};

std::string toml_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out + "\"";
}

std::string schedule_name(Schedule s) {
    switch (s) {
        case Schedule::GPipe: return "GPipe";
        case Schedule::OneFOneB: return "1F1B";
        case Schedule::Interleaved: return "Interleaved1F1B";
    }
    return "1F1B";
}

}  // namespace

bool torchtitan_flavor(const std::string& preset, std::string& name, std::string& flavor) {
    for (const auto& f : kFlavors) {
        if (preset == f.preset) {
            name = f.name;
            flavor = f.flavor;
            return true;
        }
    }
    return false;
}

std::string preset_of_torchtitan_flavor(const std::string& name, const std::string& flavor) {
    for (const auto& f : kFlavors) {
        if (name == f.name && flavor == f.flavor) return f.preset;
    }
    return "";
}

ExportResult export_torchtitan(const Layout& layout) {
    const Layout l = canonical_layout(layout);
    const auto& m = l.parallel.mesh;
    const auto& t = l.training;
    ExportResult r;
    auto& lost = r.lost;
    std::string s;
    s += "# torchtitan job config for the Meshwork layout '" + l.name + "'\n";
    s += "# (meshwork-cli export --format torchtitan). Run with NGPU=" + std::to_string(l.gpus) +
         " or torchrun ... -m torchtitan.train --job.config_file FILE\n\n";
    s += "[job]\ndescription = " + toml_string(l.description.empty() ? l.name : l.description) + "\n\n";

    std::string name, flavor;
    if (!torchtitan_flavor(l.model_ref, name, flavor)) {
        name = "llama3";
        flavor = l.model_ref.empty() ? l.model.name : l.model_ref;
        lost.push_back("model " + flavor + ": torchtitan has no flavor of this architecture "
                       "(written as flavor \"" + flavor + "\", which torchtitan must register)");
    }
    s += "[model]\nname = " + toml_string(name) + "\nflavor = " + toml_string(flavor) + "\n";
    if (t.dtype == DType::Fp8) s += "converters = [\"float8\"]\n";
    s += "\n";

    // torchtitan's local_batch_size is the per-rank batch of one optimizer step's forward
    // (split into pipeline micro-batches when pp > 1); global_batch_size adds gradient
    // accumulation on top.
    const int local = m.pp > 1 ? t.global_batch_size / m.dp : t.micro_batch_size;
    s += "[training]\nlocal_batch_size = " + std::to_string(local) + "\n";
    s += "global_batch_size = " + std::to_string(t.global_batch_size) + "\n";
    s += "seq_len = " + std::to_string(t.seq_length) + "\n";
    if (t.dtype == DType::Fp32) {
        s += "mixed_precision_param = \"float32\"\n";
    } else {
        s += "mixed_precision_param = \"bfloat16\"\n";
        if (t.dtype == DType::Fp16) lost.push_back("fp16: torchtitan trains in bfloat16 or float32");
        if (t.dtype == DType::Tf32) lost.push_back("tf32: torchtitan has no TF32 switch");
    }
    s += "\n[parallelism]\n";
    // FSDP (fully_shard) is ZeRO-3; with reshard_after_forward off it keeps parameters
    // unsharded between forward and backward, which is ZeRO-2. DDP is ZeRO-0.
    int replicate = m.dp, shard = 1;
    std::string reshard;
    if (t.zero_stage >= 2 && m.dp > 1) {
        replicate = 1;
        shard = m.dp;
        reshard = t.zero_stage == 2 ? "never" : "always";
    } else if (t.zero_stage == 1) {
        lost.push_back("ZeRO-1 (distributed optimizer): torchtitan shards with FSDP (ZeRO-2/3) "
                       "or replicates (DDP); written as DDP");
    } else if (t.zero_stage >= 2) {
        lost.push_back("ZeRO-" + std::to_string(t.zero_stage) + " without data parallelism");
    }
    s += "data_parallel_replicate_degree = " + std::to_string(replicate) + "\n";
    s += "data_parallel_shard_degree = " + std::to_string(shard) + "\n";
    if (!reshard.empty()) s += "fsdp_reshard_after_forward = " + toml_string(reshard) + "\n";
    s += "tensor_parallel_degree = " + std::to_string(m.tp) + "\n";
    if (m.tp > 1 && !l.parallel.sequence_parallel) {
        lost.push_back("tensor parallelism without sequence parallelism: torchtitan's TP plan "
                       "always shards norms over the sequence");
    }
    s += "pipeline_parallel_degree = " + std::to_string(m.pp) + "\n";
    if (m.pp > 1) {
        s += "pipeline_parallel_schedule = " + toml_string(schedule_name(t.schedule)) + "\n";
        s += "pipeline_parallel_microbatch_size = " + std::to_string(t.micro_batch_size) + "\n";
        const SplitShape shape = classify_split(l.stage_layers());
        if (shape.even || shape.ends_form) {
            const int base = shape.even ? shape.middle : std::max({shape.first, shape.middle, shape.last});
            s += "pipeline_parallel_layers_per_stage = " + std::to_string(base) + "\n";
            s += "pipeline_parallel_first_stage_less_layers = " + std::to_string(base - shape.first) + "\n";
            s += "pipeline_parallel_last_stage_less_layers = " + std::to_string(base - shape.last) + "\n";
            if (shape.ends_form && l.stage_layers().size() > 2 && shape.middle != base) {
                lost.push_back("stage split: torchtitan's middle stages hold layers_per_stage");
            }
        } else {
            lost.push_back("layers per stage: torchtitan describes an even split with lighter "
                           "first and last stages only");
        }
    } else if (t.schedule != Schedule::OneFOneB) {
        lost.push_back("pipeline schedule " + to_string(t.schedule) + " with pp 1");
    }
    if (l.parallel.vpp > 1 && t.schedule != Schedule::Interleaved) {
        lost.push_back("virtual stages with the " + to_string(t.schedule) + " schedule");
    }
    s += "context_parallel_degree = " + std::to_string(m.cp) + "\n";
    if (l.model.is_moe() || m.ep > 1) {
        s += "expert_parallel_degree = " + std::to_string(m.ep) + "\n";
        s += "expert_tensor_parallel_degree = " + std::to_string(m.etp) + "\n";
    }
    if (m.order != "tp-cp-ep-dp-pp") {
        lost.push_back("rank order " + m.order + ": torchtitan's mesh is pp, dp, cp, tp (tp fastest)");
    }
    if (!l.placement.experts_per_ep_rank.empty()) lost.push_back("expert placement");
    if (!t.flash_attention) lost.push_back("unfused attention: torchtitan uses SDPA/flex attention");
    if (t.moe_capacity_factor > 0) lost.push_back("MoE capacity factor");
    if (t.offload_optimizer != Offload::None || t.offload_params != Offload::None) {
        lost.push_back("DeepSpeed-style offload: torchtitan's enable_cpu_offload moves parameters, "
                       "gradients and optimizer states together");
    }

    s += "\n[activation_checkpoint]\n";
    switch (t.recompute) {
        case Recompute::None: s += "mode = \"none\"\n"; break;
        case Recompute::Selective:
            // Op-level selective AC: saves matmul outputs, recomputes the cheap ops around them.
            s += "mode = \"selective\"\nselective_ac_option = \"op\"\n";
            break;
        case Recompute::Full:
            s += "mode = \"full\"\n";
            if (t.recompute_num_layers > 0) {
                lost.push_back("full recompute of " + std::to_string(t.recompute_num_layers) +
                               " layers per stage: torchtitan's full mode recomputes every layer");
            }
            break;
    }
    r.text = s;
    return r;
}

}  // namespace meshwork
