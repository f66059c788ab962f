#include "core/export/torchtitan_facts.h"

#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

#include "core/export/stage_split.h"
#include "core/model/hf_config.h"

namespace meshwork {

namespace {

// torchtitan/models/{llama3,deepseek_v3,gpt_oss}/__init__.py flavor tables (torchtitan's
// llama3 flavors are the Llama 3.1 checkpoints) and their config_registry.py functions on
// main; v0.2.2 has the same model names and flavors. Qwen3 and DeepSeek 16B have no preset:
// their values, read from torchtitan/models/qwen3/__init__.py (main b5bcd76c: _0_6b :253 ...
// _235b_a22b :557, RMSNorm eps 1e-6 :65, experts softmax-routed with route_norm :179-180;
// the same values in v0.2.2's flavor table :46-190) and deepseek_v3/__init__.py (main
// _16b :390-433; v0.2.2 :78-102 with args.py:54-85's defaults), are written as the
// config.json transformers has for those shapes. Llama 4 (v0.2.2 llama4/__init__.py:38-63;
// main has no llama4) is the preset of its published checkpoint.
constexpr const char* kQwen3Src = "torchtitan/models/qwen3/__init__.py";
constexpr const char* kDsv3Src = "torchtitan/models/deepseek_v3/__init__.py";
constexpr const char* kQwen3_0_6b =
    R"({"model_type":"qwen3","hidden_size":1024,"num_hidden_layers":28,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":128,"intermediate_size":3072,"vocab_size":151936,"max_position_embeddings":40960,"rope_theta":1000000,"rms_norm_eps":1e-6,"tie_word_embeddings":true,"hidden_act":"silu"})";
constexpr const char* kQwen3_1_7b =
    R"({"model_type":"qwen3","hidden_size":2048,"num_hidden_layers":28,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":128,"intermediate_size":6144,"vocab_size":151936,"max_position_embeddings":40960,"rope_theta":1000000,"rms_norm_eps":1e-6,"tie_word_embeddings":true,"hidden_act":"silu"})";
constexpr const char* kQwen3_4b =
    R"({"model_type":"qwen3","hidden_size":2560,"num_hidden_layers":36,"num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,"intermediate_size":9728,"vocab_size":151936,"max_position_embeddings":40960,"rope_theta":1000000,"rms_norm_eps":1e-6,"tie_word_embeddings":true,"hidden_act":"silu"})";
constexpr const char* kQwen3_8b =
    R"({"model_type":"qwen3","hidden_size":4096,"num_hidden_layers":36,"num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,"intermediate_size":12288,"vocab_size":151936,"max_position_embeddings":40960,"rope_theta":1000000,"rms_norm_eps":1e-6,"tie_word_embeddings":false,"hidden_act":"silu"})";
constexpr const char* kQwen3_14b =
    R"({"model_type":"qwen3","hidden_size":5120,"num_hidden_layers":40,"num_attention_heads":40,"num_key_value_heads":8,"head_dim":128,"intermediate_size":17408,"vocab_size":151936,"max_position_embeddings":40960,"rope_theta":1000000,"rms_norm_eps":1e-6,"tie_word_embeddings":false,"hidden_act":"silu"})";
constexpr const char* kQwen3_32b =
    R"({"model_type":"qwen3","hidden_size":5120,"num_hidden_layers":64,"num_attention_heads":64,"num_key_value_heads":8,"head_dim":128,"intermediate_size":25600,"vocab_size":151936,"max_position_embeddings":40960,"rope_theta":1000000,"rms_norm_eps":1e-6,"tie_word_embeddings":false,"hidden_act":"silu"})";
constexpr const char* kQwen3_30b_a3b =
    R"({"model_type":"qwen3_moe","hidden_size":2048,"num_hidden_layers":48,"num_attention_heads":32,"num_key_value_heads":4,"head_dim":128,"intermediate_size":6144,"moe_intermediate_size":768,"num_experts":128,"num_experts_per_tok":8,"norm_topk_prob":true,"decoder_sparse_step":1,"mlp_only_layers":[],"vocab_size":151936,"max_position_embeddings":40960,"rope_theta":1000000,"rms_norm_eps":1e-6,"tie_word_embeddings":false,"hidden_act":"silu"})";
