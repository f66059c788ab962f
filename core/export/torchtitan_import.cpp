// torchtitan v0.2.x job config TOML -> TorchtitanSettings -> Layout. Every field of v0.2.0 to
// v0.2.2's JobConfig (torchtitan/config/job_config.py) is known: layout fields are read, the
// rest listed as ignored; anything else is an error, so a misspelt key never falls back to a
// default silently. Configs of before v0.2 (training.batch_size, training.data_parallel_degree,
// [experimental] pipeline_parallel_degree) are read with that release's keys.
#include <algorithm>
#include <cstring>
#include <sstream>

#include <toml++/toml.h>

#include "core/common/error.h"
#include "core/export/import_common.h"
#include "core/export/torchtitan_config.h"
#include "core/export/torchtitan_settings.h"

namespace meshwork {

namespace {

constexpr const char* kIgnoredTable = "torchtitan section that does not change the layout";
constexpr const char* kIgnoredKey = "torchtitan setting that does not change the layout";

struct Section {
    const char* name;
    const char* used;     // space-separated keys read into the layout
    const char* ignored;  // space-separated known keys that do not change it
};

// v0.2.0-v0.2.2 JobConfig, section by section (docs/export.md).
constexpr Section kV02[] = {
    {"job", "",
     "config_file custom_config_module description dump_folder print_config save_config_file"},
    {"profiling", "",
     "enable_memory_snapshot enable_profiling profile_freq profiler_active profiler_warmup "
     "save_memory_snapshot_folder save_traces_folder"},
    {"metrics", "",
     "disable_color_printing enable_tensorboard enable_wandb log_freq save_for_all_ranks "
     "save_tb_folder"},
    {"model", "converters flavor name", "hf_assets_path print_after_conversion tokenizer_path"},
    {"optimizer", "", "beta1 beta2 early_step_in_backward eps implementation lr name weight_decay"},
    {"lr_scheduler", "", "decay_ratio decay_type min_lr_factor total_steps warmup_steps"},
    {"training", "enable_cpu_offload global_batch_size local_batch_size mixed_precision_param seq_len",
     "dataloader dataset dataset_path debug_moe_force_load_balance deterministic dtype "
     "gc_debug gc_freq max_norm mixed_precision_reduce seed steps"},
    {"parallelism",
     "context_parallel_degree data_parallel_replicate_degree data_parallel_shard_degree "
     "expert_parallel_degree "
     "expert_tensor_parallel_degree fsdp_reshard_after_forward module_fqns_per_model_part "
     "pipeline_parallel_degree "
     "pipeline_parallel_first_stage_less_layers pipeline_parallel_last_stage_less_layers "
     "pipeline_parallel_layers_per_stage pipeline_parallel_microbatch_size "
     "pipeline_parallel_schedule "
     "tensor_parallel_degree enable_async_tensor_parallel",
     "context_parallel_load_balancer context_parallel_rotate_method disable_loss_parallel "
     "enable_compiled_autograd expert_parallel_comm_backend "
     "pipeline_parallel_expert_parallel_overlap pipeline_parallel_schedule_csv"},
    {"checkpoint", "",
     "async_mode create_seed_checkpoint enable enable_first_step_checkpoint "
     "enable_ft_dataloader_checkpoints exclude_from_loading export_dtype folder "
     "initial_load_in_hf initial_load_in_hf_quantized initial_load_model_only initial_load_path "
     "interval keep_latest_k last_save_in_hf last_save_model_only load_only load_step"},
    {"activation_checkpoint", "mode selective_ac_option",
     "debug determinism_check early_stop memory_budget "
     "per_op_sac_force_recompute_mm_shapes_by_fqns "
     "preserve_rng_state visualize_memory_budget_pareto"},
    {"compile", "components enable", "backend"},
    {"quantize", "", "grouped_mm linear"},
    {"comm", "",
     "init_timeout_seconds mode save_traces_file_prefix save_traces_folder trace_buf_size "
     "train_timeout_seconds"},
    {"memory_estimation", "", "disable_fake_mode enable"},
    {"fault_tolerance", "",
     "enable group_size min_replica_size process_group process_group_timeout_ms replica_id "
     "semi_sync_method"},
    {"experimental", "", "custom_args_module custom_import"},
    {"validation", "",
     "dataloader dataset dataset_path enable freq local_batch_size seq_len steps"},
    {"debug", "", "deterministic deterministic_warn_only moe_force_load_balance seed"},
};

// Keys of v0.1.0's JobConfig (torchtitan/config_manager.py) that v0.2.x dropped or renamed:
// still known, so a v0.1 config reads; none changes the layout but the split points.
constexpr Section kV01Extra[] = {
    {"job", "", "print_args use_for_integration_test"},
    {"lr_scheduler", "", "lr_min"},
    {"training", "", "compile"},
    {"parallelism", "pipeline_parallel_split_points", ""},
    {"checkpoint", "",
     "enable_checkpoint initial_load_model_weights_only last_save_model_weights_only"},
    {"memory_estimation", "", "enabled"},
    {"fault_tolerance", "", "fragment_sync_delay fragment_update_alpha should_quantize sync_steps"},
};
constexpr const char* kV01Tables[] = {"float8", "mx"};  // v0.1 converter settings
constexpr Section kEmptySection = {"", "", ""};

// The JobConfig of before v0.2 (torchtitan/config_manager.py of 2024), for configs that still
// use its keys; its sections without layout keys are ignored whole.
constexpr Section kPre02[] = {
    {"model", "flavor name", "norm_type tokenizer_path"},
    {"training",
     "batch_size data_parallel_degree data_parallel_type mixed_precision_param seq_len "
     "tensor_parallel_degree",
     "compile dataset dataset_path enable_loss_parallel gc_freq max_norm mixed_precision_reduce "
     "steps warmup_steps"},
    {"experimental",
     "pipeline_parallel_degree pipeline_parallel_microbatches pipeline_parallel_schedule",
     "enable_async_tensor_parallel enable_compiled_autograd pipeline_parallel_split_points"},
    {"activation_checkpoint", "mode selective_ac_option", ""},
    {"float8", "enable_float8_linear", ""},
};
constexpr const char* kPre02IgnoredTables[] = {
    "job", "profiling", "metrics", "optimizer", "checkpoint", "comm", "memory_estimation"};

// Every key of every TOML schema torchtitan has had (generated by
// tests/upstream/torchtitan_config_keys.py), with the newest commit defining it: a key of an
// earlier or later schema than the one a config is read with is known, and listed as ignored
// unless it is one of the layout keys read below.
struct SchemaKey {
    std::string_view key;
    const char* source;
};
constexpr SchemaKey kSchemaKeys[] = {
#include "core/export/torchtitan_schema_keys.inc"
};
const char* schema_key_source(const std::string& key) {
    for (const auto& k : kSchemaKeys) {
        if (k.key == key) return k.source;
    }
    return nullptr;
}

// Layout keys of the schemas between the two above (torchtitan config_manager.py of 2024-05
// to 2025-04): read with the keys of their time.
constexpr const char* kInterimLayoutKeys[] = {
    // 2025-03 (38e7ee705): data parallelism under [training], context parallelism under
    // [experimental], FSDP's CPU offload
    "training.data_parallel_replicate_degree", "training.data_parallel_shard_degree",
    "training.fsdp_reshard_after_forward", "training.enable_cpu_offload",
    "experimental.context_parallel_degree",
    // 2024-05 (5c69c02ea): the pipeline under [training]; 2024-07 float8 switches
    "training.pipeline_parallel_degree", "training.enable_float8_linear", "training.enable_fp8_linear",
    "training.fp8_linear",
    // 2025-04 (8b737fe3c): the pipeline micro-batch count under [parallelism]
    "parallelism.pipeline_parallel_microbatches",
};
bool interim_layout_key(const std::string& key) {
    for (const char* k : kInterimLayoutKeys) {
        if (key == k) return true;
    }
    return false;
}

// The word of an unknown key's name that says it may describe the layout (a misspelt
// tensor_parallel_degree, local_batch): such a key is refused; one whose name says nothing of
// the kind (prefetch_before_data, dataset_weights) is listed as ignored with a warning.
const char* layout_like_word(const std::string& key) {
    static constexpr const char* kWords[] = {"parallel", "degree", "batch", "seq_len", "microbatch", "shard",
                                             "replicate", "reshard", "offload", "precision", "float8", "fp8",
                                             "compile", "layers", "schedule", "stage", "flavor", "activation",
                                             "ac_", "mode"};
    for (const char* w : kWords) {
        if (key.find(w) != std::string::npos) return w;
    }
    return nullptr;
}

constexpr const char* kUnknownKeyReason =
    "not a key of any torchtitan job-config schema (2024-04 to v0.2.2): a fork's or a custom config "
    "module's, taken as not changing the layout";

template <std::size_t N>
const Section* find_section(const Section (&table)[N], const std::string& name) {
    for (const auto& s : table) {
        if (name == s.name) return &s;
    }
    return nullptr;
}

class TomlReader {
  public:
    TomlReader(const toml::table& root, std::string file, TorchtitanSettings& s)
        : root_(root), file_(std::move(file)), s_(s) {}

