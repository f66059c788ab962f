#include "core/layout/layout_json.h"

#include "core/cluster/cluster_spec.h"
#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "core/model/hf_config.h"

namespace meshwork {

namespace {

constexpr std::int64_t kMaxAxis = 1 << 20;
constexpr std::int64_t kMaxGpus = 1 << 22;
constexpr std::int64_t kMaxBatch = 1ll << 30;
constexpr std::int64_t kMaxSeq = 1ll << 26;

std::vector<int> int_array(const Json& v, const std::string& file, const std::string& field,
                           std::int64_t min_value, std::int64_t max_value,
                           std::size_t max_len) {
    if (!v.is_array()) {
        throw InputError(file, field, "expected an array, found " + json_type_name(v));
    }
    if (v.size() > max_len) {
        throw InputError(file, field,
                         std::to_string(v.size()) + " entries, more than the " +
                             std::to_string(max_len) + " allowed");
    }
    std::vector<int> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        out.push_back(static_cast<int>(JsonObjectReader::as_int(
            v[i], file, field + "[" + std::to_string(i) + "]", min_value, max_value)));
    }
    return out;
}

// A list of names at `key` (when present): each one handed to `take(name, field)`, which throws
// for a name it does not know; errors name the list or the element.
template <class Take>
void name_list(JsonObjectReader& t, const std::string& file, const char* key, std::size_t max, Take take) {
    if (!t.has(key)) return;
    const Json& names = t.raw(key);
    const std::string field = t.field(key);
    if (!names.is_array()) throw InputError(file, field, "expected an array of module names, found " + json_type_name(names));
    if (names.size() > max) throw InputError(file, field, "too many modules");
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string at = field + "[" + std::to_string(i) + "]";
        if (!names[i].is_string()) throw InputError(file, at, "expected a module name, found " + json_type_name(names[i]));
        take(names[i].get<std::string>(), at);
    }
}

ModelSpec read_model(JsonObjectReader& r, std::string& ref) {
    const Json& v = r.raw("model");
    if (v.is_string()) {
        ref = v.get<std::string>();
        return load_model(ref, r.file(), r.field("model"));
    }
    JsonObjectReader m(v, r.file(), r.field("model"));
    ref.clear();
    const std::string name = m.get_string_or("name", "inline");
    ModelSpec spec = model_from_hf_config(m.raw("hf_config"), r.file(), name,
                                          m.field("hf_config"));
    m.reject_unknown_keys();
    return spec;
}

ClusterSpec read_cluster(JsonObjectReader& r, std::string& ref) {
    const Json& v = r.raw("cluster");
    if (v.is_string()) {
        ref = v.get<std::string>();
        return load_cluster(ref, r.file(), r.field("cluster"));
    }
    ref.clear();
    return cluster_from_json(v, r.file(), r.field("cluster"));
}

}  // namespace