constexpr const char* kQwen3_235b_a22b =
    R"({"model_type":"qwen3_moe","hidden_size":4096,"num_hidden_layers":94,"num_attention_heads":64,"num_key_value_heads":4,"head_dim":128,"intermediate_size":12288,"moe_intermediate_size":1536,"num_experts":128,"num_experts_per_tok":8,"norm_topk_prob":true,"decoder_sparse_step":1,"mlp_only_layers":[],"vocab_size":151936,"max_position_embeddings":40960,"rope_theta":5000000,"rms_norm_eps":1e-6,"tie_word_embeddings":false,"hidden_act":"silu"})";
constexpr const char* kDsv3_16b =
    R"({"model_type":"deepseek_v2","hidden_size":2048,"intermediate_size":10944,"moe_intermediate_size":1408,"num_hidden_layers":27,"first_k_dense_replace":1,"moe_layer_freq":1,"num_attention_heads":16,"num_key_value_heads":16,"n_routed_experts":64,"n_shared_experts":2,"num_experts_per_tok":6,"norm_topk_prob":false,"scoring_func":"softmax","q_lora_rank":null,"kv_lora_rank":512,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"vocab_size":102400,"max_position_embeddings":16384,"rope_theta":10000,"rope_scaling":{"type":"yarn","factor":40,"original_max_position_embeddings":4096,"beta_fast":32,"beta_slow":1,"mscale":0.707,"mscale_all_dim":0.707},"rms_norm_eps":1e-5,"tie_word_embeddings":false,"hidden_act":"silu"})";

const std::vector<TorchtitanFlavor>& flavors() {
    static const std::vector<TorchtitanFlavor> kFlavors = {
        {"llama3-8b", "llama3", "8B", "llama3_8b", false},
        {"llama3-70b", "llama3", "70B", "llama3_70b", false},
        {"llama3.1-405b", "llama3", "405B", "llama3_405b", false},
        {"deepseek-v3", "deepseek_v3", "671B", "deepseek_v3_671b", true},
        {"gpt-oss-20b", "gpt_oss", "20b", "gpt_oss_20b", true},
        {"gpt-oss-120b", "gpt_oss", "120b", "gpt_oss_120b", true},
        {"llama4-scout", "llama4", "17bx16e", "", true, nullptr, false, true, "v0.2.2 torchtitan/models/llama4/__init__.py:38"},
        {"llama4-maverick", "llama4", "17bx128e", "", true, nullptr, false, true, "v0.2.2 torchtitan/models/llama4/__init__.py:51"},
        {"", "qwen3", "0.6B", "qwen3_0_6b", false, kQwen3_0_6b, true, true, kQwen3Src},
        {"", "qwen3", "1.7B", "qwen3_1_7b", false, kQwen3_1_7b, true, true, kQwen3Src},
        {"", "qwen3", "4B", "", false, kQwen3_4b, true, true, kQwen3Src},
        {"", "qwen3", "8B", "", false, kQwen3_8b, true, true, kQwen3Src},
        {"", "qwen3", "14B", "qwen3_14b", false, kQwen3_14b, true, true, kQwen3Src},
        {"", "qwen3", "32B", "qwen3_32b", false, kQwen3_32b, true, true, kQwen3Src},
        {"", "qwen3", "30B-A3B", "qwen3_30b_a3b", true, kQwen3_30b_a3b, true, true, kQwen3Src},
        {"", "qwen3", "235B-A22B", "", true, kQwen3_235b_a22b, true, true, kQwen3Src},
        {"", "deepseek_v3", "16B", "deepseek_v3_16b", true, kDsv3_16b, true, true, kDsv3Src},
    };
    return kFlavors;
}

// The same model for torchtitan: the position limit is a context cap, not a weight, and
// torchtitan trains without dropout.
bool same_architecture(ModelSpec a, const ModelSpec& b) {
    a.name = b.name;
    a.family = b.family;
    a.max_position_embeddings = b.max_position_embeddings;
    a.hidden_dropout = b.hidden_dropout;
    a.attention_dropout = b.attention_dropout;
    return a == b;
}

bool divides(long long d, long long n) { return d > 0 && n % d == 0; }

}  // namespace