    // Reads an integer into `out`, recording where it was found under `key` ("table.key").
    void integer(const std::string& table, const std::string& key, long long& out,
                 const std::string& as = "") {
        const toml::node* n = node(table, key);
        if (n == nullptr) return;
        const std::string w = where(table, key, n);
        s_.where[as.empty() ? table + "." + key : as] = w;
        const auto v = n->value<std::int64_t>();
        if (!n->is_integer() || !v) throw InputError(file_, w, "expected an integer");
        out = *v;
    }
    void string(const std::string& table, const std::string& key, std::string& out,
                const std::string& as = "") {
        const toml::node* n = node(table, key);
        if (n == nullptr) return;
        const std::string w = where(table, key, n);
        s_.where[as.empty() ? table + "." + key : as] = w;
        // selective_ac_option is a string, but a bare integer is what people write.
        if (n->is_integer()) {
            out = std::to_string(*n->value<std::int64_t>());
            return;
        }
        if (!n->is_string()) throw InputError(file_, w, "expected a string");
        out = *n->value<std::string>();
    }
    std::optional<bool> boolean(const std::string& table, const std::string& key) const {
        const toml::node* n = node(table, key);
        if (n == nullptr) return std::nullopt;
        if (!n->is_boolean())
            throw InputError(file_, where(table, key, n), "expected true or false");
        return n->value<bool>();
    }
    std::vector<std::string> strings(const std::string& table, const std::string& key) const {
        const toml::node* n = node(table, key);
        std::vector<std::string> out;
        if (n == nullptr) return out;
        const toml::array* a = n->as_array();
        // torchtitan's CLI also takes a comma-separated string.
        if (n->is_string()) {
            std::stringstream in(*n->value<std::string>());
            std::string item;
            while (std::getline(in, item, ',')) out.push_back(item);
            return out;
        }
        if (a == nullptr)
            throw InputError(file_, where(table, key, n), "expected an array of strings");
        for (const auto& e : *a) {
            if (!e.is_string())
                throw InputError(file_, where(table, key, n), "expected an array of strings");
            out.push_back(*e.value<std::string>());
        }
        return out;
    }
    [[nodiscard]] bool has(const std::string& table, const std::string& key) const {
        return node(table, key) != nullptr;
    }
    std::string where(const std::string& table, const std::string& key) const {
        return where(table, key, node(table, key));
    }

