// meshwork-cli search: the best layouts for a model, a cluster, a world size and a batch.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "core/cluster/cluster_spec.h"
#include "core/common/error.h"
#include "app/cli/layout_flags.h"
#include "app/cli/exit_codes.h"
#include "app/cli/format.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_overrides.h"
#include "core/layout/layout_rules.h"
#include "core/model/hf_config.h"
#include "core/search/search.h"
#include "core/search/search_json.h"
#include "core/search/simulator_rerank.h"
#include "app/cli/verb.h"

namespace meshwork::cli {

namespace {

struct SearchFlags {
    std::string model, cluster, dtype, out, order, tp_overlap, grad_reduce = "fp32", recompute_modules, fsdp_fp32_shards;
    std::string moe_dispatcher, moe_flex_backend, moe_a2a_overlap, overlap_grad_reduce, overlap_param_gather;
    std::string cuda_graphs;
    int gpus = 0, nodes = 0, gbs = 0, seq = 0, top = 10, max_tp = 0, threads = 0;
    int max_mbs = 16, max_vpp = 8, max_lighter = 2;
    double min_mfu = 0;
    std::vector<std::string> fix;
    bool json = false, progress = false, cross_node_tp = false, no_memory_pruning = false;
    bool no_sim = false;
    int sim_top = 0;
    CLI::Option* cluster_opt = nullptr;
    CLI::Option* dtype_opt = nullptr;
    CLI::Option* moe_flex_backend_opt = nullptr;
    CLI::Option* moe_dispatcher_opt = nullptr;
    CLI::Option* nodes_opt = nullptr;
    CLI::Option* gpus_opt = nullptr;
    CLI::Option* order_opt = nullptr;
};

search::SearchRequest build_request(const SearchFlags& f) {
    search::SearchRequest req;
    req.model = load_model(f.model, "<flags>", "--model");
    req.model_ref = f.model;
    // The same default cluster as the layout flags: the CPU host for tiny models.
    req.cluster_ref = f.cluster_opt->count()
                          ? f.cluster
                          : (req.model.hidden_size <= 1024 ? "cpu-local" : "dgx-h100");
    req.cluster = load_cluster(req.cluster_ref, "<flags>", "--cluster");
    auto& o = req.options;
    if (f.nodes_opt->count()) {
        const long long g = static_cast<long long>(f.nodes) * req.cluster.allocation_gpus();
        if (f.nodes < 1 || g > (1 << 22))
            throw InputError("<flags>", "--nodes", "must be between 1 and 4M GPUs");
        if (f.gpus_opt->count() && g != f.gpus) {
            throw InputError("<flags>", "--nodes",
                             std::to_string(f.nodes) + " nodes × " +
                                 std::to_string(req.cluster.allocation_gpus()) +
                                 " GPUs per node disagrees with --gpus " + std::to_string(f.gpus));
        }
        o.gpus = static_cast<int>(g);
    } else if (f.gpus_opt->count()) {
        o.gpus = f.gpus;
    } else {
        throw InputError("<flags>", "--gpus", "the world size is required (--gpus or --nodes)");
    }
    o.global_batch_size = f.gbs;
    o.seq_length = f.seq;
    o.dtype = req.cluster.gpu.default_training_dtype();
    if (f.dtype_opt->count() && !parse_dtype(f.dtype, o.dtype)) {
        throw InputError("<flags>", "--dtype",
                         "unknown dtype '" + f.dtype + "' (fp32, tf32, bf16, fp16, fp8, fp4)");
    }
    // The speed-only knobs: a flag given pins the knob, a flag left out lets the search
    // choose it per candidate (core/search/tuning.h).
    search::KnobPins& k = o.knobs;
    if (!f.tp_overlap.empty()) {
        TpOverlap v{};
        if (!parse_tp_overlap(f.tp_overlap, v)) {
            throw InputError("<flags>", "--tp-comm-overlap", "'" + f.tp_overlap + "' is not none, pipe or ring");
        }
        k.tp_comm_overlap = v;
    }
    if (!parse_grad_reduce_dtype(f.grad_reduce, o.grad_reduce_in_bf16)) {
        throw InputError("<flags>", "--grad-reduce-dtype", "'" + f.grad_reduce + "' is not fp32 or bf16");
    }
    if (!f.fsdp_fp32_shards.empty()) o.fsdp_fp32_shards = parse_on_off_flag(f.fsdp_fp32_shards, "--fsdp-fp32-shards");
    if (!f.recompute_modules.empty()) {
        std::vector<RecomputeModule> modules;
        parse_recompute_modules_flag(f.recompute_modules, modules);
        if (!rules::mla_up_proj_needs_mla(modules, req.model.uses_mla)) {
            throw InputError("<flags>", "--recompute-modules",
                             "mla_up_proj needs multi-latent attention; model " + req.model.name + " has none");
        }
        k.recompute_modules = std::move(modules);
    }
    const bool dispatcher_given = f.moe_dispatcher_opt->count() > 0;
    const bool backend_given = f.moe_flex_backend_opt->count() > 0;
    if (dispatcher_given || backend_given) {
        MoeDispatcher d = MoeDispatcher::AllToAll;
        MoeFlexBackend b = MoeFlexBackend::DeepEP;
        parse_moe_dispatch_flags(dispatcher_given ? std::optional(f.moe_dispatcher) : std::nullopt,
                                 backend_given ? std::optional(f.moe_flex_backend) : std::nullopt, d, b);
        k.moe_dispatcher = d;
        if (backend_given) k.moe_flex_backend = b;
    }
    if (!f.moe_a2a_overlap.empty()) k.moe_a2a_overlap = parse_on_off_flag(f.moe_a2a_overlap, "--moe-a2a-overlap");
    if (!f.overlap_grad_reduce.empty())
        k.overlap_grad_reduce = parse_on_off_flag(f.overlap_grad_reduce, "--overlap-grad-reduce");
    if (!f.overlap_param_gather.empty())
        k.overlap_param_gather = parse_on_off_flag(f.overlap_param_gather, "--overlap-param-gather");
    if (k.overlap_param_gather.value_or(false) && !k.overlap_grad_reduce.value_or(true)) {
        throw InputError("<flags>", "--overlap-param-gather", "on needs --overlap-grad-reduce on (Megatron-LM asserts it)");
    }
    if (!f.cuda_graphs.empty()) {
        CudaGraphs g{};
        if (!parse_cuda_graphs(f.cuda_graphs, g)) {
            throw InputError("<flags>", "--cuda-graphs", "'" + f.cuda_graphs + "' is not none, per-layer or full-iteration");
        }
        k.cuda_graphs = g;
    }
    if (f.order_opt->count()) o.order = f.order;
    for (const auto& a : f.fix) search::apply_fix(a, o.fixed);
    if (f.max_tp < 0) throw InputError("<flags>", "--max-tp", "must be at least 1");
    o.max_tp = f.max_tp;
    o.allow_cross_node_tp = f.cross_node_tp;
    if (f.min_mfu < 0 || f.min_mfu > 1)
        throw InputError("<flags>", "--min-mfu", "is a fraction between 0 and 1");
    o.min_mfu = f.min_mfu;
    if (f.max_mbs < 1) throw InputError("<flags>", "--max-mbs", "must be at least 1");
    if (f.max_vpp < 1) throw InputError("<flags>", "--max-vpp", "must be at least 1");
    if (f.max_lighter < 0) throw InputError("<flags>", "--max-lighter-ends", "must be at least 0");
    o.max_micro_batch = f.max_mbs;
    o.max_vpp = f.max_vpp;
    o.max_end_lighter_layers = f.max_lighter;
    o.top_k = f.top;
    if (f.threads < 0)
        throw InputError("<flags>", "--threads", "must be at least 1 (0: every core)");
    o.threads = f.threads;
    o.memory_pruning = !f.no_memory_pruning;
    return req;
}

// A bar on stderr, redrawn in place: "[#####.....]  45%  1.23M/2.73M layouts".
void draw_progress(std::int64_t done, std::int64_t total) {
    constexpr int kWidth = 30;
    const double frac = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    const int filled = static_cast<int>(frac * kWidth);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar += std::string(static_cast<std::size_t>(kWidth - filled), '.');
    std::fprintf(stderr, "\r[%s] %3d%%  %s/%s layouts", bar.c_str(), static_cast<int>(frac * 100),
                 human_count(static_cast<double>(done)).c_str(),
                 human_count(static_cast<double>(total)).c_str());
    std::fflush(stderr);
}

std::string rejected_text(const search::SearchResult& r) {
    std::string s;
    for (const auto& [reason, n] : r.rejected) {
        s += (s.empty() ? "" : ", ") + reason + " " + std::to_string(n);
    }
    return s.empty() ? "none" : s;
}

void print_human(const search::SearchRequest& req, const search::SearchResult& r) {
    const auto& o = req.options;
    std::cout << "Search: " << req.model.name << " on " << o.gpus << " × " << req.cluster.gpu.kind
              << " (" << req.cluster.name << "), global batch " << o.global_batch_size << ", seq "
              << o.seq_length << ", " << to_string(o.dtype) << "\n"
              << "  " << r.space_size << " layouts in " << human_seconds(r.elapsed_s) << " on "
              << r.threads << " threads: " << r.evaluated << " feasible, " << r.cost_model_calls
              << " cost-model estimates" << (r.cancelled ? " (cancelled)" : "")
              << "; ranked by " << r.ranked_by << "\n";
    std::cout << "  rank  " << pad_left("tokens/s", 10) << pad_left("step", 12)
              << pad_left("MFU", 7) << pad_left("peak/GPU", 11) << "  layout\n";
    for (std::size_t i = 0; i < r.results.size(); ++i) {
        const auto& h = r.results[i];
        char mfu[16];
        std::snprintf(mfu, sizeof mfu, "%.1f%%", 100.0 * h.mfu);
        std::cout << "  " << pad_right(std::to_string(i + 1), 4)
                  << pad_left(human_count(h.tokens_per_s), 10)
                  << pad_left(human_seconds(h.step_time_s), 12) << pad_left(mfu, 7)
                  << pad_left(human_bytes(static_cast<double>(h.peak_bytes)), 11) << "  "
                  << search::candidate_label(h.candidate) << "\n";
    }
    std::cout << "Rejected:\n";
    for (const auto& [reason, n] : r.rejected) {
        std::cout << "  " << pad_right(reason, 28) << pad_left(std::to_string(n), 12) << "\n";
    }
    if (r.rejected.empty()) std::cout << "  none\n";
}

}  // namespace

Verb add_search_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "search", "Find the best layouts for a model, a cluster, a world size and a global batch");
    auto f = std::make_shared<SearchFlags>();
    cmd->add_option("--model", f->model,
                    "Model preset (meshwork-cli presets) or a Hugging Face config.json")
        ->required();
    f->cluster_opt = cmd->add_option("--cluster", f->cluster, "Cluster preset or cluster JSON");
    f->gpus_opt = cmd->add_option("--gpus", f->gpus, "World size (GPUs)");
    f->nodes_opt = cmd->add_option("--nodes", f->nodes, kNodesFlagHelp);
    cmd->add_option("--gbs", f->gbs, "Global batch size (sequences)")->required();
    cmd->add_option("--seq", f->seq, "Sequence length (tokens)")->required();
    f->dtype_opt =
        cmd->add_option("--dtype", f->dtype, "Training precision: bf16, fp16, fp8, fp4, fp32");
    // Speed-only knobs: searched per candidate unless given (docs/search.md, "Speed-only knobs").
    cmd->add_option("--tp-comm-overlap", f->tp_overlap,
                    "Pin the tensor-parallel communication overlap of the candidates with sequence "
                    "parallelism (Megatron-LM's --tp-comm-overlap): none, pipe, ring (default: searched)");
    cmd->add_option("--grad-reduce-dtype", f->grad_reduce,
                    "Precision of gradient accumulation and the data-parallel reduction in bf16/fp8 "
                    "training for every candidate: fp32 or bf16 (default fp32)");
    cmd->add_option("--fsdp-fp32-shards", f->fsdp_fp32_shards,
                    "ZeRO-3 candidates keep their shards as PyTorch FSDP does (the fp32 master is the shard, 16 "
                    "bytes a parameter; torchtitan, llm-foundry): on, off (default off: a bf16 shard beside the "
                    "fp32 master, Megatron-FSDP's and DeepSpeed's 18)");
    cmd->add_option("--recompute-modules", f->recompute_modules,
                    "Pin the modules that candidates with selective recomputation recompute, comma-separated, "
                    "as Megatron-LM's --recompute-modules: " + recompute_module_names() +
                        " (default: searched)");
    f->moe_dispatcher_opt = cmd->add_option("--moe-dispatcher", f->moe_dispatcher,
                                            "Pin the MoE token dispatch (Megatron-LM's --moe-token-dispatcher-type): "
                                            "allgather, alltoall, flex (default: searched)");
    f->moe_flex_backend_opt = cmd->add_option("--moe-flex-backend", f->moe_flex_backend,
                                              "Pin the library of the flex dispatcher: deepep, hybridep (needs "
                                              "--moe-dispatcher flex; default: searched)");
    cmd->add_option("--moe-a2a-overlap", f->moe_a2a_overlap,
                    "Pin the MoE dispatch and combine beside another micro-batch's compute where Megatron-LM "
                    "runs it (ep > 1, vpp > 1 with pp > 1, no full recompute): on, off (default: searched)");
    cmd->add_option("--overlap-grad-reduce", f->overlap_grad_reduce,
                    "Pin the data-parallel gradient reduction beside the backward (Megatron-LM's "
                    "--overlap-grad-reduce): on, off (default: searched)");
    cmd->add_option("--overlap-param-gather", f->overlap_param_gather,
                    "Pin the distributed optimizer's parameter gather beside the forward (Megatron-LM's "
                    "--overlap-param-gather): on, off (default: searched)");
    cmd->add_option("--cuda-graphs", f->cuda_graphs,
                    "Pin CUDA-graph capture (Megatron-LM's --cuda-graph-impl): none, per-layer (not with full "
                    "recomputation: those candidates keep none), full-iteration (default: searched where the "
                    "capture rules allow it)");
    f->order_opt = cmd->add_option("--order", f->order,
                                   "Axis order for rank mapping (default tp-cp-ep-dp-pp)");
    cmd->add_option("--top", f->top, "How many layouts to print (default 10)");
    cmd->add_option("--out", f->out, "Write the best layout to this file (atomically)");
    cmd->add_flag(
        "--json", f->json,
        "Print JSON: evaluated, rejected (counts by reason), results[] (layout, step_time_s, "
        "mfu, peak_bytes) best first");
    cmd->add_option("--max-tp", f->max_tp, "Largest tensor-parallel size to consider");
    cmd->add_flag("--allow-cross-node-tp", f->cross_node_tp, "Let tensor parallelism span nodes");
    cmd->add_option("--fix", f->fix,
                    std::string("Pin a setting, e.g. --fix tp=8 --fix pp=16 (keys: ") +
                        search::fix_keys() + ")");
    cmd->add_option("--min-mfu", f->min_mfu,
                    "Reject layouts below this MFU (a fraction, e.g. 0.4)");
    cmd->add_option("--threads", f->threads, "Worker threads (default: every core)");
    cmd->add_option("--max-mbs", f->max_mbs, "Largest micro-batch size to consider (default 16)");
    cmd->add_option("--max-vpp", f->max_vpp,
                    "Largest virtual pipeline size to consider (default 8)");
    cmd->add_option(
        "--max-lighter-ends", f->max_lighter,
        "Layers the first and last pipeline stages may hold fewer than the others (default 2)");
    cmd->add_flag("--no-sim", f->no_sim,
                  "Rank by the analytical cost model alone (default: the simulator re-ranks the "
                  "front-runners)");
    cmd->add_option("--sim-top", f->sim_top,
                    "Front-runners the simulator re-ranks (default 4 × --top)");
    cmd->add_flag("--progress", f->progress,
                  "Draw a progress bar on stderr even when it is not a terminal");
    cmd->add_flag(
        "--no-memory-pruning", f->no_memory_pruning,
        "Cost every layout instead of skipping those known not to fit (same results, slower)");
    cmd->footer(
        "Exit codes: 0 success, 2 bad input (an unknown --fix key, impossible constraints, a world "
        "size that does not fill whole nodes (or hosts), or no feasible layout: the counts by reason and "
        "the closest candidates follow).");
    return {cmd, [f]() {
                const search::SearchRequest req = build_request(*f);
                const bool bar = f->progress || isatty(STDERR_FILENO) == 1;
                search::SearchHooks hooks;
                if (bar) hooks.progress = draw_progress;
                if (!f->no_sim) {
                    hooks.rerank = search::simulator_rerank();
                    hooks.rerank_name = search::kSimulatorRerankName;
                    hooks.rerank_top = f->sim_top;
                }
                const search::SearchResult r = search::run_search(req, hooks);
                if (bar) std::fputc('\n', stderr);
                if (f->json) {
                    std::cout << search::search_result_to_json(r).dump(2) << "\n";
                } else if (!r.results.empty()) {
                    print_human(req, r);
                }
                if (r.results.empty()) {
                    std::cerr << "error: <flags>: search: no feasible layout for " << req.model.name
                              << " on " << req.options.gpus << " GPUs at global batch "
                              << req.options.global_batch_size << " (" << r.space_size
                              << " layouts; rejected: " << rejected_text(r) << ")\n";
                    for (const auto& m : r.closest) {
                        std::cerr << "  closest: " << search::candidate_label(m.candidate)
                                  << ": peak " << human_bytes(static_cast<double>(m.peak_bytes))
                                  << " per GPU, needs "
                                  << human_bytes(static_cast<double>(m.overflow_bytes))
                                  << " more\n";
                    }
                    return kExitBadInput;
                }
                if (!f->out.empty()) {
                    save_layout(r.results.front().layout, f->out);
                    if (!f->json) std::cout << "Best layout written to " << f->out << "\n";
                }
                return kExitOk;
            }};
}

namespace {
Verb make_search_verb(CLI::App& app) { return add_search_verb(app); }
}  // namespace
MESHWORK_REGISTER_VERB(70, make_search_verb);

}  // namespace meshwork::cli