const TorchtitanFlavor* torchtitan_flavor_of_preset(const std::string& preset) {
    if (preset.empty()) return nullptr;
    for (const auto& f : flavors()) {
        if (preset == f.preset) return &f;
    }
    return nullptr;
}

const TorchtitanFlavor* torchtitan_flavor_of_main_config(const std::string& name,
                                                         const std::string& function) {
    for (const auto& f : flavors()) {
        if (name == f.name && !function.empty() && function == f.main_config) return &f;
    }
    return nullptr;
}

std::string preset_of_torchtitan_flavor(const std::string& name, const std::string& flavor) {
    const TorchtitanFlavor* f = find_torchtitan_flavor(name, flavor);
    return f != nullptr ? f->preset : "";
}

const TorchtitanFlavor* find_torchtitan_flavor(const std::string& name, const std::string& flavor) {
    for (const auto& f : flavors()) {
        if (name == f.name && flavor == f.flavor) return &f;
    }
    return nullptr;
}

ModelSpec torchtitan_flavor_model(const TorchtitanFlavor& f) {
    if (f.hf_config == nullptr) return load_model(f.preset);
    return model_from_hf_config(nlohmann::json::parse(f.hf_config), f.source,
                                std::string(f.name) + "-" + f.flavor);
}

const TorchtitanFlavor* torchtitan_flavor_of_layout(const Layout& layout, TorchtitanTarget target) {
    const auto available = [&](const TorchtitanFlavor& f) {
        return target == TorchtitanTarget::Main ? f.on_main : f.on_v02;
    };
    if (const TorchtitanFlavor* f = torchtitan_flavor_of_preset(layout.model_ref)) {
        return available(*f) ? f : nullptr;
    }
    for (const auto& f : flavors()) {
        if (available(f) && same_architecture(torchtitan_flavor_model(f), layout.model)) return &f;
    }
    return nullptr;
}

int torchtitan_zero_stage(long long shard, const std::string& reshard, int pp) {
    if (shard <= 1) return 0;
    if (reshard == "never") return 2;
    if (reshard == "always") return 3;
    return pp > 1 ? 2 : 3;  // "default"
}

std::string torchtitan_mesh_problem(TorchtitanTarget target, long long replicate, long long shard,
                                    int tp, int pp, int cp, int ep, int etp) {
    // Expert meshes: v0.2.x unflattens (pp, dp_replicate, efsdp, ep, etp) with
    // efsdp = dp_shard·cp·tp / (ep·etp); main (pp, dp_replicate, efsdp, ep) with
    // efsdp = dp_shard·cp·tp / ep. Replicas never hold experts of another replica.
    const long long region = shard * cp * tp;
    if (target == TorchtitanTarget::V02) {
        if (ep > 1 && etp != 1 && etp != tp) {
            return "expert_tensor_parallel_degree " + std::to_string(etp) +
                   ": torchtitan v0.2.x supports ETP = TP or ETP = 1";
        }
        const long long group = ep > 1 ? static_cast<long long>(ep) * etp : 1;
        if (!divides(group, region)) {
            return "ep·etp = " + std::to_string(group) +
                   " does not divide dp_shard·cp·tp = " + std::to_string(region) +
                   ": torchtitan's expert mesh (efsdp) would be empty";
        }
        // Without FSDP (dp_shard·cp = 1 and no EP) v0.2.x applies DDP, which refuses any
        // other axis: "DDP has not supported > 1D parallelism".
        if (replicate > 1 && shard == 1 && cp == 1 && ep == 1 && (tp > 1 || pp > 1)) {
            return "data_parallel_replicate_degree " + std::to_string(replicate) +
                   " alone with tp/pp > 1: torchtitan v0.2.x runs DDP only when data parallelism "
                   "is the only axis (\"DDP has not supported > 1D parallelism\")";
        }
        return "";
    }
    if (!divides(ep, region)) {
        return "expert_parallel_degree " + std::to_string(ep) +
               " does not divide dp_shard·cp·tp = " + std::to_string(region) +
               " (torchtitan's ParallelDims refuses it)";
    }
    return "";
}