  private:
    const toml::node* node(const std::string& table, const std::string& key) const {
        const toml::table* t = root_[table].as_table();
        return t == nullptr ? nullptr : t->get(key);
    }
    static std::string where(const std::string& table, const std::string& key,
                             const toml::node* n) {
        std::string w = table + "." + key;
        if (n != nullptr && n->source().begin.line > 0)
            w += " (line " + std::to_string(n->source().begin.line) + ")";
        return w;
    }

    const toml::table& root_;
    std::string file_;
    TorchtitanSettings& s_;
};

bool is_pre02(const toml::table& root) {
    const auto has = [&](const char* table, const char* key) {
        const toml::table* t = root[table].as_table();
        return t != nullptr && t->contains(key);
    };
    return has("training", "batch_size") || has("training", "data_parallel_degree") ||
           has("training", "tensor_parallel_degree") || has("training", "data_parallel_shard_degree") ||
           has("training", "data_parallel_replicate_degree") || has("experimental", "context_parallel_degree") ||
           has("experimental", "pipeline_parallel_degree") || has("training", "pipeline_parallel_degree");
}

std::string value_text(const toml::node& value) {
    std::ostringstream v;
    value.visit([&v](const auto& n) { v << n; });
    return v.str();
}

// Classifies every table and key: used, ignored (listed in r.ignored) or an error.
void check_keys(const toml::table& root, bool pre02, const std::string& file, const ImportOptions& options,
                ImportResult& r) {
    std::vector<InputIssue> issues;
    const auto custom = [&](const char* table, const char* key) {
        const toml::table* t = root[table].as_table();
        return t != nullptr && t->contains(key);
    };
    // A custom config module adds sections of its own (job.custom_config_module in v0.2.1+,
    // experimental.custom_args_module in v0.2.0).
    const bool extended = !pre02 && (custom("job", "custom_config_module") ||
                                     custom("experimental", "custom_args_module"));
    for (const auto& [table_key, table_node] : root) {
        const std::string table(table_key.str());
        const Section* sec = pre02 ? find_section(kPre02, table) : find_section(kV02, table);
        const auto in = [&](const auto& list) {
            return std::find_if(std::begin(list), std::end(list),
                                [&](const char* t) { return table == t; }) != std::end(list);
        };
        const bool ignored_table = pre02 ? in(kPre02IgnoredTables) : in(kV01Tables);
        if (!table_node.is_table()) {
            issues.push_back({file, table, "expected a [" + table + "] table"});
            continue;
        }
        if (ignored_table || (sec == nullptr && extended)) {
            r.ignored.push_back(
                {"[" + table + "]", "[" + table + "]",
                 ignored_table ? kIgnoredTable : "section of the config's custom config module"});
            continue;
        }
        if (sec == nullptr) {
            // A section of another schema (all its keys are known), or of a fork (`[infra]`).
            bool historic = false;
            for (const auto& k : kSchemaKeys) historic = historic || k.key.substr(0, k.key.find('.')) == table;
            bool layout = false;
            for (const char* k : kInterimLayoutKeys) layout = layout || std::string(k).rfind(table + ".", 0) == 0;
            if (historic && !layout) {
                r.ignored.push_back({"[" + table + "]", "[" + table + "]",
                                     "torchtitan section of another release's schema that does not change the layout"});
            } else if (!historic && !options.strict && layout_like_word(table) == nullptr) {
                r.ignored.push_back({"[" + table + "]", "[" + table + "]", kUnknownKeyReason});
                r.warnings.push_back("[" + table + "]: unknown torchtitan section, read as not changing the layout; "
                                     "--strict refuses it");
            } else if (!historic) {
                issues.push_back({file, "[" + table + "]",
                                  std::string("unknown torchtitan ") + (pre02 ? "(before v0.2) " : "v0.2.x ") +
                                      (layout_like_word(table) != nullptr
                                           ? "section whose name says it may change the layout (docs/export.md lists "
                                             "the known ones)"
                                           : "section (--strict: docs/export.md lists the known ones)")});
            }
            if (!layout) continue;
        }
        if (sec == nullptr) sec = &kEmptySection;
        for (const auto& [key, value] : *table_node.as_table()) {
            const std::string k(key.str());
            if (list_has_word(sec->used, k)) continue;
            if (list_has_word(sec->ignored, k)) {
                r.ignored.push_back(
                    {table + "." + k, table + "." + k + " = " + value_text(value), kIgnoredKey});
                continue;
            }
            const Section* old = pre02 ? nullptr : find_section(kV01Extra, table);
            if (old != nullptr && list_has_word(old->used, k)) continue;
            if (old != nullptr && list_has_word(old->ignored, k)) {
                r.ignored.push_back({table + "." + k, table + "." + k + " = " + value_text(value),
                                     "torchtitan v0.1 setting (dropped or renamed in v0.2) that "
                                     "does not change the layout"});
                continue;
            }
            const std::string full = table + "." + k;
            if (interim_layout_key(full)) continue;  // read by the readers below
            // A layout key of the other schema is not read by this one's reader: one schema
            // per config.
            const Section* other = pre02 ? find_section(kV02, table) : find_section(kPre02, table);
            if (other != nullptr && list_has_word(other->used, k)) {
                issues.push_back({file, full,
                                  std::string("a layout key of torchtitan's ") + (pre02 ? "v0.2.x" : "earlier") +
                                      " schema in a config of the " + (pre02 ? "earlier" : "v0.2.x") +
                                      " one (" + (pre02 ? "training.batch_size, [experimental] pipeline degrees" : "[parallelism]") +
                                      "): write every key of one schema"});
                continue;
            }
            if (const char* source = schema_key_source(full)) {
                r.ignored.push_back({full, full + " = " + value_text(value),
                                     std::string("torchtitan setting of another schema (") + source +
                                         ") that does not change the layout"});
                continue;
            }
            if (!options.strict && layout_like_word(k) == nullptr) {
                r.ignored.push_back({full, full + " = " + value_text(value), kUnknownKeyReason});
                r.warnings.push_back(full + ": unknown torchtitan setting, read as not changing the layout; "
                                            "--strict refuses it");
                continue;
            }
            const char* word = layout_like_word(k);
            issues.push_back({file, full,
                              std::string("unknown torchtitan ") + (pre02 ? "(before v0.2) " : "v0.2.x ") +
                                  (word != nullptr ? std::string("setting whose name ('") + word +
                                                         "') says it may change the layout: no torchtitan schema has it"
                                                   : std::string("setting (--strict)"))});
        }
    }
    if (!issues.empty()) throw InputError(issues);
}

toml::table parse_toml(const std::string& text, const std::string& file) {
    try {
        return toml::parse(text, file);
    } catch (const toml::parse_error& e) {
        throw InputError(file, "line " + std::to_string(e.source().begin.line),
                         std::string(e.description()));
    }
}

// Keys both releases name alike: the model, precision, sequence and recompute.
void read_common_keys(TomlReader& t, TorchtitanSettings& s) {
    t.string("model", "name", s.model_name);
    t.string("model", "flavor", s.flavor);
    t.string("training", "mixed_precision_param", s.precision);
    t.integer("training", "seq_len", s.seq_len);
    t.string("activation_checkpoint", "mode", s.ac_mode);
    t.string("activation_checkpoint", "selective_ac_option", s.ac_option);
}

// torchtitan before v0.2: batch and data parallelism under [training], pipeline under
// [experimental].
void read_pre02_parallelism(TomlReader& t, TorchtitanSettings& s, const std::string& file, ImportResult& r) {
    r.notes.push_back(
        "keys of torchtitan before v0.2 (training.batch_size, training.data_parallel_degree, "
        "[experimental] pipeline_parallel_degree) read as that release defined them");
    t.integer("training", "batch_size", s.local_batch, "training.local_batch_size");
    std::string dp_type = "fsdp";
    t.string("training", "data_parallel_type", dp_type);
    long long dp = -1;
    t.integer("training", "data_parallel_degree", dp, "parallelism.data_parallel_shard_degree");
    if (t.has("training", "data_parallel_shard_degree") || t.has("training", "data_parallel_replicate_degree")) {
        // 2025-03's schema (config_manager.py at 38e7ee705): the two degrees under [training].
        t.integer("training", "data_parallel_shard_degree", s.shard, "parallelism.data_parallel_shard_degree");
        t.integer("training", "data_parallel_replicate_degree", s.replicate,
                  "parallelism.data_parallel_replicate_degree");
        t.string("training", "fsdp_reshard_after_forward", s.reshard, "parallelism.fsdp_reshard_after_forward");
        if (t.has("training", "data_parallel_degree")) {
            throw InputError(file, t.where("training", "data_parallel_degree"),
                             "conflicts with training.data_parallel_shard_degree: two schemas' data-parallel degrees");
        }
    } else if (dp_type == "ddp") {
        if (dp == -1) {
            throw InputError(
                file, t.where("training", "data_parallel_degree"),
                "-1 with data_parallel_type ddp: Meshwork needs the replicate degree");
        }
        s.replicate = dp;
        s.shard = 1;
        s.where["parallelism.data_parallel_replicate_degree"] =
            s.at("parallelism.data_parallel_shard_degree");
    } else if (dp_type == "fsdp") {
        s.shard = dp;
    } else {
        throw InputError(file, t.where("training", "data_parallel_type"),
                         "'" + dp_type + "': expected fsdp or ddp");
    }
    t.integer("training", "tensor_parallel_degree", s.tp, "parallelism.tensor_parallel_degree");
    t.integer("training", "pipeline_parallel_degree", s.pp, "parallelism.pipeline_parallel_degree");
    t.integer("experimental", "pipeline_parallel_degree", s.pp,
              "parallelism.pipeline_parallel_degree");
    t.integer("experimental", "context_parallel_degree", s.cp, "parallelism.context_parallel_degree");
    s.cpu_offload = t.boolean("training", "enable_cpu_offload").value_or(false);
    if (s.cpu_offload) s.where["training.enable_cpu_offload"] = t.where("training", "enable_cpu_offload");
    t.string("experimental", "pipeline_parallel_schedule", s.schedule,
             "parallelism.pipeline_parallel_schedule");
    long long micro_batches = s.pp;
    t.integer("experimental", "pipeline_parallel_microbatches", micro_batches,
              "parallelism.pipeline_parallel_microbatch_size");
    if (s.pp > 1) {
        if (micro_batches < 1 || s.local_batch % micro_batches != 0) {
            throw InputError(file, s.at("parallelism.pipeline_parallel_microbatch_size"),
                             "the batch of " + std::to_string(s.local_batch) +
                                 " does not split into " + std::to_string(micro_batches) +
                                 " micro-batches");
        }
        s.pp_micro_batch = s.local_batch / micro_batches;
    }
    if (t.has("experimental", "pipeline_parallel_split_points")) {
        throw InputError(file, t.where("experimental", "pipeline_parallel_split_points"),
                         "explicit split points are not imported");
    }
    s.fp8 = t.boolean("float8", "enable_float8_linear").value_or(false);
    t.string("float8", "recipe_name", s.fp8_recipe_name, "float8.recipe_name");
    // 2024-07's float8 switches under [training] (config_manager.py at a4b2ee3c0, 3c77e9fa2).
    for (const char* k : {"enable_float8_linear", "enable_fp8_linear", "fp8_linear"}) {
        s.fp8 = s.fp8 || t.boolean("training", k).value_or(false);
    }
    s.first_less = s.last_less = 0;
}

// torchtitan v0.2.x: [training] batches and the [parallelism] section.
void read_v02_parallelism(TomlReader& t, TorchtitanSettings& s, const std::string& file) {
    t.integer("training", "local_batch_size", s.local_batch);
    t.integer("training", "global_batch_size", s.global_batch);
    t.integer("parallelism", "data_parallel_replicate_degree", s.replicate);
    t.integer("parallelism", "data_parallel_shard_degree", s.shard);
    t.string("parallelism", "fsdp_reshard_after_forward", s.reshard);
    t.integer("parallelism", "tensor_parallel_degree", s.tp);
    t.integer("parallelism", "pipeline_parallel_degree", s.pp);
    t.integer("parallelism", "context_parallel_degree", s.cp);
    t.integer("parallelism", "expert_parallel_degree", s.ep);
    t.integer("parallelism", "expert_tensor_parallel_degree", s.etp);
    t.string("parallelism", "pipeline_parallel_schedule", s.schedule);
    t.integer("parallelism", "pipeline_parallel_microbatch_size", s.pp_micro_batch);
    if (t.has("parallelism", "pipeline_parallel_microbatches")) {
        // 2025-04's schema (config_manager.py at 8b737fe3c): a micro-batch count that splits
        // the local batch, before the size replaced it.
        long long count = 0;
        t.integer("parallelism", "pipeline_parallel_microbatches", count);
        if (t.has("parallelism", "pipeline_parallel_microbatch_size")) {
            throw InputError(file, t.where("parallelism", "pipeline_parallel_microbatches"),
                             "conflicts with parallelism.pipeline_parallel_microbatch_size: one micro-batch setting");
        }
        if (count < 1 || s.local_batch % count != 0) {
            throw InputError(file, t.where("parallelism", "pipeline_parallel_microbatches"),
                             "the local batch of " + std::to_string(s.local_batch) + " does not split into " +
                                 std::to_string(count) + " micro-batches");
        }
        s.pp_micro_batch = s.local_batch / count;
        s.where["parallelism.pipeline_parallel_microbatch_size"] = t.where("parallelism", "pipeline_parallel_microbatches");
    }
    long long per = 0;
    if (t.has("parallelism", "pipeline_parallel_layers_per_stage")) {
        t.integer("parallelism", "pipeline_parallel_layers_per_stage", per);
        s.layers_per_stage = per;
    }
    t.integer("parallelism", "pipeline_parallel_first_stage_less_layers", s.first_less);
    t.integer("parallelism", "pipeline_parallel_last_stage_less_layers", s.last_less);
    s.async_tp = t.boolean("parallelism", "enable_async_tensor_parallel").value_or(false);
    s.cpu_offload = t.boolean("training", "enable_cpu_offload").value_or(false);
    if (s.cpu_offload) s.where["training.enable_cpu_offload"] = t.where("training", "enable_cpu_offload");
    if (s.async_tp) s.where["async_tp"] = t.where("parallelism", "enable_async_tensor_parallel");
    s.compile_enable = t.boolean("compile", "enable");
    // v0.1's training.compile (torchtitan 9dec370 train_configs/llama3_8b.toml), the same switch.
    if (!s.compile_enable) s.compile_enable = t.boolean("training", "compile");
    if (t.has("compile", "components")) {
        const std::vector<std::string> components = t.strings("compile", "components");
        s.compile_model = std::find(components.begin(), components.end(), "model") != components.end();
    }
    for (const char* k : {"module_fqns_per_model_part", "pipeline_parallel_split_points"}) {
        if (s.pp > 1 && t.has("parallelism", k)) {
            throw InputError(file, t.where("parallelism", k),
                             "explicit module lists are not imported: use "
                             "pipeline_parallel_layers_per_stage");
        }
    }
}

// v0.2.x's [model] converters: float8 training or nothing that changes the layout.
void read_v02_converters(TomlReader& t, TorchtitanSettings& s, ImportResult& r) {
    // v0.2.x registers "quantize.linear.float8" (and the grouped-GEMM one for experts);
    // "float8" is v0.1's name, which v0.2.x no longer registers.
    for (const auto& c : t.strings("model", "converters")) {
        if (c == kV02Float8Linear || c == kV02Float8GroupedMm) {
            s.fp8 = true;
        } else if (c == "float8") {
            s.fp8 = true;
            r.notes.push_back(std::string("model.converters \"float8\" is torchtitan v0.1's "
                                          "name: v0.2.x registers \"") +
                              kV02Float8Linear +
                              "\" and would refuse it; read as float8 training");
        } else {
            r.ignored.push_back(
                {"model.converters", c, "model converter that does not change the layout"});
        }
    }
}

}  // namespace

ImportResult import_torchtitan_toml(const std::string& text, const std::string& file,
                                    const ImportOptions& options) {
    const toml::table root = parse_toml(text, file);
    ImportResult r;
    r.format = ImportFormat::Torchtitan;
    const bool pre02 = is_pre02(root);
    check_keys(root, pre02, file, options, r);

    TorchtitanSettings s;
    s.target = TorchtitanTarget::V02;
    s.ac_option = "2";  // v0.2.x's default selective_ac_option
    TomlReader t(root, file, s);
    read_common_keys(t, s);
    if (pre02) {
        read_pre02_parallelism(t, s, file, r);
    } else {
        read_v02_parallelism(t, s, file);
        read_v02_converters(t, s, r);
        // [quantize.linear.float8] recipe_name (torchtitan e347b1e5e config/job_config.py).
        if (const toml::node* n = root.at_path("quantize.linear.float8.recipe_name").node()) {
            const std::string w = "quantize.linear.float8.recipe_name" +
                                  (n->source().begin.line > 0 ? " (line " + std::to_string(n->source().begin.line) + ")"
                                                              : std::string());
            if (!n->is_string()) throw InputError(file, w, "expected a string");
            s.fp8_recipe_name = *n->value<std::string>();
            s.where["float8.recipe_name"] = w;
        }
    }
    s.where.try_emplace("model.flavor", "model.flavor");
    if (s.ac_mode == "memory_budget") {
        r.notes.push_back(
            "activation_checkpoint.mode \"memory_budget\" read as selective recompute");
        s.ac_mode = "selective";
        s.ac_option = "op";
    }
    layout_from_torchtitan(s, file, options, r);
    return r;
}

ImportResult import_torchtitan(const std::string& text, const std::string& file,
                               const ImportOptions& options) {
    if (is_torchtitan_module(text)) return import_torchtitan_module(text, file, options);
    return import_torchtitan_toml(text, file, options);
}

}  // namespace meshwork
