#include "core/export/torchtitan_settings.h"

#include <algorithm>
#include <cctype>

#include "core/common/error.h"
#include "core/common/resources.h"
#include "core/export/canonical_layout.h"
#include "core/export/import_common.h"
#include "core/model/hf_config.h"

namespace meshwork {

namespace {

constexpr long long kMaxAxis = 1 << 20;
constexpr long long kMaxBatch = 1ll << 30;

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

void check_range(const TorchtitanSettings& s, const std::string& file, const std::string& key,
                 long long v, long long min_value, long long max_value) {
    if (v < min_value || v > max_value) {
        throw InputError(file, s.at(key),
                         std::to_string(v) + " is outside [" + std::to_string(min_value) + ", " +
                             std::to_string(max_value) + "]");
    }
}

}  // namespace

void layout_from_torchtitan(const TorchtitanSettings& s, const std::string& file,
                            const ImportOptions& options, ImportResult& r) {
    const std::string tt =
        s.target == TorchtitanTarget::Main ? "torchtitan main" : "torchtitan v0.2.x";
    for (const auto& [key, v, lo, hi] : {
             std::tuple{"parallelism.data_parallel_replicate_degree", s.replicate, 1ll, kMaxAxis},
             std::tuple{"parallelism.data_parallel_shard_degree", s.shard, -1ll, kMaxAxis},
             std::tuple{"parallelism.tensor_parallel_degree", s.tp, 1ll, kMaxAxis},
             std::tuple{"parallelism.pipeline_parallel_degree", s.pp, 1ll, kMaxAxis},
             std::tuple{"parallelism.context_parallel_degree", s.cp, 1ll, kMaxAxis},
             std::tuple{"parallelism.expert_parallel_degree", s.ep, 1ll, kMaxAxis},
             std::tuple{"parallelism.expert_tensor_parallel_degree", s.etp, 1ll, kMaxAxis},
             std::tuple{"training.seq_len", s.seq_len, 1ll, 1ll << 26},
             std::tuple{"training.local_batch_size", s.local_batch, 1ll, kMaxBatch},
             std::tuple{"training.global_batch_size", s.global_batch, -1ll, kMaxBatch},
             std::tuple{"parallelism.pipeline_parallel_microbatch_size", s.pp_micro_batch, 1ll,
                        kMaxBatch},
             std::tuple{"parallelism.pipeline_parallel_first_stage_less_layers", s.first_less, 0ll,
                        100000ll},
             std::tuple{"parallelism.pipeline_parallel_last_stage_less_layers", s.last_less, 0ll,
                        100000ll},
         }) {
        check_range(s, file, key, v, lo, hi);
    }
    if (s.shard == 0) {
        throw InputError(file, s.at("parallelism.data_parallel_shard_degree"),
                         "0 is not a degree (use -1 or at least 1)");
    }
    if (s.global_batch == 0)
        throw InputError(file, s.at("training.global_batch_size"), "0 is not a batch size");

    Layout& l = r.layout;
    // The model: --model wins; else the flavor of a known torchtitan model; else a flavor
    // that names a Meshwork preset (what a lossy export writes).
    std::string preset =
        options.model.value_or(preset_of_torchtitan_flavor(s.model_name, s.flavor));
    const std::string flavor_at = s.at("model.flavor");
    const TorchtitanFlavor* registry = find_torchtitan_flavor(s.model_name, s.flavor);
    if (!options.model && registry != nullptr && registry->hf_config != nullptr) {
        // A flavor of torchtitan's registry that no preset has (Qwen3, DeepSeek 16B): its
        // values, written inline.
        l.model = torchtitan_flavor_model(*registry);
        l.model_ref.clear();
        r.notes.push_back("torchtitan " + s.model_name + " flavor " + s.flavor + ": the model of torchtitan's registry (" +
                          registry->source + "), written inline");
    } else if (preset.empty()) {
        try {
            // A flavor is a name, never a path: only a bundled preset of that name is read
            // (flavor = "/etc/passwd" must not open the file).
            if (!is_preset_name(PresetKind::Model, s.flavor)) throw InputError(file, flavor_at, "not a preset");
            (void)load_model(s.flavor, file, flavor_at);
            preset = s.flavor;
            r.notes.push_back("flavor \"" + s.flavor +
                              "\" read as the Meshwork preset of that name");
        } catch (const InputError&) {
            throw InputError(file, flavor_at,
                             "torchtitan model " + s.model_name + " flavor " + s.flavor +
                                 " has no Meshwork preset: pass --model PRESET|config.json");
        }
    }
    if (!preset.empty()) {
        l.model = load_model(preset, options.model ? "<flags>" : file, options.model ? "--model" : flavor_at);
        l.model_ref = preset;
    }
    apply_import_defaults(l, options, file, "torchtitan config", r.notes);

    auto& mesh = l.parallel.mesh;
    mesh.tp = static_cast<int>(s.tp);
    mesh.pp = static_cast<int>(s.pp);
    mesh.cp = static_cast<int>(s.cp);
    mesh.ep = static_cast<int>(s.ep);
    mesh.etp = static_cast<int>(s.target == TorchtitanTarget::Main ? 1 : s.etp);
    long long shard = s.shard;
    const long long model_parallel = s.tp * s.pp * s.cp;
    const auto world_opt = world_from_options(options, l.cluster.allocation_gpus());
    long long world = 0;
    if (shard == -1) {
        // torchtitan: -1 takes the ranks left after replicate, cp, tp and pp.
        if (!world_opt) {
            throw InputError(
                file, s.at("parallelism.data_parallel_shard_degree"),
                "-1 (the remaining ranks) needs the world size, which torchtitan takes "
                "from the launcher (NGPU): pass --gpus or --nodes");
        }
        world = *world_opt;
        if (world % (model_parallel * s.replicate) != 0) {
            throw InputError("<flags>", options.gpus ? "--gpus" : "--nodes",
                             std::to_string(world) +
                                 " GPUs: not a multiple of replicate × tp × pp × cp = " +
                                 std::to_string(model_parallel * s.replicate));
        }
        shard = world / (model_parallel * s.replicate);
    } else {
        world = model_parallel * s.replicate * shard;
        if (world_opt && *world_opt != world) {
            throw InputError("<flags>", options.gpus ? "--gpus" : "--nodes",
                             std::to_string(*world_opt) + " GPUs disagree with the config's " +
                                 std::to_string(world));
        }
    }
    if (world > kMaxAxis)
        throw InputError(file, s.at("parallelism.data_parallel_shard_degree"),
                         "more than 2^20 GPUs");
    const std::string problem = torchtitan_mesh_problem(
        s.target, s.replicate, shard, mesh.tp, mesh.pp, mesh.cp, mesh.ep, static_cast<int>(s.etp));
    if (!problem.empty()) r.notes.push_back(tt + " would refuse these degrees: " + problem);
    if (s.target == TorchtitanTarget::Main && s.etp > 1) {
        r.notes.push_back(
            "expert_tensor_parallel_degree: torchtitan main has no ETP axis; read as 1");
    }
    mesh.dp = static_cast<int>(s.replicate * shard);
    l.gpus = static_cast<int>(world);
    l.parallel.sequence_parallel = mesh.tp > 1 && s.sequence_parallel;
    if (s.async_tp) {
        // Unset under a base config Meshwork does not read: taken as the base's (upstream's
        // own recipes enable compile in a base and async TP in the derived function).
        const bool compiled = s.compile_enable.value_or(s.base_unread);
        if (!s.compile_enable && s.base_unread) {
            r.notes.push_back("compile.enable is not set here and async TP needs it: taken as set "
                              "by the base config");
        }
        if (!compiled || !s.compile_model) {
            throw InputError(file, s.at("async_tp"),
                             tt + " refuses async TP unless the model is compiled "
                                  "(compile.enable = true with \"model\" in compile.components)");
        }
        // Inductor's micro-pipelined TP runs each all-gather / reduce-scatter as per-rank
        // chunks beside the matmul's chunks: what the cost model calls "ring".
        if (l.parallel.sequence_parallel) {
            l.parallel.tp_comm_overlap = TpOverlap::Ring;
        } else {
            r.notes.push_back("async tensor parallelism without tensor parallelism has no effect");
        }
    }

    auto& tr = l.training;
    if (s.reshard != "default" && s.reshard != "always" && s.reshard != "never") {
        throw InputError(file, s.at("parallelism.fsdp_reshard_after_forward"),
                         "'" + s.reshard + "': expected default, always or never");
    }
    tr.zero_stage = torchtitan_zero_stage(shard, s.reshard, mesh.pp);
    // FSDP2 keeps each shard in the parameter's fp32 dtype and casts to bf16 for the gather
    // (torchtitan's MixedPrecisionPolicy, param_dtype bf16, reduce_dtype fp32).
    tr.fsdp_fp32_shards = tr.zero_stage == 3;
    // HSDP: FSDP over dp_shard ranks, replicated dp_replicate times (training.zero_replicas).
    if (shard > 1 && s.replicate > 1) tr.zero_replicas = static_cast<int>(s.replicate);
    if (s.cpu_offload) {
        // FSDP2's CPUOffloadPolicy is applied in apply_fsdp only: without sharded data
        // parallelism torchtitan offloads nothing.
        if (tr.zero_stage == 0) {
            r.notes.push_back("training.enable_cpu_offload has no effect without FSDP (data_parallel_shard_degree 1): "
                              "torchtitan applies CPUOffloadPolicy in apply_fsdp");
        } else if (tr.zero_stage != 3) {
            throw InputError(file, s.at("training.enable_cpu_offload"),
                             "CPU offload of parameters with fsdp_reshard_after_forward \"" + s.reshard +
                                 "\" (ZeRO-" + std::to_string(tr.zero_stage) +
                                 "): a layout offloads parameters with ZeRO-3 only");
        } else {
            tr.offload_params = Offload::Cpu;
            tr.offload_optimizer = Offload::Cpu;
            r.notes.push_back("training.enable_cpu_offload: parameters, gradients and optimizer states on the host "
                              "(training.offload_params and offload_optimizer cpu)");
        }
    }
    if (shard == 1 && mesh.cp > 1) {
        r.notes.push_back("torchtitan shards parameters over the " + std::to_string(mesh.cp) +
                          " cp ranks (FSDP over dp_shard × cp); read as ZeRO-0");
    }

    if (s.precision == "bfloat16")
        tr.dtype = s.fp8 ? DType::Fp8 : DType::Bf16;
    else if (s.precision == "float32")
        tr.dtype = DType::Fp32;
    else
        throw InputError(file, s.at("training.mixed_precision_param"),
                         "'" + s.precision + "': expected bfloat16 or float32");
    // torchao's recipe names (pytorch/ao 36027d82 torchao/float8/config.py:141-160):
    // tensorwise, rowwise, and rowwise_with_gw_hp, whose weight-gradient GEMM stays in bf16
    // (read as rowwise: that GEMM's slower rate is not modelled).
    if (s.fp8 && !s.fp8_recipe_name.empty()) {
        const std::string& name = s.fp8_recipe_name;
        if (name == "tensorwise") {
            tr.fp8_recipe = Fp8Recipe::Tensorwise;
        } else if (name == "rowwise" || name == "rowwise_with_gw_hp") {
            tr.fp8_recipe = Fp8Recipe::Rowwise;
            if (name != "rowwise")
                r.notes.push_back("float8 recipe rowwise_with_gw_hp read as rowwise: its bf16 weight-gradient GEMM "
                                  "is costed at the fp8 rate");
        } else {
            throw InputError(file, s.at("float8.recipe_name"),
                             "unknown float8 recipe '" + name + "' (tensorwise, rowwise, rowwise_with_gw_hp)");
        }
    }

    tr.seq_length = static_cast<int>(s.seq_len);
    // torch.compile of the blocks fuses their element-wise ops; without it they run eager,
    // one kernel per op (the cost model's fused_elementwise). A config deriving from a base
    // Meshwork does not read is taken as compiled only where async TP says it must be.
    tr.fused_elementwise = s.compile_enable.value_or(s.async_tp && s.base_unread) && s.compile_model;
    // Every torchtitan version computes the loss as cross_entropy(pred.float()) (9dec370
    // train.py:131-134; v0.2.2 and b5bcd76c torchtitan/components/loss.py).
    tr.cross_entropy = CrossEntropy::Upcast;
    // Attention through PyTorch's scaled_dot_product_attention (torchtitan/models/attention.py,
    // e7c0cae :183-214; 9dec370 models/llama/model.py:209): FlashAttention-2 on Hopper.
    tr.attention_kernel = AttentionKernel::Sdpa;
    const long long global =
        s.global_batch == -1 ? s.local_batch * mesh.dp : s.global_batch;  // torchtitan's default
    if (global % (s.local_batch * mesh.dp) != 0) {
        throw InputError(file, s.at("training.global_batch_size"),
                         std::to_string(global) + " is not a multiple of local batch × dp = " +
                             std::to_string(s.local_batch * mesh.dp) +
                             " (torchtitan's gradient accumulation)");
    }
    if (global > kMaxBatch)
        throw InputError(file, s.at("training.global_batch_size"), "more than 2^30 sequences");
    tr.global_batch_size = static_cast<int>(global);
    if (mesh.pp > 1) {
        tr.micro_batch_size = static_cast<int>(s.pp_micro_batch);
        if (s.local_batch % s.pp_micro_batch != 0) {
            throw InputError(file, s.at("training.local_batch_size"),
                             "not a multiple of the pipeline micro-batch (" +
                                 std::to_string(s.pp_micro_batch) + ")");
        }
    } else {
        tr.micro_batch_size = static_cast<int>(s.local_batch);
    }

    // The schedule and the split.
    const std::string sched = lower(s.schedule);
    if (sched == "gpipe")
        tr.schedule = Schedule::GPipe;
    else if (sched == "1f1b")
        tr.schedule = Schedule::OneFOneB;
    else if (sched == "interleaved1f1b")
        tr.schedule = Schedule::Interleaved;
    else if (mesh.pp > 1) {
        throw InputError(
            file, s.at("parallelism.pipeline_parallel_schedule"),
            "'" + s.schedule + "' has no Meshwork equivalent (GPipe, 1F1B, Interleaved1F1B)");
    } else {
        // Without pipeline parallelism torchtitan never builds the schedule.
        tr.schedule = Schedule::OneFOneB;
        r.notes.push_back("pipeline_parallel_schedule \"" + s.schedule + "\" unused with pp 1");
    }
    if (mesh.pp == 1 && tr.schedule != Schedule::OneFOneB) {
        r.notes.push_back("pipeline_parallel_schedule \"" + s.schedule + "\" unused with pp 1");
        tr.schedule = Schedule::OneFOneB;
    }
    const int layers = l.model.num_layers;
    if (mesh.pp > 1) {
        if (s.layers_per_stage)
            check_range(s, file, "parallelism.pipeline_parallel_layers_per_stage",
                        *s.layers_per_stage, 1, 100000);
        // torchtitan's own split of the model's layers (torchtitan_facts.h).
        const bool multi = tr.schedule == Schedule::Interleaved;
        const TorchtitanSplit split =
            torchtitan_split(layers, mesh.pp, s.layers_per_stage, s.first_less, s.last_less, multi);
        if (!split.error.empty()) {
            throw InputError(
                file,
                s.at(s.layers_per_stage ? "parallelism.pipeline_parallel_layers_per_stage"
                                        : "parallelism.pipeline_parallel_schedule"),
                "torchtitan would refuse this split of " + std::to_string(layers) +
                    " layers: " + split.error);
        }
        l.parallel.vpp = static_cast<int>(split.layers.size()) / mesh.pp;
        l.placement.layers_per_stage = split.layers;
        if (!s.layers_per_stage) {
            r.notes.push_back("no pipeline_parallel_layers_per_stage: torchtitan's default of " +
                              std::to_string(l.parallel.vpp) +
                              " stage(s) per rank, its split of the layers");
        }
    }

    if (s.ac_mode == "none") {
        tr.recompute = Recompute::None;
    } else if (s.ac_mode == "full") {
        tr.recompute = Recompute::Full;
    } else if (s.ac_mode == "selective") {
        if (s.ac_option == "op") {
            tr.recompute = Recompute::SelectiveOp;
        } else {
            long long every = 0;
            if (!parse_int_text(s.ac_option, 1, 100000, every)) {
                throw InputError(
                    file, s.at("activation_checkpoint.selective_ac_option"),
                    "'" + s.ac_option + "': expected \"op\" or a layer interval such as \"2\"");
            }
            // Every n-th layer fully recomputed: Meshwork's full recompute of a share of the
            // layers of each stage.
            tr.recompute = Recompute::Full;
            const auto split = l.stage_layers();
            const int largest =
                split.empty() ? layers : *std::max_element(split.begin(), split.end());
            tr.recompute_num_layers =
                every == 1 ? 0 : std::max(1, largest / static_cast<int>(every));
            r.notes.push_back(
                "selective_ac_option \"" + s.ac_option + "\" (every " + s.ac_option +
                "th layer fully recomputed) read as full recompute of " +
                std::to_string(tr.recompute_num_layers == 0 ? largest : tr.recompute_num_layers) +
                " layers per stage");
        }
    } else {
        throw InputError(file, s.at("activation_checkpoint.mode"),
                         "'" + s.ac_mode + "': expected none, selective or full");
    }
    l = canonical_layout(std::move(l));
}

}  // namespace meshwork