TorchtitanDataParallel plan_torchtitan_data_parallel(const Layout& layout, TorchtitanTarget target,
                                                     std::vector<std::string>& lost) {
    const auto& m = layout.parallel.mesh;
    const int zero = layout.training.zero_stage;
    TorchtitanDataParallel p;
    // Expert tensor parallelism: main has no ETP axis; v0.2.x only ETP = TP or 1.
    int etp = m.ep > 1 ? m.etp : 1;
    if (etp > 1 && target == TorchtitanTarget::Main) {
        lost.push_back(
            "expert tensor parallelism (ETP " + std::to_string(etp) +
            "): torchtitan main has no ETP axis; experts are split over EP and efsdp only");
        etp = 1;
    } else if (etp > 1 && etp != m.tp) {
        lost.push_back("expert tensor parallelism (ETP " + std::to_string(etp) +
                       "): torchtitan v0.2.x supports ETP = TP or 1; written as 1");
        etp = 1;
    }
    p.etp = etp;
    // A layout's replicas divide dp (validation, layout_rules.h zero_replicas_divide).
    const int replicas = zero >= 1 && layout.training.zero_replicas > 1 && m.dp % layout.training.zero_replicas == 0
                             ? layout.training.zero_replicas
                             : 1;
    const auto fits = [&](long long replicate, long long shard) {
        return torchtitan_mesh_problem(target, replicate, shard, m.tp, m.pp, m.cp, m.ep, etp)
            .empty();
    };
    if (m.dp == 1) {
        if (zero >= 2) lost.push_back("ZeRO-" + std::to_string(zero) + " without data parallelism");
    } else if (zero >= 2) {
        // Hybrid sharding (training.zero_replicas): HSDP, dp_replicate × dp_shard.
        p.replicate = replicas;
        p.shard = m.dp / replicas;
        p.reshard = zero == 2 ? "never" : "always";
    } else if (zero == 1) {
        p.replicate = replicas;
        p.shard = m.dp / replicas;
        p.reshard = "never";
        lost.push_back(
            "ZeRO-1 (distributed optimizer): torchtitan has no optimizer-only sharding; "
            "written as FSDP without resharding after forward (ZeRO-2), which also "
            "shards gradients");
    } else if (fits(m.dp, 1)) {
        p.replicate = m.dp;
    } else {
        // Replication alone is refused: FSDP over every data-parallel rank, without resharding
        // after forward (ZeRO-2), as the layout's ZeRO-0 is nearest to (the gradients and
        // optimizer states are then sharded; a replica count would not make it replication).
        const std::string why =
            torchtitan_mesh_problem(target, m.dp, 1, m.tp, m.pp, m.cp, m.ep, etp);
        p.shard = m.dp;
        p.replicate = 1;
        p.reshard = "never";
        lost.push_back("ZeRO-0 (replicated parameters): " + why + "; written as FSDP over all " +
                       std::to_string(m.dp) + " data-parallel ranks without resharding after forward (ZeRO-2)");
    }
    if (m.cp > 1 && zero < 2 && p.shard == 1) {
        lost.push_back("ZeRO-" + std::to_string(zero) +
                       " with context parallelism: torchtitan shards parameters over the cp ranks "
                       "(FSDP over dp_shard × cp)");
    }
    return p;
}

std::string torchtitan_schedule_name(Schedule schedule) {
    switch (schedule) {
        case Schedule::GPipe:
            return "GPipe";
        case Schedule::OneFOneB:
            return "1F1B";
        case Schedule::Interleaved:
            return "Interleaved1F1B";
    }
    return "1F1B";
}

