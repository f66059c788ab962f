#include <algorithm>
#include <iterator>
#include <vector>

#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "core/export/canonical_layout.h"
#include "core/export/deepspeed_config.h"
#include "core/export/import_common.h"
#include "core/model/hf_config.h"

namespace meshwork {

namespace {

constexpr std::int64_t kMaxBatch = 1ll << 30;
constexpr std::int64_t kMaxAxis = 1 << 20;

bool is_auto(const Json& j) { return j.is_string() && j.get<std::string>() == "auto"; }

// The Hugging Face Trainer fills "auto" from its TrainingArguments
// (transformers/integrations/deepspeed.py, HfTrainerDeepSpeedConfig.trainer_config_process):
// train_micro_batch_size_per_gpu <- per_device_train_batch_size (default 8),
// gradient_accumulation_steps <- gradient_accumulation_steps (default 1),
// train_batch_size <- world × the two, fp16/bf16.enabled <- --fp16/--bf16 (default off).
constexpr std::int64_t kHfPerDeviceBatch = 8;
constexpr std::int64_t kHfAccumulation = 1;

// Reads the keys of `section` listed in `used`, lists the rest as ignored.
// The keys DeepSpeedZeroConfig takes at the pinned commit: its fields and their aliases
// (deepspeed/runtime/zero/config.py:90-401). Its model forbids any other key
// (runtime/config_utils.py:110, extra="forbid"), so DeepSpeed refuses a config with one.
constexpr const char* kZeroKeys[] = {
    "stage", "contiguous_gradients", "reduce_scatter", "reduce_bucket_size", "use_multi_rank_bucket_allreduce",
    "allgather_partitions", "allgather_bucket_size", "overlap_comm", "load_from_fp32_weights", "elastic_checkpoint",
    "offload_param", "offload_optimizer", "zenflow", "sub_group_size", "cpu_offload_param",
    "cpu_offload_use_pin_memory", "cpu_offload", "prefetch_bucket_size", "stage3_prefetch_bucket_size",
    "param_persistence_threshold", "stage3_param_persistence_threshold", "model_persistence_threshold",
    "stage3_model_persistence_threshold", "max_live_parameters", "stage3_max_live_parameters", "max_reuse_distance",
    "stage3_max_reuse_distance", "gather_16bit_weights_on_model_save", "stage3_gather_16bit_weights_on_model_save",
    "module_granularity_threshold", "stage3_module_granularity_threshold", "use_all_reduce_for_fetch_params",
    "stage3_use_all_reduce_for_fetch_params", "allgather_sequential", "stage3_allgather_sequential",
    "stage3_gather_fp16_weights_on_model_save", "ignore_unused_parameters", "legacy_stage1", "round_robin_gradients",
    "zero_hpz_partition_size", "zero_quantized_weights", "zero_quantized_nontrainable_weights",
    "zero_quantized_gradients", "zeropp_loco_param", "mics_shard_size", "mics_hierarchical_params_gather",
    "memory_efficient_linear", "pipeline_loading_checkpoint", "override_module_apply", "log_trace_cache_warnings",
    "enable_sanity_checks", "save_muon_momentum_buffer_in_memory", "leaf_module"};

// Lists the keys of SECTION that are not in USED as ignored; where the section's keys are
// closed (ALLOWED not empty), one outside them is named as a key today's DeepSpeed refuses.
void ignore_rest(const Json& section, const std::string& path, std::initializer_list<const char*> used,
                 ImportResult& r, const std::vector<std::string>& allowed = {}) {
    for (const auto& [key, value] : section.items()) {
        bool known = false;
        for (const char* u : used) known = known || key == u;
        if (known) continue;
        const bool refused = !allowed.empty() && std::find(allowed.begin(), allowed.end(), key) == allowed.end();
        r.ignored.push_back({path + "." + key, value.dump(),
                             refused ? "not a key of today's DeepSpeed, which refuses the config with it "
                                       "(its " + path + " forbids unknown keys); an older release's name or a typo"
                                     : "DeepSpeed setting that does not change the layout"});
    }
}

}  // namespace

ImportResult import_deepspeed(const std::string& text, const std::string& file,
                              const ImportOptions& options) {
    std::vector<std::string> auto_batch;  // the batch keys given as "auto"
    const Json j = parse_json_text(text, file);
    if (!j.is_object()) throw InputError(file, "(top level)", "expected a DeepSpeed config object");
    ImportResult r;
    r.format = ImportFormat::DeepSpeed;
    if (!options.model) {
        throw InputError("<flags>", "--model",
                         "a DeepSpeed config does not name the model: pass --model PRESET|config.json");
    }
    Layout& l = r.layout;
    l.model = load_model(*options.model, "<flags>", "--model");
    l.model_ref = *options.model;
    apply_import_defaults(l, options, file, "DeepSpeed config", r.notes);

    auto optional_int = [&](const Json& obj, const std::string& key, const std::string& path,
                            std::int64_t min_value, std::int64_t max_value) -> std::optional<std::int64_t> {
        if (!obj.contains(key)) return std::nullopt;
        if (is_auto(obj.at(key))) throw InputError(file, path, "\"auto\" is not read here: write the number");
        return JsonObjectReader::as_int(obj.at(key), file, path, min_value, max_value);
    };
    auto section = [&](const std::string& key) -> const Json& {
        static const Json empty = Json::object();
        if (!j.contains(key)) return empty;
        if (!j.at(key).is_object()) {
            throw InputError(file, key, "expected an object, found " + json_type_name(j.at(key)));
        }
        return j.at(key);
    };
    auto enabled = [&](const std::string& key) {
        const Json& s = section(key);
        if (!s.contains("enabled")) return false;
        if (is_auto(s.at("enabled"))) {
            r.notes.push_back(key + ".enabled \"auto\": off, as the Hugging Face Trainer fills it without --" + key);
            return false;
        }
        if (!s.at("enabled").is_boolean()) throw InputError(file, key + ".enabled", "expected true or false");
        return s.at("enabled").get<bool>();
    };

    auto& mesh = l.parallel.mesh;
    const Json& tp_section = section("tensor_parallel");
    mesh.tp = static_cast<int>(optional_int(tp_section, "autotp_size", "tensor_parallel.autotp_size",
                                            1, kMaxAxis).value_or(1));
    const Json& pipe = section("pipeline");
    // DeepSpeed takes the stage count from PipelineModule(num_stages=...) in the script, not
    // from pipeline.stages (config.py get_pipeline_config): --pipeline-stages gives it; a
    // number in pipeline.stages is read with a note.
    if (options.pipeline_stages) {
        if (*options.pipeline_stages < 1) throw InputError("<flags>", "--pipeline-stages", "must be at least 1");
        mesh.pp = *options.pipeline_stages;
    } else if (pipe.contains("stages") && !pipe.at("stages").is_string()) {
        mesh.pp = static_cast<int>(optional_int(pipe, "stages", "pipeline.stages", 1, kMaxAxis).value_or(1));
        r.notes.push_back("pipeline.stages " + std::to_string(mesh.pp) +
                          " taken as PipelineModule's num_stages (DeepSpeed itself does not read it)");
    } else {
        mesh.pp = 1;
        if (pipe.contains("stages")) {
            r.notes.push_back("pipeline.stages \"auto\": the stages are PipelineModule's; one assumed "
                              "(pass --pipeline-stages)");
        }
    }
    if (mesh.tp > 1 && mesh.pp > 1) {
        throw InputError(file, "tensor_parallel.autotp_size",
                         "DeepSpeed refuses AutoTP with PipelineModule: AutoTP's groups ignore the pipeline and "
                         "PipelineEngine asserts the grid's data-parallel size (pipe/engine.py:109)");
    }
    mesh.cp = static_cast<int>(optional_int(j, "sequence_parallel_size", "sequence_parallel_size", 1,
                                            kMaxAxis).value_or(1));
    // AutoEP (module_inject/auto_ep_config.py:46-49).
    const Json& ep = section("expert_parallel");
    if (ep.contains("enabled") && ep.at("enabled").is_boolean() && ep.at("enabled").get<bool>()) {
        mesh.ep = static_cast<int>(optional_int(ep, "autoep_size", "expert_parallel.autoep_size", 1, kMaxAxis).value_or(1));
        mesh.etp = static_cast<int>(optional_int(ep, "expert_tensor_parallel_size",
                                                 "expert_parallel.expert_tensor_parallel_size", 1, kMaxAxis).value_or(1));
    }
    long long model_parallel = static_cast<long long>(mesh.tp) * mesh.pp * mesh.cp;
    // DeepSpeed's batch world (runtime/config.py:719-724, pipe/engine.py:109-111): the
    // pipeline grid's data-parallel size, or world / sequence_parallel_size without one
    // (the AutoTP ranks count: they see the same samples).
    const long long per_replica_in_batch_world = mesh.pp > 1 ? 1 : mesh.tp;
    const long long world_per_batch_rank = mesh.pp > 1 ? model_parallel : mesh.cp;

    // "auto" batch values: filled as the Hugging Face Trainer fills them.
    const auto batch_key = [&](const char* key) -> std::optional<std::int64_t> {
        if (j.contains(key) && is_auto(j.at(key))) {
            auto_batch.push_back(key);
            return std::nullopt;
        }
        return optional_int(j, key, key, 1, kMaxBatch);
    };
    auto tbs = batch_key("train_batch_size");
    auto mbs = batch_key("train_micro_batch_size_per_gpu");
    auto gas = batch_key("gradient_accumulation_steps");
    const auto world_opt = world_from_options(options, l.cluster.allocation_gpus());
    const auto is_auto_key = [&](const char* key) {
        return std::find(auto_batch.begin(), auto_batch.end(), std::string(key)) != auto_batch.end();
    };
    if (!auto_batch.empty()) {
        if (is_auto_key("train_micro_batch_size_per_gpu")) mbs = kHfPerDeviceBatch;
        if (is_auto_key("gradient_accumulation_steps")) gas = kHfAccumulation;
        if (is_auto_key("train_batch_size")) {
            if (!world_opt) {
                throw InputError(file, "train_batch_size",
                                 "\"auto\" is the world size × micro batch × accumulation steps: pass --gpus or --nodes");
            }
            if (mbs && gas) tbs = *world_opt * *mbs * *gas;
        }
        std::string keys;
        for (const auto& k : auto_batch) keys += (keys.empty() ? "" : ", ") + k;
        r.notes.push_back("\"auto\" in " + keys +
                          " filled as the Hugging Face Trainer does with its defaults (per-device batch " +
                          std::to_string(kHfPerDeviceBatch) + ", accumulation " + std::to_string(kHfAccumulation) +
                          ", train batch = world × both); give the numbers your Trainer uses in the config");
    }
    long long dp = 0;
    if (tbs && mbs && gas) {
        if (*tbs % (*mbs * *gas) != 0) {
            throw InputError(file, "train_batch_size",
                             std::to_string(*tbs) + " is not micro batch × accumulation steps × "
                                                    "data-parallel size for any whole data-parallel size");
        }
        const long long batch_world = *tbs / (*mbs * *gas);
        if (batch_world % per_replica_in_batch_world != 0) {
            throw InputError(file, "train_batch_size",
                             "DeepSpeed's world of " + std::to_string(batch_world) +
                                 " ranks (train batch / micro batch / accumulation) is not a multiple of autotp_size " +
                                 std::to_string(mesh.tp));
        }
        dp = batch_world / per_replica_in_batch_world;
        if (world_opt && mesh.pp > 1 && mesh.tp == 1 && mesh.cp == 1 && *world_opt > dp * model_parallel &&
            *world_opt % (dp * model_parallel) == 0) {
            // A PipelineModule's grid is pp × mp × dp (pipe/topology.py,
            // PipeModelDataParallelTopology): the ranks a stated world has beyond the
            // config's dp × pp are the model-parallel axis of the script's topology, over
            // which the model code splits its tensors (Megatron-DeepSpeed's TP).
            mesh.tp = static_cast<int>(*world_opt / (dp * model_parallel));
            model_parallel *= mesh.tp;
            r.notes.push_back("--gpus " + std::to_string(*world_opt) + " over the config's " + std::to_string(dp) +
                              " data-parallel × " + std::to_string(mesh.pp) + " pipeline ranks: the " +
                              std::to_string(mesh.tp) + " ranks of the PipelineModule topology's model-parallel "
                              "axis (num_mp), read as tensor parallelism");
        }
        if (world_opt && *world_opt != dp * model_parallel) {
            throw InputError("<flags>", options.gpus ? "--gpus" : "--nodes",
                             std::to_string(*world_opt) + " GPUs disagree with the config's " +
                                 std::to_string(dp * model_parallel) +
                                 " (data parallel × autotp × pipeline × sequence parallel)");
        }
    } else {
        if (!world_opt) {
            throw InputError(file, "gradient_accumulation_steps",
                             "with fewer than all three batch keys the world size is unknown: "
                             "pass --gpus or --nodes");
        }
        if (*world_opt % model_parallel != 0) {
            throw InputError("<flags>", "--gpus", "not a multiple of autotp × pipeline × sequence parallel");
        }
        dp = *world_opt / model_parallel;
        const long long batch_world = *world_opt / world_per_batch_rank;
        // DeepSpeed's own completion of the missing keys (runtime/config.py,
        // _set_batch_related_parameters), then its check (_batch_assertion).
        if (tbs && mbs) {
            gas = *tbs / *mbs / batch_world;
        } else if (tbs && gas) {
            mbs = *tbs / batch_world / *gas;
        } else if (mbs && gas) {
            tbs = *mbs * *gas * batch_world;
        } else if (tbs) {
            gas = 1;
            mbs = *tbs / batch_world;
        } else if (mbs) {
            gas = 1;
            tbs = *mbs * batch_world;
        } else {
            throw InputError(file, "train_batch_size",
                             "DeepSpeed needs train_batch_size or train_micro_batch_size_per_gpu, and so does a "
                             "config run by the Hugging Face Trainer: it fills only keys given as \"auto\" "
                             "(accelerate's deepspeed_config_process walks the keys present, utils/dataclasses.py "
                             "at 16cb6eb8; absent gradient_accumulation_steps becomes 1): write them, or \"auto\"");
        }
        if (*mbs < 1 || *gas < 1 || *tbs != *mbs * *gas * batch_world) {
            throw InputError(file, "train_batch_size",
                             "DeepSpeed's check fails on " + std::to_string(batch_world) + " ranks: " +
                                 std::to_string(*tbs) + " != " + std::to_string(*mbs) + " (micro batch) × " +
                                 std::to_string(*gas) + " (accumulation steps) × " + std::to_string(batch_world));
        }
    }
    mesh.dp = static_cast<int>(dp);
    l.gpus = static_cast<int>(dp * model_parallel);

    auto& t = l.training;
    // Meshwork's global batch counts each sample once: DeepSpeed's counts every AutoTP rank.
    t.global_batch_size = static_cast<int>(*tbs / per_replica_in_batch_world);
    t.micro_batch_size = static_cast<int>(*mbs);
    if (options.seq) {
        if (*options.seq < 1) throw InputError("<flags>", "--seq", "must be at least 1");
        t.seq_length = *options.seq;
    } else {
        t.seq_length = l.model.max_position_embeddings > 0
                           ? static_cast<int>(std::min<std::int64_t>(l.model.max_position_embeddings, 1 << 26))
                           : 2048;
        r.notes.push_back("a DeepSpeed config has no sequence length: taken as the model's "
                          "max_position_embeddings (" + std::to_string(t.seq_length) + "); pass --seq");
    }
    const Json& zero = section("zero_optimization");
    t.zero_stage = static_cast<int>(optional_int(zero, "stage", "zero_optimization.stage", 0, 3).value_or(0));
    if (t.zero_stage >= 2 && mesh.pp > 1) {
        throw InputError(file, "zero_optimization.stage",
                         "DeepSpeed refuses ZeRO-" + std::to_string(t.zero_stage) +
                             " with pipeline parallelism (runtime/pipe/engine.py:76-77)");
    }
    // ZeRO-Offload: offload_optimizer / offload_param {"device": none|cpu|nvme}; the earlier
    // booleans cpu_offload (optimizer) and cpu_offload_params.
    const auto device = [&](const char* key, const char* legacy) {
        Offload o = Offload::None;
        if (zero.contains(key)) {
            const Json& sec = zero.at(key);
            const std::string path = std::string("zero_optimization.") + key + ".device";
            if (!sec.is_object()) throw InputError(file, std::string("zero_optimization.") + key, "expected an object");
            if (sec.contains("device")) {
                if (!sec.at("device").is_string() || !parse_offload(sec.at("device").get<std::string>(), o)) {
                    throw InputError(file, path, "expected \"none\", \"cpu\" or \"nvme\"");
                }
            }
        }
        if (zero.contains(legacy)) {
            if (!zero.at(legacy).is_boolean()) {
                throw InputError(file, std::string("zero_optimization.") + legacy, "expected true or false");
            }
            if (zero.at(legacy).get<bool>()) {
                if (o == Offload::Nvme) {
                    throw InputError(file, std::string("zero_optimization.") + legacy, "conflicts with the nvme device");
                }
                o = Offload::Cpu;
            }
        }
        return o;
    };
    t.offload_optimizer = device("offload_optimizer", "cpu_offload");
    // MiCS: ZeRO-3 sharded over groups of mics_shard_size ranks, replicated across them
    // (runtime/zero/mics_utils.py:48-90 at edaa722: shard and replicate groups); the engine
    // builds the MiCS optimizer only under stage 3 (runtime/engine.py:2468); unset or -1 is off.
    const long long mics = optional_int(zero, "mics_shard_size", "zero_optimization.mics_shard_size", -1, kMaxAxis).value_or(-1);
    if (mics > 0 && t.zero_stage != 3) {
        r.ignored.push_back({"zero_optimization.mics_shard_size", std::to_string(mics),
                             "MiCS applies with ZeRO stage 3 only (runtime/engine.py:2468)"});
    } else if (mics > 0 && mics != mesh.dp) {
        if (mics > mesh.dp || mesh.dp % mics != 0) {
            throw InputError(file, "zero_optimization.mics_shard_size",
                             std::to_string(mics) + " does not divide the " + std::to_string(mesh.dp) +
                                 " data-parallel ranks into equal shard groups");
        }
        t.zero_replicas = static_cast<int>(mesh.dp / mics);
    }
    // cpu_offload_param is today's (deprecated) name, cpu_offload_params that of DeepSpeed 0.3.
    t.offload_params = device("offload_param", zero.contains("cpu_offload_param") ? "cpu_offload_param"
                                                                                    : "cpu_offload_params");
    // DeepSpeed documents parameter offload as "Valid only with stage 3" (runtime/zero/config.py:157-160
    // at edaa722) and only the ZeRO-3 and MiCS optimizers read it (runtime/engine.py:2454, :2502,
    // :2555): at stages 0-2 the engine runs with the parameters on the GPU, as the layout then says.
    if (t.offload_params != Offload::None && t.zero_stage != 3) {
        const char* spelled = zero.contains("offload_param")       ? "offload_param"
                              : zero.contains("cpu_offload_param") ? "cpu_offload_param"
                                                                   : "cpu_offload_params";
        r.ignored.push_back({std::string("zero_optimization.") + spelled, to_string(t.offload_params),
                             "DeepSpeed offloads parameters under ZeRO stage 3 only (runtime/zero/config.py:157-160); "
                             "stage " + std::to_string(t.zero_stage) + " keeps them on the GPU"});
        t.offload_params = Offload::None;
    }
    if (mesh.ep > 1) {
        const std::string refused = deepspeed_autoep_refusal(l);
        if (!refused.empty()) throw InputError(file, "expert_parallel", "DeepSpeed refuses it: " + refused);
    }
    const bool bf16 = enabled("bf16") || enabled("bfloat16");
    const bool fp16 = enabled("fp16");
    if (bf16 && fp16) throw InputError(file, "fp16.enabled", "conflicts with bf16.enabled");
    t.dtype = bf16 ? DType::Bf16 : fp16 ? DType::Fp16 : DType::Fp32;
    // data_types.grad_accum_dtype: unset means the model's type (runtime/engine.py:1485-1496
    // at edaa722), so bf16 training accumulates and reduces its gradients in bf16 unless the
    // config says fp32.
    const Json& data_types = section("data_types");
    std::string grad_accum = bf16 ? "bf16" : "";
    if (data_types.contains("grad_accum_dtype") && !data_types.at("grad_accum_dtype").is_null()) {
        const Json& v = data_types.at("grad_accum_dtype");
        if (!v.is_string()) throw InputError(file, "data_types.grad_accum_dtype", "expected \"fp32\", \"bf16\" or \"fp16\"");
        grad_accum = v.get<std::string>();
        if (grad_accum != "fp32" && grad_accum != "bf16" && grad_accum != "fp16") {
            throw InputError(file, "data_types.grad_accum_dtype",
                             "'" + grad_accum + "' is not fp32, bf16 or fp16");
        }
    }
    t.grad_reduce_in_bf16 = bf16 && grad_accum == "bf16";
    const auto interval = optional_int(pipe, "activation_checkpoint_interval",
                                       "pipeline.activation_checkpoint_interval", 0, 100000);
    if (interval && *interval > 0) {
        t.recompute = Recompute::Full;
        if (*interval > 1) {
            r.notes.push_back("activation_checkpoint_interval " + std::to_string(*interval) +
                              ": every layer is still recomputed, in groups");
        }
    }
    t.schedule = Schedule::OneFOneB;

    for (const auto& [key, value] : j.items()) {
        if (is_auto(value) && key != "train_batch_size" && key != "train_micro_batch_size_per_gpu" &&
            key != "gradient_accumulation_steps") {
            r.ignored.push_back({key, value.dump(), "\"auto\" filled by the Hugging Face Trainer; not part of the layout"});
            continue;
        }
        if (key == "train_batch_size" || key == "train_micro_batch_size_per_gpu" ||
            key == "gradient_accumulation_steps" || key == "sequence_parallel_size") {
            continue;
        }
        if (key == "zero_optimization") {
            ignore_rest(value, key,
                        {"stage", "offload_optimizer", "offload_param", "cpu_offload", "cpu_offload_param",
                         "cpu_offload_params", "mics_shard_size"},
                        r, std::vector<std::string>(std::begin(kZeroKeys), std::end(kZeroKeys)));
        }
        else if (key == "bf16" || key == "bfloat16" || key == "fp16") ignore_rest(value, key, {"enabled"}, r);
        else if (key == "tensor_parallel") ignore_rest(value, key, {"autotp_size"}, r);
        else if (key == "data_types") ignore_rest(value, key, {"grad_accum_dtype"}, r);
        else if (key == "pipeline") ignore_rest(value, key, {"stages", "activation_checkpoint_interval"}, r);
        else if (key == "expert_parallel") ignore_rest(value, key, {"enabled", "autoep_size", "expert_tensor_parallel_size"}, r);
        else r.ignored.push_back({key, value.dump(), "DeepSpeed setting that does not change the layout"});
    }
    l = canonical_layout(std::move(l));
    return r;
}

}  // namespace meshwork
