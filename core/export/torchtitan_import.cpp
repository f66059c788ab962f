#include <algorithm>
#include <cctype>
#include <sstream>

#include <toml++/toml.h>

#include "common/error.h"
#include "export/canonical_layout.h"
#include "export/import_common.h"
#include "export/stage_split.h"
#include "export/torchtitan_config.h"
#include "model/hf_config.h"

namespace meshwork {

namespace {

constexpr std::int64_t kMaxAxis = 1 << 20;
constexpr std::int64_t kMaxBatch = 1ll << 30;
constexpr const char* kIgnoredTable = "torchtitan section that does not change the layout";
constexpr const char* kIgnoredKey = "torchtitan setting that does not change the layout";

// Tables of a torchtitan job config that say nothing about the layout.
constexpr const char* kIgnoredTables[] = {
    "profiling", "metrics", "optimizer", "lr_scheduler", "checkpoint", "compile", "float8",
    "mx", "comm", "memory_estimation", "fault_tolerance", "experimental", "validation",
    "quantize", "debug",
};

// Keys of the layout tables that are known and have no effect on the layout.
bool ignored_key(const std::string& table, const std::string& key) {
    static const std::pair<const char*, const char*> keys[] = {
        {"job", "config_file"}, {"job", "dump_folder"}, {"job", "description"},
        {"job", "use_for_integration_test"}, {"job", "print_args"}, {"job", "custom_config_module"},
        {"job", "print_config"},  // v0.2.x: prints the resolved config at start-up
        {"model", "norm_type"},   // 2024: the norm kernel of the flavor's own norm
        {"training", "warmup_steps"},  // 2024: learning-rate warm-up, later [lr_scheduler]
        {"model", "hf_assets_path"}, {"model", "tokenizer_path"}, {"model", "print_after_conversion"},
        {"training", "dataset"}, {"training", "dataset_path"}, {"training", "max_norm"},
        {"training", "steps"}, {"training", "enable_cpu_offload"}, {"training", "mixed_precision_reduce"},
        {"training", "gc_freq"}, {"training", "gc_debug"}, {"training", "seed"},
        {"training", "deterministic"}, {"training", "compile"},
        {"parallelism", "enable_compiled_autograd"}, {"parallelism", "disable_loss_parallel"},
        {"parallelism", "enable_async_tensor_parallel"}, {"parallelism", "context_parallel_rotate_method"},
        {"parallelism", "pipeline_parallel_schedule_csv"}, {"parallelism", "world_size"},
        {"activation_checkpoint", "per_op_sac_force_recompute_mm_shapes_by_fqns"},
        {"activation_checkpoint", "early_stop"}, {"activation_checkpoint", "memory_budget"},
        {"activation_checkpoint", "visualize_memory_budget_pareto"},
    };
    for (const auto& [t, k] : keys) {
        if (table == t && key == k) return true;
    }
    return false;
}

// torchtitan's earlier names (2024: the parallel degrees under [training] and
// [experimental], training.batch_size), moved to where v0.2.x reads them.
struct MovedKey {
    const char* from_table;
    const char* from_key;
    const char* to_table;
    const char* to_key;
};
constexpr MovedKey kMovedKeys[] = {
    {"training", "batch_size", "training", "local_batch_size"},
    {"training", "data_parallel_degree", "parallelism", "data_parallel_shard_degree"},
    {"training", "data_parallel_shard_degree", "parallelism", "data_parallel_shard_degree"},
    {"training", "data_parallel_replicate_degree", "parallelism", "data_parallel_replicate_degree"},
    {"training", "tensor_parallel_degree", "parallelism", "tensor_parallel_degree"},
    {"experimental", "pipeline_parallel_degree", "parallelism", "pipeline_parallel_degree"},
    {"experimental", "pipeline_parallel_schedule", "parallelism", "pipeline_parallel_schedule"},
    {"experimental", "pipeline_parallel_split_points", "parallelism", "pipeline_parallel_split_points"},
    {"experimental", "context_parallel_degree", "parallelism", "context_parallel_degree"},
    {"experimental", "expert_parallel_degree", "parallelism", "expert_parallel_degree"},
};

void move_earlier_keys(toml::table& root, const std::string& file, ImportResult& r) {
    for (const auto& m : kMovedKeys) {
        toml::table* from = root[m.from_table].as_table();
        if (from == nullptr || from->get(m.from_key) == nullptr) continue;
        if (root[m.to_table].as_table() == nullptr) root.insert_or_assign(m.to_table, toml::table{});
        toml::table* to = root[m.to_table].as_table();
        const std::string from_name = std::string(m.from_table) + "." + m.from_key;
        const std::string to_name = std::string(m.to_table) + "." + m.to_key;
        if (to->get(m.to_key) != nullptr) {
            throw InputError(file, from_name, "given together with " + to_name + ", its later name");
        }
        from->get(m.from_key)->visit([&](const auto& v) { to->insert_or_assign(m.to_key, v); });
        from->erase(m.from_key);
        r.notes.push_back(from_name + " read as " + to_name + " (its name in torchtitan v0.2)");
    }
    // 2024: [float8] enable_float8_linear = true is the float8 converter of later versions.
    if (const toml::table* f8 = root["float8"].as_table()) {
        if (const toml::node* on = f8->get("enable_float8_linear"); on != nullptr && on->value_or(false)) {
            if (root["model"].as_table() == nullptr) root.insert_or_assign("model", toml::table{});
            toml::table* model = root["model"].as_table();
            if (model->get("converters") == nullptr) model->insert_or_assign("converters", toml::array{"float8"});
            r.notes.push_back("float8.enable_float8_linear = true read as model.converters = [\"float8\"]");
        }
    }
}

bool used_key(const std::string& table, const std::string& key) {
    static const std::pair<const char*, const char*> keys[] = {
        {"model", "name"}, {"model", "flavor"}, {"model", "converters"},
        {"training", "local_batch_size"}, {"training", "global_batch_size"}, {"training", "seq_len"},
        {"training", "mixed_precision_param"},
        {"parallelism", "data_parallel_replicate_degree"}, {"parallelism", "data_parallel_shard_degree"},
        {"parallelism", "fsdp_reshard_after_forward"}, {"parallelism", "tensor_parallel_degree"},
        {"parallelism", "pipeline_parallel_degree"}, {"parallelism", "pipeline_parallel_schedule"},
        {"parallelism", "pipeline_parallel_microbatch_size"},
        {"parallelism", "pipeline_parallel_layers_per_stage"},
        {"parallelism", "pipeline_parallel_first_stage_less_layers"},
        {"parallelism", "pipeline_parallel_last_stage_less_layers"},
        {"parallelism", "pipeline_parallel_split_points"},
        {"parallelism", "module_fqns_per_model_part"},
        {"parallelism", "context_parallel_degree"}, {"parallelism", "expert_parallel_degree"},
        {"parallelism", "expert_tensor_parallel_degree"},
        {"activation_checkpoint", "mode"}, {"activation_checkpoint", "selective_ac_option"},
    };
    for (const auto& [t, k] : keys) {
        if (table == t && key == k) return true;
    }
    return false;
}

class TomlReader {
public:
    TomlReader(const toml::table& root, std::string file) : root_(root), file_(std::move(file)) {}