TorchtitanSplit torchtitan_split(int layers, int pp,
                                 const std::optional<long long>& layers_per_stage,
                                 long long first_less, long long last_less,
                                 bool multi_stage_schedule) {
    TorchtitanSplit out;
    const long long effective = layers + first_less + last_less;
    long long stages = 0;
    if (layers_per_stage) {
        stages = (effective + *layers_per_stage - 1) / *layers_per_stage;
        if (stages % pp != 0) {
            out.error = std::to_string(stages) + " stages (" + std::to_string(effective) +
                        " effective layers / " + std::to_string(*layers_per_stage) +
                        ", rounded up) are not a multiple of pp " + std::to_string(pp);
            return out;
        }
        if (!multi_stage_schedule && stages / pp != 1) {
            out.error = "a single-stage schedule needs exactly 1 stage per rank, not " +
                        std::to_string(stages / pp);
            return out;
        }
        if (multi_stage_schedule && stages / pp < 2) {
            out.error = "a multi-stage schedule needs at least 2 stages per rank";
            return out;
        }
    } else {
        stages = static_cast<long long>(pp) * (multi_stage_schedule ? 2 : 1);
    }
    if (stages == 1) {
        out.layers = {layers};
        return out;
    }
    const long long base = effective / stages, extra = effective % stages;
    if (stages > effective || base == 0) {
        out.error = std::to_string(stages) + " stages for " + std::to_string(effective) +
                    " effective layers";
        return out;
    }
    if (first_less > base || last_less > base) {
        out.error = "first/last_stage_less_layers exceed the " + std::to_string(base) +
                    " layers of a stage";
        return out;
    }
    long long placed = 0;
    for (long long i = 0; i < stages; ++i) {
        long long n = base + (i < extra ? 1 : 0);
        if (i == 0) n -= first_less;
        if (i == stages - 1) n -= last_less;
        n = std::max(0ll, std::min(n, layers - placed));  // torchtitan stops at the last layer
        out.layers.push_back(static_cast<int>(n));
        placed += n;
    }
    if (placed != layers)
        out.error = "the stages hold " + std::to_string(placed) + " of " + std::to_string(layers) +
                    " layers";
    // The end stages still hold tok_embeddings, or norm and lm_head, without a layer
    // (input_weight may equal the layers per stage: distributed/pipeline_parallel.py:412-419,
    // :433-456 at b5bcd76c); a middle stage without one would hold nothing.
    if (out.layers.size() > 2 && std::find(out.layers.begin() + 1, out.layers.end() - 1, 0) != out.layers.end() - 1)
        out.error = "a middle stage without layers";
    if (!out.error.empty()) out.layers.clear();
    return out;
}

namespace {

// The keys that make torchtitan build `split` (layers_per_stage with the first/last stages
// lighter), or written = false when none does.
TorchtitanStages stages_for(const std::vector<int>& split, int layers, int pp, bool multi) {
    TorchtitanStages out;
    const auto chunks = static_cast<long long>(split.size());
    const auto builds = [&](long long first_less, long long last_less, long long& per) {
        const long long effective = layers + first_less + last_less;
        per = (effective + chunks - 1) / chunks;
        return torchtitan_split(layers, pp, per, first_less, last_less, multi).layers == split;
    };
    // The lighter-ends form first (what a reader expects), then any reductions that work.
    const SplitShape shape = classify_split(split);
    if (shape.even || shape.ends_form) {
        const int base =
            shape.even ? shape.middle : std::max({shape.first, shape.middle, shape.last});
        long long per = 0;
        if (builds(base - shape.first, base - shape.last, per) && per == base) {
            out.written = true;
            out.layers_per_stage = base;
            out.first_less = base - shape.first;
            out.last_less = base - shape.last;
            return out;
        }
    }
    for (long long sum = 0; sum <= 2ll * layers; ++sum) {
        for (long long first_less = 0; first_less <= sum; ++first_less) {
            long long per = 0;
            if (builds(first_less, sum - first_less, per)) {
                out.written = true;
                out.layers_per_stage = static_cast<int>(per);
                out.first_less = static_cast<int>(first_less);
                out.last_less = static_cast<int>(sum - first_less);
                return out;
            }
        }
    }
    return out;
}

std::string joined(const std::vector<int>& v) {
    std::string s;
    for (int n : v) s += (s.empty() ? "" : ",") + std::to_string(n);
    return s;
}

}  // namespace