Layout layout_from_json(const Json& j, const std::string& file) {
    JsonObjectReader r(j, file, "");
    const std::string format = r.get_string_or("format", "meshwork-layout");
    if (format != "meshwork-layout") {
        throw InputError(file, "format", "expected \"meshwork-layout\", found \"" + format + "\"");
    }
    const auto version = r.get_int("version", 1, 1000000);
    if (version > kLayoutFormatVersion) {
        throw InputError(file, "version",
                         "layout format version " + std::to_string(version) +
                             " is newer than this build reads (" +
                             std::to_string(kLayoutFormatVersion) + ")");
    }
    Layout l;
    l.name = r.get_string_or("name", "");
    l.description = r.get_string_or("description", "");
    l.model = read_model(r, l.model_ref);
    l.cluster = read_cluster(r, l.cluster_ref);

    auto p = r.get_object("parallel");
    auto& mesh = l.parallel.mesh;
    mesh.tp = static_cast<int>(p.get_int_or("tp", 1, 1, kMaxAxis));
    mesh.pp = static_cast<int>(p.get_int_or("pp", 1, 1, kMaxAxis));
    mesh.cp = static_cast<int>(p.get_int_or("cp", 1, 1, kMaxAxis));
    mesh.ep = static_cast<int>(p.get_int_or("ep", 1, 1, kMaxAxis));
    mesh.etp = static_cast<int>(p.get_int_or("etp", 1, 1, kMaxAxis));
    mesh.order = p.get_string_or("order", std::string(kDefaultAxisOrder));
    l.parallel.vpp = static_cast<int>(p.get_int_or("vpp", 1, 1, kMaxAxis));
    l.parallel.sequence_parallel = p.get_bool_or("sequence_parallel", false);
    const std::string tp_overlap = p.get_string_or("tp_comm_overlap", to_string(ParallelConfig{}.tp_comm_overlap));
    if (!parse_tp_overlap(tp_overlap, l.parallel.tp_comm_overlap)) {
        throw InputError(file, p.field("tp_comm_overlap"),
                         "unknown TP overlap '" + tp_overlap + "' (none, pipe, ring)");
    }
    l.parallel.overlap_grad_reduce = p.get_bool_or("overlap_grad_reduce", ParallelConfig{}.overlap_grad_reduce);
    // Unstated, the gather follows the reduction (Megatron needs both for the gather).
    l.parallel.overlap_param_gather = p.get_bool_or("overlap_param_gather", l.parallel.overlap_grad_reduce);
    const std::string dispatcher = p.get_string_or("moe_dispatcher", to_string(ParallelConfig{}.moe_dispatcher));
    if (!parse_moe_dispatcher(dispatcher, l.parallel.moe_dispatcher)) {
        throw InputError(file, p.field("moe_dispatcher"),
                         "unknown MoE dispatcher '" + dispatcher + "' (allgather, alltoall, flex)");
    }
    if (p.has("moe_flex_backend")) {
        const std::string backend = p.get_string_or("moe_flex_backend", "deepep");
        if (!parse_moe_flex_backend(backend, l.parallel.moe_flex_backend)) {
            throw InputError(file, p.field("moe_flex_backend"),
                             "unknown flex dispatcher backend '" + backend + "' (deepep, hybridep)");
        }
        if (l.parallel.moe_dispatcher != MoeDispatcher::Flex) {
            throw InputError(file, p.field("moe_flex_backend"),
                             "a flex backend needs moe_dispatcher \"flex\" (Megatron-LM: DeepEP and "
                             "HybridEP run only in the flex token dispatcher)");
        }
    }
    l.parallel.moe_a2a_overlap = p.get_bool_or("moe_a2a_overlap", false);
    const long long model_parallel = static_cast<long long>(mesh.tp) * mesh.pp * mesh.cp;
    if (r.has("gpus")) {
        l.gpus = static_cast<int>(r.get_int("gpus", 1, kMaxGpus));
        mesh.dp = static_cast<int>(p.get_int_or(
            "dp", model_parallel > 0 && l.gpus % model_parallel == 0 ? l.gpus / model_parallel : 1,
            1, kMaxAxis));
    } else {
        mesh.dp = static_cast<int>(p.get_int_or("dp", 1, 1, kMaxAxis));
        const long long world = model_parallel * mesh.dp;
        if (world > kMaxGpus) {
            throw InputError(file, "parallel", "tp×pp×cp×dp = " + std::to_string(world) +
                                                   " GPUs is absurd");
        }
        l.gpus = static_cast<int>(world);
    }
    p.reject_unknown_keys();

    if (r.has("placement")) {
        auto pl = r.get_object("placement");
        if (pl.has("layers_per_stage")) {
            l.placement.layers_per_stage = int_array(pl.raw("layers_per_stage"), file,
                                                     pl.field("layers_per_stage"), 0, 100000,
                                                     1 << 16);
        }
        if (pl.has("experts_per_ep_rank")) {
            const Json& e = pl.raw("experts_per_ep_rank");
            const std::string field = pl.field("experts_per_ep_rank");
            if (!e.is_array()) {
                throw InputError(file, field, "expected an array, found " + json_type_name(e));
            }
            if (e.size() > (1u << 16)) throw InputError(file, field, "too many EP ranks");
            for (std::size_t i = 0; i < e.size(); ++i) {
                l.placement.experts_per_ep_rank.push_back(int_array(
                    e[i], file, field + "[" + std::to_string(i) + "]", 0, 1 << 20, 1 << 16));
            }
        }
        pl.reject_unknown_keys();
    }

    auto t = r.get_object("training");
    auto& tr = l.training;
    tr.micro_batch_size = static_cast<int>(t.get_int_or("micro_batch_size", 1, 1, kMaxBatch));
    tr.global_batch_size = static_cast<int>(
        t.get_int_or("global_batch_size", static_cast<std::int64_t>(tr.micro_batch_size) * mesh.dp,
                     1, kMaxBatch));
    tr.seq_length = static_cast<int>(t.get_int_or("seq_length", 2048, 1, kMaxSeq));
    const std::string dtype = t.get_string_or("dtype", "bf16");
    if (!parse_dtype(dtype, tr.dtype)) {
        throw InputError(file, t.field("dtype"),
                         "unknown dtype '" + dtype + "' (fp32, tf32, bf16, fp16, fp8, fp4)");
    }
    const std::string schedule = t.get_string_or("schedule", "1f1b");
    if (!parse_schedule(schedule, tr.schedule)) {
        throw InputError(file, t.field("schedule"),
                         "unknown schedule '" + schedule + "' (gpipe, 1f1b, interleaved)");
    }
    const std::string recompute = t.get_string_or("recompute", "none");
    if (!parse_recompute(recompute, tr.recompute)) {
        throw InputError(file, t.field("recompute"),
                         "unknown recompute '" + recompute + "' (none, selective, full, selective-op)");
    }
    tr.recompute_num_layers = static_cast<int>(t.get_int_or("recompute_num_layers", 0, 0, 100000));
    name_list(t, file, "recompute_modules", 64, [&](const std::string& name, const std::string& at) {
        RecomputeModule mod{};
        if (!parse_recompute_module(name, mod)) {
            throw InputError(file, at, "unknown recompute module '" + name + "' (" + recompute_module_names() + ")");
        }
        tr.recompute_modules.push_back(mod);
    });
    tr.zero_stage = static_cast<int>(t.get_int_or("zero_stage", TrainingConfig{}.zero_stage, 0, 3));
    tr.zero_replicas = static_cast<int>(t.get_int_or("zero_replicas", TrainingConfig{}.zero_replicas, 1, 1 << 20));
    tr.fsdp_fp32_shards = t.get_bool_or("fsdp_fp32_shards", TrainingConfig{}.fsdp_fp32_shards);
    tr.flash_attention = t.get_bool_or("flash_attention", TrainingConfig{}.flash_attention);
    tr.grad_reduce_in_bf16 = t.get_bool_or("grad_reduce_in_bf16", TrainingConfig{}.grad_reduce_in_bf16);
    tr.moe_capacity_factor = t.get_number_or("moe_capacity_factor", 0.0, 0.0, 1000.0);
    tr.moe_rank_capacity_factor = t.get_number_or("moe_rank_capacity_factor", 0.0, 0.0, 1000.0);
    tr.fused_elementwise = t.get_bool_or("fused_elementwise", TrainingConfig{}.fused_elementwise);
    const std::string loss = t.get_string_or("cross_entropy", to_string(TrainingConfig{}.cross_entropy));
    if (!parse_cross_entropy(loss, tr.cross_entropy)) {
        throw InputError(file, t.field("cross_entropy"),
                         "unknown cross_entropy '" + loss + "' (vocab-parallel, upcast, te, te-inplace, flash-attn)");
    }
    const std::string kernel = t.get_string_or("attention_kernel", to_string(TrainingConfig{}.attention_kernel));
    if (!parse_attention_kernel(kernel, tr.attention_kernel)) {
        throw InputError(file, t.field("attention_kernel"), "unknown attention_kernel '" + kernel + "' (fused, sdpa)");
    }
    const std::string recipe = t.get_string_or("fp8_recipe", to_string(TrainingConfig{}.fp8_recipe));
    if (!parse_fp8_recipe(recipe, tr.fp8_recipe)) {
        throw InputError(file, t.field("fp8_recipe"), "unknown fp8_recipe '" + recipe + "' (tensorwise, delayed, blockwise, mxfp8, rowwise)");
    }
    const std::string graphs = t.get_string_or("cuda_graphs", to_string(TrainingConfig{}.cuda_graphs));
    if (!parse_cuda_graphs(graphs, tr.cuda_graphs)) {
        throw InputError(file, t.field("cuda_graphs"),
                         "unknown cuda_graphs '" + graphs + "' (none, per-layer, full-iteration)");
    }
    name_list(t, file, "cuda_graph_modules", 16, [&](const std::string& name, const std::string& at) {
        if (!add_graph_module(name, tr.cuda_graph_modules)) {
            throw InputError(file, at, "unknown CUDA-graph module '" + name + "' (" + graph_module_name_list() + ")");
        }
    });
    tr.offload_activation_layers = static_cast<int>(t.get_int_or("offload_activation_layers", 0, 0, 100000));
    for (const auto& [key, target] : {std::pair<const char*, Offload*>{"offload_optimizer", &tr.offload_optimizer},
                                      std::pair<const char*, Offload*>{"offload_params", &tr.offload_params}}) {
        const std::string text = t.get_string_or(key, "none");
        if (!parse_offload(text, *target)) {
            throw InputError(file, t.field(key), "unknown offload '" + text + "' (none, cpu, nvme)");
        }
    }
    t.reject_unknown_keys();
    r.reject_unknown_keys();
    return l;
}

