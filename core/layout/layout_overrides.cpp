#include "core/layout/layout_overrides.h"

#include "core/cluster/cluster_spec.h"
#include "core/common/error.h"
#include "core/layout/layout_json.h"
#include "core/layout/pipeline_split.h"
#include "core/model/hf_config.h"

namespace meshwork {

namespace {
constexpr const char* kFlags = "<flags>";

void require_positive(const std::optional<int>& v, const std::string& flag) {
    if (v && *v < 1) {
        throw InputError(kFlags, flag, std::to_string(*v) + " must be at least 1");
    }
}
// Megatron-LM's split rules on the layout's model and pipeline shape; the errors name the
// flag, and Megatron-LM refuses the same combinations (transformer_config.py:2229-2239).
void apply_megatron_split(const LayoutOverrides& f, Layout& l) {
    const bool accounted = f.account_for_embedding || f.account_for_loss;
    const bool uneven = f.first_stage_layers || f.last_stage_layers;
    if (!accounted && !uneven) return;
    const std::string flag = f.account_for_embedding ? "--account-for-embedding"
                             : f.account_for_loss    ? "--account-for-loss"
                             : f.first_stage_layers  ? "--first-stage-layers"
                                                     : "--last-stage-layers";
    if (f.layers_per_stage) {
        throw InputError(kFlags, flag, "give either --layers-per-stage or a split rule, not both");
    }
    if (accounted && uneven) {
        throw InputError(kFlags, flag,
                         "the embedding/loss accounting and uneven first/last stages exclude each "
                         "other (as in Megatron-LM)");
    }
    const int pp = l.parallel.mesh.pp;
    const int vpp = l.parallel.vpp;
    std::string error;
    auto split = accounted ? accounted_split(l.model.num_layers, pp, vpp, f.account_for_embedding,
                                             f.account_for_loss, error)
                           : uneven_split(l.model.num_layers, pp, vpp, f.first_stage_layers,
                                          f.last_stage_layers, error);
    if (split.empty()) {
        throw InputError(kFlags, flag,
                         error + " (" + l.model.name + ": " + std::to_string(l.model.num_layers) +
                             " layers, pp " + std::to_string(pp) + ", vpp " + std::to_string(vpp) + ")");
    }
    l.placement.layers_per_stage = std::move(split);
}
}  // namespace

bool LayoutOverrides::empty() const {
    return !model && !cluster && !gpus && !nodes && !tp && !pp && !dp && !cp && !ep && !etp &&
           !vpp && !order && !mbs && !gbs && !seq && !schedule && !recompute && !recompute_modules && !dtype &&
           !sequence_parallel && !zero && !zero_replicas && !fsdp_fp32_shards && !flash_attention && !grad_reduce_dtype && !tp_comm_overlap &&
           !overlap_grad_reduce && !overlap_param_gather && !layers_per_stage && !account_for_embedding &&
           !account_for_loss && !first_stage_layers && !last_stage_layers && !moe_dispatcher &&
           !moe_flex_backend && !moe_a2a_overlap && !fp8_recipe && !cuda_graphs && !cuda_graph_modules && !attention_kernel &&
           !offload_activation_layers && !moe_rank_capacity_factor;
}

Layout build_layout(const std::optional<std::string>& layout_file, const LayoutOverrides& f) {
    for (const auto& [v, name] :
         {std::pair{f.gpus, "--gpus"}, {f.nodes, "--nodes"}, {f.tp, "--tp"}, {f.pp, "--pp"},
          {f.dp, "--dp"}, {f.cp, "--cp"}, {f.ep, "--ep"}, {f.etp, "--etp"}, {f.vpp, "--vpp"},
          {f.mbs, "--mbs"}, {f.gbs, "--gbs"}, {f.seq, "--seq"}, {f.zero_replicas, "--zero-replicas"}}) {
        require_positive(v, name);
    }
    Layout l;
    if (layout_file) {
        l = load_layout(*layout_file);
    } else if (!f.model) {
        throw InputError(kFlags, "--model", "a layout file or --model is required");
    }
    if (f.model) {
        l.model = load_model(*f.model, kFlags, "--model");
        l.model_ref = *f.model;
    }
    if (f.cluster) {
        l.cluster = load_cluster(*f.cluster, kFlags, "--cluster");
        l.cluster_ref = *f.cluster;
    } else if (!layout_file) {
        const bool tiny = l.model.hidden_size <= 1024;
        l.cluster_ref = tiny ? "cpu-local" : "dgx-h100";
        l.cluster = load_cluster(l.cluster_ref, kFlags, "--cluster");
    }
    if (!layout_file && l.name.empty()) l.name = l.model.name;

    auto& m = l.parallel.mesh;
    const bool axes_changed = f.tp || f.pp || f.cp;
    if (f.tp) m.tp = *f.tp;
    if (f.pp) m.pp = *f.pp;
    if (f.cp) m.cp = *f.cp;
    if (f.ep) m.ep = *f.ep;
    if (f.etp) m.etp = *f.etp;
    if (f.vpp) l.parallel.vpp = *f.vpp;
    if (f.order) m.order = *f.order;
    if (f.sequence_parallel) l.parallel.sequence_parallel = *f.sequence_parallel;

    // --nodes counts hosts (ClusterSpec::allocation_gpus), as SLURM and torchrun do.
    if (f.gpus && f.nodes &&
        static_cast<long long>(*f.nodes) * l.cluster.allocation_gpus() != *f.gpus) {
        throw InputError(kFlags, "--nodes",
                         std::to_string(*f.nodes) + " nodes × " +
                             std::to_string(l.cluster.allocation_gpus()) +
                             " GPUs per node disagrees with --gpus " + std::to_string(*f.gpus));
    }
    const bool world_changed = f.gpus || f.nodes;
    if (f.gpus) l.gpus = *f.gpus;
    if (f.nodes) {
        const long long g = static_cast<long long>(*f.nodes) * l.cluster.allocation_gpus();
        if (g > (1 << 22)) throw InputError(kFlags, "--nodes", "absurd number of nodes");
        l.gpus = static_cast<int>(g);
    }
    const long long model_parallel = static_cast<long long>(m.tp) * m.pp * m.cp;
    if (f.dp) {
        m.dp = *f.dp;
        if (!world_changed) {
            const long long world = model_parallel * m.dp;
            if (world > (1 << 22)) throw InputError(kFlags, "--dp", "absurd world size");
            l.gpus = static_cast<int>(world);
        }
    } else if (world_changed || axes_changed || !layout_file) {
        if (!world_changed && !layout_file) {
            l.gpus = static_cast<int>(model_parallel);  // no world given: dp 1
        }
        if (model_parallel > 0 && l.gpus % model_parallel != 0) {
            throw InputError(kFlags, f.gpus ? "--gpus" : "--tp",
                             "world size " + std::to_string(l.gpus) +
                                 " is not a multiple of tp×pp×cp = " +
                                 std::to_string(model_parallel));
        }
        m.dp = static_cast<int>(l.gpus / model_parallel);
    }

    auto& t = l.training;
    if (f.mbs) t.micro_batch_size = *f.mbs;
    if (f.seq) t.seq_length = *f.seq;
    if (f.gbs) {
        t.global_batch_size = *f.gbs;
    } else if (!layout_file) {
        t.global_batch_size = t.micro_batch_size * m.dp;
    }
    if (f.schedule && !parse_schedule(*f.schedule, t.schedule)) {
        throw InputError(kFlags, "--schedule",
                         "unknown schedule '" + *f.schedule + "' (gpipe, 1f1b, interleaved)");
    }
    if (!f.schedule && l.parallel.vpp > 1) t.schedule = Schedule::Interleaved;
    if (f.recompute && !parse_recompute(*f.recompute, t.recompute)) {
        throw InputError(kFlags, "--recompute",
                         "unknown recompute '" + *f.recompute + "' (none, selective, full, selective-op)");
    }
    if (f.recompute && !f.recompute_modules && t.recompute != Recompute::Selective) t.recompute_modules.clear();
    if (f.recompute_modules) {
        if (f.recompute_modules->empty()) {
            t.recompute_modules.clear();
        } else {
            parse_recompute_modules_flag(*f.recompute_modules, t.recompute_modules);
        }
        // As Megatron-Bridge's recipes state it: a module list means selective recomputation
        // (scripts/performance/utils/overrides.py:150-152 at 21d102f5e).
        if (!f.recompute && t.recompute == Recompute::None) t.recompute = Recompute::Selective;
        if (!t.recompute_modules.empty() && t.recompute != Recompute::Selective) {
            throw InputError(kFlags, "--recompute-modules",
                             "modules are recomputed only with --recompute selective, not " + to_string(t.recompute));
        }
    }
    if (f.dtype && !parse_dtype(*f.dtype, t.dtype)) {
        throw InputError(kFlags, "--dtype",
                         "unknown dtype '" + *f.dtype + "' (fp32, tf32, bf16, fp16, fp8, fp4)");
    }
    if (!layout_file && !f.dtype) t.dtype = l.cluster.gpu.default_training_dtype();
    if (f.zero) {
        if (*f.zero < 0 || *f.zero > 3) {
            throw InputError(kFlags, "--zero", std::to_string(*f.zero) + " is not 0, 1, 2 or 3");
        }
        t.zero_stage = *f.zero;
    }
    if (f.zero_replicas) t.zero_replicas = *f.zero_replicas;
    if (f.tp_comm_overlap && !parse_tp_overlap(*f.tp_comm_overlap, l.parallel.tp_comm_overlap)) {
        throw InputError(kFlags, "--tp-comm-overlap",
                         "'" + *f.tp_comm_overlap + "' is not none, pipe or ring");
    }
    // An on/off flag, when given, sets `out`.
    auto two_way = [](const std::optional<std::string>& value, const char* flag, bool& out) {
        if (value) out = parse_on_off_flag(*value, flag);
    };
    two_way(f.overlap_grad_reduce, "--overlap-grad-reduce", l.parallel.overlap_grad_reduce);
    two_way(f.overlap_param_gather, "--overlap-param-gather", l.parallel.overlap_param_gather);
    // Turning the reduction off turns the gather off unless it is given (Megatron needs both).
    if (f.overlap_grad_reduce && !f.overlap_param_gather && !l.parallel.overlap_grad_reduce) {
        l.parallel.overlap_param_gather = false;
    }
    two_way(f.flash_attention, "--flash-attention", t.flash_attention);
    two_way(f.fsdp_fp32_shards, "--fsdp-fp32-shards", t.fsdp_fp32_shards);
    if (f.grad_reduce_dtype && !parse_grad_reduce_dtype(*f.grad_reduce_dtype, t.grad_reduce_in_bf16)) {
        throw InputError(kFlags, "--grad-reduce-dtype", "'" + *f.grad_reduce_dtype + "' is not fp32 or bf16");
    }
    parse_moe_dispatch_flags(f.moe_dispatcher, f.moe_flex_backend, l.parallel.moe_dispatcher, l.parallel.moe_flex_backend);
    two_way(f.moe_a2a_overlap, "--moe-a2a-overlap", l.parallel.moe_a2a_overlap);
    if (f.fp8_recipe && !parse_fp8_recipe(*f.fp8_recipe, t.fp8_recipe)) {
        throw InputError(kFlags, "--fp8-recipe", "'" + *f.fp8_recipe + "' is not tensorwise, delayed, blockwise, mxfp8 or rowwise");
    }
    if (f.attention_kernel && !parse_attention_kernel(*f.attention_kernel, t.attention_kernel)) {
        throw InputError(kFlags, "--attention-kernel", "'" + *f.attention_kernel + "' is not fused or sdpa");
    }
    if (f.cuda_graphs && !parse_cuda_graphs(*f.cuda_graphs, t.cuda_graphs)) {
        throw InputError(kFlags, "--cuda-graphs", "'" + *f.cuda_graphs + "' is not none, per-layer or full-iteration");
    }
    if (f.cuda_graph_modules) {
        t.cuda_graph_modules = GraphModules{};
        std::string name;
        auto flush = [&] {
            if (!name.empty() && !add_graph_module(name, t.cuda_graph_modules)) {
                throw InputError(kFlags, "--cuda-graph-modules",
                                 "'" + name + "' is not a CUDA-graph module (" + graph_module_name_list() + ")");
            }
            name.clear();
        };
        for (char ch : *f.cuda_graph_modules) {
            if (ch == ',' || ch == ' ') flush();
            else name += ch;
        }
        flush();
    }
    if (f.moe_rank_capacity_factor) {
        const double v = *f.moe_rank_capacity_factor;
        if (!(v >= 0) || v > 1000) throw InputError(kFlags, "--moe-rank-capacity-factor", "must be 0 (none) to 1000");
        t.moe_rank_capacity_factor = v;
    }
    if (f.offload_activation_layers) {
        if (*f.offload_activation_layers < 0) {
            throw InputError(kFlags, "--offload-activation-layers", "must be 0 (none) or more");
        }
        t.offload_activation_layers = *f.offload_activation_layers;
    }
    if (f.layers_per_stage) {
        l.placement.layers_per_stage = *f.layers_per_stage;
    } else if (f.pp || f.vpp || f.model) {
        // A new pipeline shape or model invalidates an explicit split from the file.
        const auto chunks = static_cast<std::size_t>(m.pp) * l.parallel.vpp;
        if (l.placement.layers_per_stage.size() != chunks || f.model) {
            l.placement.layers_per_stage.clear();
        }
    }
    apply_megatron_split(f, l);
    if ((f.ep || f.model) &&
        l.placement.experts_per_ep_rank.size() != static_cast<std::size_t>(m.ep)) {
        l.placement.experts_per_ep_rank.clear();
    }
    if (f.model) l.placement.experts_per_ep_rank.clear();
    return l;
}

bool parse_on_off_flag(const std::string& value, const char* flag) {
    if (value != "on" && value != "off") throw InputError(kFlags, flag, "'" + value + "' is not on or off");
    return value == "on";
}

void parse_recompute_modules_flag(const std::string& value, std::vector<RecomputeModule>& out) {
    std::string bad;
    if (!parse_recompute_module_list(value, out, bad)) {
        throw InputError(kFlags, "--recompute-modules", "unknown module '" + bad + "' (" + recompute_module_names() + ")");
    }
}

void parse_moe_dispatch_flags(const std::optional<std::string>& dispatcher, const std::optional<std::string>& backend,
                              MoeDispatcher& dispatcher_out, MoeFlexBackend& backend_out) {
    if (dispatcher && !parse_moe_dispatcher(*dispatcher, dispatcher_out)) {
        throw InputError(kFlags, "--moe-dispatcher", "'" + *dispatcher + "' is not allgather, alltoall or flex");
    }
    if (!backend) return;
    if (!parse_moe_flex_backend(*backend, backend_out)) {
        throw InputError(kFlags, "--moe-flex-backend", "'" + *backend + "' is not deepep or hybridep");
    }
    if (dispatcher_out != MoeDispatcher::Flex) {
        throw InputError(kFlags, "--moe-flex-backend", "needs --moe-dispatcher flex");
    }
}

}  // namespace meshwork