TorchtitanStages torchtitan_stages(const Layout& layout, std::vector<std::string>& lost) {
    const auto split = layout.stage_layers();
    const int layers = layout.model.num_layers;
    const int pp = layout.parallel.mesh.pp;
    const bool multi = layout.parallel.vpp > 1;
    TorchtitanStages out = stages_for(split, layers, pp, multi);
    if (out.written) return out;
    // Not expressible: the split torchtitan builds without the keys (as many stages as the
    // schedule needs, dealt out evenly) is written explicitly, so that the file states what
    // runs and importing it then exporting again writes the same keys (issue 34).
    const TorchtitanSplit fallback = torchtitan_split(layers, pp, std::nullopt, 0, 0, multi);
    std::string written_as;
    if (fallback.error.empty()) {
        out = stages_for(fallback.layers, layers, pp, multi);
        if (out.written) written_as = "; written as torchtitan's even split " + joined(fallback.layers);
    }
    lost.push_back(
        "layers per stage " + joined(split) + ": torchtitan deals the layers out evenly (the remainder to the first "
        "stages) with the first and last stages lighter only" + written_as);
    return out;
}

bool torchtitan_writes_compile(const Layout& layout) {
    return layout.training.fused_elementwise || torchtitan_writes_async_tp(layout);
}

bool torchtitan_writes_async_tp(const Layout& layout) {
    return layout.parallel.tp_comm_overlap != TpOverlap::None && layout.parallel.mesh.tp > 1 &&
           layout.parallel.sequence_parallel;
}