Json layout_to_json(const Layout& l) {
    Json j;
    j["format"] = "meshwork-layout";
    j["version"] = kLayoutFormatVersion;
    j["name"] = l.name;
    if (!l.description.empty()) j["description"] = l.description;
    if (!l.model_ref.empty()) {
        j["model"] = l.model_ref;
    } else {
        j["model"] = {{"name", l.model.name}, {"hf_config", model_to_hf_config(l.model)}};
    }
    j["cluster"] = l.cluster_ref.empty() ? cluster_to_json(l.cluster) : Json(l.cluster_ref);
    j["gpus"] = l.gpus;
    const auto& m = l.parallel.mesh;
    j["parallel"] = {{"tp", m.tp},   {"pp", m.pp},       {"dp", m.dp},
                     {"cp", m.cp},   {"ep", m.ep},       {"etp", m.etp},
                     {"vpp", l.parallel.vpp}, {"order", m.order},
                     {"sequence_parallel", l.parallel.sequence_parallel}};
    // Written only when used, so that layouts without it read as before.
    if (l.parallel.tp_comm_overlap != TpOverlap::None) {
        j["parallel"]["tp_comm_overlap"] = to_string(l.parallel.tp_comm_overlap);
    }
    if (!l.parallel.overlap_grad_reduce) j["parallel"]["overlap_grad_reduce"] = false;
    if (!l.parallel.overlap_param_gather) j["parallel"]["overlap_param_gather"] = false;
    if (l.parallel.moe_dispatcher != MoeDispatcher::AllToAll) {
        j["parallel"]["moe_dispatcher"] = to_string(l.parallel.moe_dispatcher);
    }
    if (l.parallel.moe_dispatcher == MoeDispatcher::Flex) {
        j["parallel"]["moe_flex_backend"] = to_string(l.parallel.moe_flex_backend);
    }
    if (l.parallel.moe_a2a_overlap) j["parallel"]["moe_a2a_overlap"] = true;
    Json placement = Json::object();
    if (!l.placement.layers_per_stage.empty()) {
        placement["layers_per_stage"] = l.placement.layers_per_stage;
    }
    if (!l.placement.experts_per_ep_rank.empty()) {
        placement["experts_per_ep_rank"] = l.placement.experts_per_ep_rank;
    }
    if (!placement.empty()) j["placement"] = placement;
    const auto& t = l.training;
    j["training"] = {{"micro_batch_size", t.micro_batch_size},
                     {"global_batch_size", t.global_batch_size},
                     {"seq_length", t.seq_length},
                     {"dtype", to_string(t.dtype)},
                     {"schedule", to_string(t.schedule)},
                     {"recompute", to_string(t.recompute)},
                     {"recompute_num_layers", t.recompute_num_layers},
                     {"zero_stage", t.zero_stage},
                     {"flash_attention", t.flash_attention},
                     {"moe_capacity_factor", t.moe_capacity_factor}};
    // Written only when used, so that layouts without offload read as before.
    if (t.offload_optimizer != Offload::None) j["training"]["offload_optimizer"] = to_string(t.offload_optimizer);
    if (t.offload_params != Offload::None) j["training"]["offload_params"] = to_string(t.offload_params);
    if (t.cross_entropy != CrossEntropy::VocabParallel) j["training"]["cross_entropy"] = to_string(t.cross_entropy);
    if (!t.fused_elementwise) j["training"]["fused_elementwise"] = false;
    if (t.attention_kernel != AttentionKernel::Fused) j["training"]["attention_kernel"] = to_string(t.attention_kernel);
    if (t.grad_reduce_in_bf16) j["training"]["grad_reduce_in_bf16"] = true;
    if (t.zero_replicas != 1) j["training"]["zero_replicas"] = t.zero_replicas;
    if (t.fsdp_fp32_shards) j["training"]["fsdp_fp32_shards"] = true;
    if (t.fp8_recipe != Fp8Recipe::Tensorwise) j["training"]["fp8_recipe"] = to_string(t.fp8_recipe);
    if (t.moe_rank_capacity_factor > 0) j["training"]["moe_rank_capacity_factor"] = t.moe_rank_capacity_factor;
    if (t.cuda_graphs != CudaGraphs::None) j["training"]["cuda_graphs"] = to_string(t.cuda_graphs);
    if (!t.cuda_graph_modules.whole_layer()) j["training"]["cuda_graph_modules"] = graph_module_names(t.cuda_graph_modules);
    if (t.offload_activation_layers > 0) j["training"]["offload_activation_layers"] = t.offload_activation_layers;
    if (!t.recompute_modules.empty()) {
        Json mods = Json::array();
        for (RecomputeModule mod : t.recompute_modules) mods.push_back(to_string(mod));
        j["training"]["recompute_modules"] = mods;
    }
    return j;
}

Layout load_layout(const std::string& path) { return layout_from_json(load_json_file(path), path); }

void save_layout(const Layout& layout, const std::string& path) {
    save_json_file(layout_to_json(layout), path);
}

}  // namespace meshwork