    std::optional<std::int64_t> integer(const std::string& table, const std::string& key,
                                        std::int64_t min_value, std::int64_t max_value) const {
        const toml::node* n = node(table, key);
        if (n == nullptr) return std::nullopt;
        const auto v = n->value<std::int64_t>();
        if (!n->is_integer() || !v) throw InputError(file_, where(table, key, n), "expected an integer");
        if (*v < min_value || *v > max_value) {
            throw InputError(file_, where(table, key, n),
                             std::to_string(*v) + " is outside [" + std::to_string(min_value) + ", " +
                                 std::to_string(max_value) + "]");
        }
        return v;
    }
    std::optional<std::string> string(const std::string& table, const std::string& key) const {
        const toml::node* n = node(table, key);
        if (n == nullptr) return std::nullopt;
        if (!n->is_string()) throw InputError(file_, where(table, key, n), "expected a string");
        return n->value<std::string>();
    }
    std::vector<std::string> strings(const std::string& table, const std::string& key) const {
        const toml::node* n = node(table, key);
        std::vector<std::string> out;
        if (n == nullptr) return out;
        const toml::array* a = n->as_array();
        if (a == nullptr) throw InputError(file_, where(table, key, n), "expected an array of strings");
        for (const auto& e : *a) {
            if (!e.is_string()) throw InputError(file_, where(table, key, n), "expected an array of strings");
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
    static std::string where(const std::string& table, const std::string& key, const toml::node* n) {
        std::string w = table + "." + key;
        if (n != nullptr && n->source().begin.line > 0) {
            w += " (line " + std::to_string(n->source().begin.line) + ")";
        }
        return w;
    }

    const toml::table& root_;
    std::string file_;
};

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

ImportResult import_torchtitan(const std::string& text, const std::string& file,
                               const ImportOptions& options) {
    toml::table root;
    try {
        root = toml::parse(text, file);
    } catch (const toml::parse_error& e) {
        throw InputError(file, "line " + std::to_string(e.source().begin.line),
                         std::string(e.description()));
    }
    ImportResult r;
    r.format = ImportFormat::Torchtitan;
    move_earlier_keys(root, file, r);
    // Every table and key is either used, known to be irrelevant (listed as ignored) or an
    // error: a misspelt key must not silently fall back to torchtitan's default.
    std::vector<InputIssue> issues;
    for (const auto& [table_key, table_node] : root) {
        const std::string table(table_key.str());
        const bool layout_table = table == "job" || table == "model" || table == "training" ||
                                  table == "parallelism" || table == "activation_checkpoint";
        const bool ignored_table = std::find_if(std::begin(kIgnoredTables), std::end(kIgnoredTables),
                                                [&](const char* t) { return table == t; }) !=
                                   std::end(kIgnoredTables);
        if (!table_node.is_table()) {
            issues.push_back({file, table, "expected a [" + table + "] table"});
            continue;
        }
        if (ignored_table) {
            r.ignored.push_back({"[" + table + "]", "[" + table + "]", kIgnoredTable});
            continue;
        }
        if (!layout_table) {
            issues.push_back({file, "[" + table + "]",
                              "unknown torchtitan section (docs/export.md lists the known ones)"});
            continue;
        }
        for (const auto& [key, value] : *table_node.as_table()) {
            const std::string k(key.str());
            if (used_key(table, k)) continue;
            if (ignored_key(table, k)) {
                std::ostringstream v;
                value.visit([&v](const auto& n) { v << n; });
                r.ignored.push_back({table + "." + k, table + "." + k + " = " + v.str(), kIgnoredKey});
                continue;
            }
            issues.push_back({file, table + "." + k, "unknown torchtitan setting"});
        }
    }
    if (!issues.empty()) throw InputError(issues);
    const TomlReader t(root, file);

    Layout& l = r.layout;
    // The model: --model wins; else the flavor of a known torchtitan model; else a flavor
    // that names a Meshwork preset (what a lossy export writes).
    const std::string name = t.string("model", "name").value_or("llama3");
    const std::string flavor = t.string("model", "flavor").value_or("debugmodel");
    std::string preset = options.model.value_or(preset_of_torchtitan_flavor(name, flavor));
    if (preset.empty()) {
        try {
            (void)load_model(flavor, file, t.where("model", "flavor"));
            preset = flavor;
            r.notes.push_back("flavor \"" + flavor + "\" read as the Meshwork preset of that name");
        } catch (const InputError&) {
            throw InputError(file, t.where("model", "flavor"),
                             "torchtitan model " + name + " flavor " + flavor +
                                 " has no Meshwork preset: pass --model PRESET|config.json");
        }
    }
    l.model = load_model(preset, options.model ? "<flags>" : file,
                         options.model ? "--model" : t.where("model", "flavor"));
    l.model_ref = preset;
    apply_import_defaults(l, options, file, "torchtitan config", r.notes);

    auto& mesh = l.parallel.mesh;
    const auto replicate = t.integer("parallelism", "data_parallel_replicate_degree", 1, kMaxAxis).value_or(1);
    auto shard = t.integer("parallelism", "data_parallel_shard_degree", -1, kMaxAxis).value_or(-1);
    if (shard == 0) throw InputError(file, t.where("parallelism", "data_parallel_shard_degree"), "0 is not a degree (use -1 or at least 1)");
    mesh.tp = static_cast<int>(t.integer("parallelism", "tensor_parallel_degree", 1, kMaxAxis).value_or(1));
    mesh.pp = static_cast<int>(t.integer("parallelism", "pipeline_parallel_degree", 1, kMaxAxis).value_or(1));
    mesh.cp = static_cast<int>(t.integer("parallelism", "context_parallel_degree", 1, kMaxAxis).value_or(1));
    mesh.ep = static_cast<int>(t.integer("parallelism", "expert_parallel_degree", 1, kMaxAxis).value_or(1));
    mesh.etp = static_cast<int>(t.integer("parallelism", "expert_tensor_parallel_degree", 1, kMaxAxis).value_or(1));
    const long long model_parallel = static_cast<long long>(mesh.tp) * mesh.pp * mesh.cp;
    const auto world_opt = world_from_options(options, l.cluster.gpus_per_node);
    long long world = 0;
    if (shard == -1) {
        // torchtitan: -1 takes the ranks left after replicate, cp, tp and pp.
        if (!world_opt) {
            throw InputError(file, t.where("parallelism", "data_parallel_shard_degree"),
                             "-1 (the remaining ranks) needs the world size: pass --gpus or --nodes");
        }
        world = *world_opt;
        if (world % (model_parallel * replicate) != 0) {
            throw InputError("<flags>", "--gpus", "not a multiple of replicate × tp × pp × cp");
        }
        shard = world / (model_parallel * replicate);
    } else {
        world = model_parallel * replicate * shard;
        if (world_opt && *world_opt != world) {
            throw InputError("<flags>", options.gpus ? "--gpus" : "--nodes",
                             std::to_string(*world_opt) + " GPUs disagree with the config's " +
                                 std::to_string(world));
        }
    }
    mesh.dp = static_cast<int>(replicate * shard);
    l.gpus = static_cast<int>(world);
    l.parallel.sequence_parallel = mesh.tp > 1;  // torchtitan's TP plan is always sequence-parallel

    auto& tr = l.training;
    if (shard > 1) {
        const std::string reshard = t.string("parallelism", "fsdp_reshard_after_forward").value_or("default");
        if (reshard == "never") tr.zero_stage = 2;
        else if (reshard == "always" || reshard == "default") tr.zero_stage = 3;
        else throw InputError(file, t.where("parallelism", "fsdp_reshard_after_forward"),
                              "'" + reshard + "': expected default, always or never");
        if (replicate > 1) {
            r.notes.push_back("HSDP (replicate " + std::to_string(replicate) + " × shard " +
                              std::to_string(shard) + ") read as ZeRO-" +
                              std::to_string(tr.zero_stage) + " over all " + std::to_string(mesh.dp) +
                              " data-parallel ranks");
        }
    } else {
        tr.zero_stage = 0;
    }

    const std::string precision = t.string("training", "mixed_precision_param").value_or("bfloat16");
    const auto converters = t.strings("model", "converters");
    const bool fp8 = std::find(converters.begin(), converters.end(), "float8") != converters.end();
    if (precision == "bfloat16") tr.dtype = fp8 ? DType::Fp8 : DType::Bf16;
    else if (precision == "float32") tr.dtype = DType::Fp32;
    else throw InputError(file, t.where("training", "mixed_precision_param"), "'" + precision + "': expected bfloat16 or float32");

    tr.seq_length = static_cast<int>(t.integer("training", "seq_len", 1, 1 << 26).value_or(2048));
    const auto local = t.integer("training", "local_batch_size", 1, kMaxBatch).value_or(8);
    auto global = t.integer("training", "global_batch_size", -1, kMaxBatch).value_or(-1);
    if (global == -1) global = local * mesh.dp;  // torchtitan's default
    if (global == 0) throw InputError(file, t.where("training", "global_batch_size"), "0 is not a batch size");
    tr.global_batch_size = static_cast<int>(global);
    if (mesh.pp > 1) {
        tr.micro_batch_size = static_cast<int>(
            t.integer("parallelism", "pipeline_parallel_microbatch_size", 1, kMaxBatch).value_or(1));
        if (local % tr.micro_batch_size != 0) {
            throw InputError(file, t.where("training", "local_batch_size"),
                             "not a multiple of pipeline_parallel_microbatch_size");
        }
    } else {
        tr.micro_batch_size = static_cast<int>(local);
    }

    // The schedule and the split.
    const std::string sched = t.string("parallelism", "pipeline_parallel_schedule").value_or("1F1B");
    const std::string s = lower(sched);
    if (s == "gpipe") tr.schedule = Schedule::GPipe;
    else if (s == "1f1b") tr.schedule = Schedule::OneFOneB;
    else if (s == "interleaved1f1b") tr.schedule = Schedule::Interleaved;
    else throw InputError(file, t.where("parallelism", "pipeline_parallel_schedule"),
                          "'" + sched + "' has no Meshwork equivalent (GPipe, 1F1B, Interleaved1F1B)");
    for (const char* k : {"pipeline_parallel_split_points", "module_fqns_per_model_part"}) {
        if (t.has("parallelism", k)) {
            throw InputError(file, t.where("parallelism", k),
                             "explicit module lists are not imported: use pipeline_parallel_layers_per_stage");
        }
    }
    const int layers = l.model.num_layers;
    if (mesh.pp == 1 && tr.schedule != Schedule::OneFOneB) {
        // torchtitan builds no pipeline with one stage: the schedule is not used.
        r.notes.push_back("pipeline_parallel_schedule = \"" + sched +
                          "\" has no effect with pipeline_parallel_degree 1");
        tr.schedule = Schedule::OneFOneB;
    }
    if (mesh.pp > 1) {
        const auto per = t.integer("parallelism", "pipeline_parallel_layers_per_stage", 1, 100000);
        const int first_less = static_cast<int>(
            t.integer("parallelism", "pipeline_parallel_first_stage_less_layers", 0, 100000).value_or(1));
        const int last_less = static_cast<int>(
            t.integer("parallelism", "pipeline_parallel_last_stage_less_layers", 0, 100000).value_or(1));
        if (per) {
            const long long total = layers + first_less + last_less;
            if (total % *per != 0 || total / *per < 2 || (total / *per) % mesh.pp != 0) {
                throw InputError(file, t.where("parallelism", "pipeline_parallel_layers_per_stage"),
                                 std::to_string(layers) + " layers (+" + std::to_string(first_less) +
                                     " +" + std::to_string(last_less) +
                                     " for the ends) do not make a whole number of stages per rank");
            }
            const int chunks = static_cast<int>(total / *per);
            l.parallel.vpp = chunks / mesh.pp;
            l.placement.layers_per_stage = ends_split(chunks, static_cast<int>(*per) - first_less,
                                                      static_cast<int>(*per),
                                                      static_cast<int>(*per) - last_less);
        } else {
            if (tr.schedule == Schedule::Interleaved) {
                throw InputError(file, t.where("parallelism", "pipeline_parallel_schedule"),
                                 "an interleaved schedule needs pipeline_parallel_layers_per_stage "
                                 "to know the stages per rank");
            }
            r.notes.push_back("no pipeline_parallel_layers_per_stage: torchtitan splits the layers "
                              "itself; Meshwork assumes its balanced split");
        }
    }

    const std::string mode = t.string("activation_checkpoint", "mode").value_or("selective");
    const std::string option = t.string("activation_checkpoint", "selective_ac_option").value_or("2");
    if (mode == "none") {
        tr.recompute = Recompute::None;
    } else if (mode == "full") {
        tr.recompute = Recompute::Full;
    } else if (mode == "selective") {
        if (option == "op") {
            tr.recompute = Recompute::Selective;
        } else {
            long long every = 0;
            if (!parse_int_text(option, 1, 100000, every)) {
                throw InputError(file, t.where("activation_checkpoint", "selective_ac_option"),
                                 "'" + option + "': expected \"op\" or a layer interval such as \"2\"");
            }
            // Every n-th layer fully recomputed: Meshwork's full recompute of a share of the
            // layers of each stage.
            tr.recompute = Recompute::Full;
            const auto split = l.stage_layers();
            const int largest = split.empty() ? layers : *std::max_element(split.begin(), split.end());
            tr.recompute_num_layers = every == 1 ? 0 : std::max(1, largest / static_cast<int>(every));
            r.notes.push_back("selective_ac_option \"" + option + "\" (every " + option +
                              "th layer fully recomputed) read as full recompute of " +
                              std::to_string(tr.recompute_num_layers == 0 ? largest : tr.recompute_num_layers) +
                              " layers per stage");
        }
    } else {
        throw InputError(file, t.where("activation_checkpoint", "mode"),
                         "'" + mode + "': expected none, selective or full");
    }
    l = canonical_layout(std::move(l));
    return r;
}

}  // namespace meshwork