void torchtitan_common_lost(const Layout& layout, std::vector<std::string>& lost) {
    const auto& m = layout.parallel.mesh;
    const auto& t = layout.training;
    if (m.pp == 1 && t.schedule != Schedule::OneFOneB) {
        lost.push_back("pipeline schedule " + to_string(t.schedule) + " with pp 1");
    }
    if (layout.parallel.vpp > 1 && t.schedule != Schedule::Interleaved) {
        lost.push_back("virtual stages with the " + to_string(t.schedule) + " schedule");
    }
    if (m.order != kDefaultAxisOrder) {
        lost.push_back("rank order " + m.order +
                       ": torchtitan's mesh is pp, dp, cp, tp (tp fastest)");
    }
    if (!layout.placement.experts_per_ep_rank.empty()) lost.push_back("expert placement");
    if (layout.parallel.tp_comm_overlap == TpOverlap::Pipe && m.tp > 1) {
        // Async TP (written by both exporters, torchtitan_writes_async_tp) splits every
        // collective into per-rank chunks beside the matmul's: no exposed tile.
        lost.push_back("TP overlap 'pipe': torchtitan's async TP leaves no tile exposed (read back "
                       "as 'ring')");
    }
    if (!t.flash_attention)
        lost.push_back("unfused attention: torchtitan uses SDPA/flex attention");
    if (t.moe_capacity_factor > 0) lost.push_back("MoE capacity factor");
    // The speed-only knobs (core/layout/speed_knobs.h) have no torchtitan key written here.
    if (t.cuda_graphs != CudaGraphs::None) lost.push_back("CUDA graphs " + to_string(t.cuda_graphs));
    // training.enable_cpu_offload is FSDP's parameter, gradient and optimizer offload
    // (torchtitan/config/configs.py:70-73), not activations.
    if (t.offload_activation_layers > 0)
        lost.push_back("activation offload of " + std::to_string(t.offload_activation_layers) + " layers");
    if (t.dtype == DType::Fp8 && t.fp8_recipe != Fp8Recipe::Tensorwise && t.fp8_recipe != Fp8Recipe::Rowwise) {
        lost.push_back("fp8 recipe " + to_string(t.fp8_recipe));
    }
    if (t.dtype == DType::Fp4) lost.push_back("fp4 (NVFP4) GEMMs: written as bf16 training");
    if (t.recompute == Recompute::Selective) {
        // torchtitan checkpoints whole blocks (FullAC), by op (SelectiveAC) or by a memory
        // budget (MemoryBudgetAC): nothing names submodules
        // (torchtitan/distributed/activation_checkpoint.py:166, :185, :290 at b5bcd76c6).
        const std::string what = t.recompute_modules.empty()
                                     ? std::string("core attention")
                                     : "modules " + join_recompute_modules(t.recompute_modules);
        lost.push_back("Megatron-style selective recompute (" + what + "): written as torchtitan's "
                       "op-level selective checkpointing, which saves every other matmul output "
                       "(read back as selective-op)");
    }
    if (!t.fused_elementwise && torchtitan_writes_async_tp(layout)) {
        lost.push_back("eager element-wise kernels: torchtitan's async TP needs the model compiled "
                       "(read back as fused)");
    }
    if (t.attention_kernel != AttentionKernel::Sdpa) {
        // torchtitan/models/attention.py (e7c0cae :183-214): PyTorch's SDPA.
        lost.push_back("attention_kernel " + to_string(t.attention_kernel) +
                       ": torchtitan runs PyTorch's scaled_dot_product_attention (read back as sdpa)");
    }
    if (t.zero_stage == 3 && !t.fsdp_fp32_shards) {
        lost.push_back("a bf16 parameter shard beside the fp32 master (fsdp_fp32_shards off): FSDP2 keeps the "
                       "fp32 shard alone (read back on)");
    }
    if (t.cross_entropy != CrossEntropy::Upcast) {
        // torchtitan/components/loss.py: cross_entropy(pred.float()) at v0.2.2 and b5bcd76c.
        lost.push_back("cross_entropy " + to_string(t.cross_entropy) +
                       ": torchtitan computes the loss on an fp32 copy of the logits (read back as upcast)");
    }
    if (layout.model.is_moe() && layout.parallel.moe_dispatcher == MoeDispatcher::AllGather) {
        lost.push_back("MoE allgather dispatcher: torchtitan's expert parallelism dispatches by all-to-all "
                       "(read back as alltoall)");
    }
    if (layout.model.is_moe() && layout.parallel.moe_dispatcher == MoeDispatcher::Flex) {
        // torchtitan picks DeepEP/HybridEP by the model config's comm_backend
        // (models/common/config_utils.py:364-380 at b5bcd76c6), not by a job-config key.
        lost.push_back("MoE flex dispatcher (" + to_string(layout.parallel.moe_flex_backend) +
                       "): torchtitan selects DeepEP/HybridEP in the model config's comm_backend, "
                       "which the job config does not carry");
    }
    const ParallelConfig parallel_defaults;
    if (layout.parallel.overlap_grad_reduce != parallel_defaults.overlap_grad_reduce ||
        layout.parallel.overlap_param_gather != parallel_defaults.overlap_param_gather) {
        // FSDP2 prefetches the next gathers and reduces gradients as the backward produces
        // them; torchtitan has no switch for either (the import reads both as on).
        lost.push_back(std::string("data-parallel overlap turned off (gradient reduction ") +
                       (layout.parallel.overlap_grad_reduce ? "on" : "off") + ", parameter gather " +
                       (layout.parallel.overlap_param_gather ? "on" : "off") +
                       "): torchtitan's FSDP always overlaps both");
    }
    if (layout.model.is_moe() && layout.parallel.moe_a2a_overlap) {
        lost.push_back("MoE all-to-all overlap (Megatron-LM's combined 1F1B): torchtitan has no such schedule");
    }
    if (t.grad_reduce_in_bf16 && (t.dtype == DType::Bf16 || quantized_gemms(t.dtype))) {
        // training.mixed_precision_reduce is Literal["float32"] (config/configs.py:102 at b5bcd76c6).
        lost.push_back("gradient reduction in bf16: torchtitan reduces in float32 only");
    }
    if (t.recompute == Recompute::Full && t.recompute_num_layers > 0) {
        lost.push_back("full recompute of " + std::to_string(t.recompute_num_layers) +
                       " layers per stage: torchtitan's full mode recomputes every layer");
    }
    if ((t.offload_optimizer != Offload::None || t.offload_params != Offload::None) &&
        !torchtitan_cpu_offload(layout)) {
        lost.push_back("optimizer offload " + to_string(t.offload_optimizer) + ", parameter offload " +
                       to_string(t.offload_params) + " with ZeRO-" + std::to_string(t.zero_stage) +
                       ": torchtitan's enable_cpu_offload moves parameters, gradients and optimizer states "
                       "together, to the CPU, under ZeRO-3's sharding");
    }
}

bool torchtitan_cpu_offload(const Layout& layout) {
    const auto& t = layout.training;
    return t.offload_optimizer == Offload::Cpu && t.offload_params == Offload::Cpu && t.zero_stage == 3;
}

std::string torchtitan_quoted(const std::string& s) {
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

}  // namespace meshwork
