#include "app/cli/layout_flags.h"

#include "core/common/error.h"

namespace meshwork::cli {

struct LayoutFlags::Values {
    std::string file;
    std::string model, cluster, order, schedule, recompute, recompute_modules, dtype, layers_per_stage, flash, tp_overlap, grad_reduce;
    std::string fsdp_fp32_shards;
    std::string overlap_grad, overlap_param, moe_dispatcher, moe_flex_backend, moe_a2a_overlap;
    std::string fp8_recipe, cuda_graphs, cuda_graph_modules, attention_kernel;
    int gpus = 0, nodes = 0, tp = 0, pp = 0, dp = 0, cp = 0, ep = 0, etp = 0, vpp = 0;
    int mbs = 0, gbs = 0, seq = 0, zero = 0, zero_replicas = 0, first_stage = 0, last_stage = 0, offload_activation_layers = 0;
    double moe_rank_capacity_factor = 0;
    bool sp = false, no_sp = false, account_embedding = false, account_loss = false;
    std::map<std::string, CLI::Option*> options;
};

LayoutFlags::LayoutFlags(CLI::App* c) : v_(std::make_shared<Values>()) {
    auto& v = *v_;
    auto add = [&](const std::string& name, auto& target, const std::string& help) {
        v.options[name] = c->add_option(name, target, help);
    };
    // Every help line says the default that applies when neither the flag nor the layout
    // file sets the value; the figures come from the structs that own them.
    const TrainingConfig t;
    const MeshShape m;
    const auto one = std::to_string(m.tp);
    v.options["layout"] =
        c->add_option("layout", v.file, "Layout file (docs/layout-format.md); flags override it");
    add("--model", v.model,
        "Model preset (meshwork-cli presets) or a Hugging Face config.json "
        "(required without a layout file)");
    add("--cluster", v.cluster,
        "Cluster preset or cluster JSON (default without a layout file: "
        "cpu-local for models of hidden size <= 1024, else dgx-h100)");
    add("--gpus", v.gpus, "World size (GPUs) (default: tp·pp·cp·dp)");
    add("--nodes", v.nodes, kNodesFlagHelp);
    add("--tp", v.tp, "Tensor-parallel size (default " + one + ")");
    add("--pp", v.pp, "Pipeline-parallel size (default " + one + ")");
    add("--dp", v.dp, "Data-parallel size (default: world / (tp·pp·cp))");
    add("--cp", v.cp, "Context-parallel size (default " + one + ")");
    add("--ep", v.ep, "Expert-parallel size (default " + one + ")");
    add("--etp", v.etp, "Tensor-parallel size inside experts (default " + one + ")");
    add("--vpp", v.vpp,
        "Virtual pipeline stages per rank (interleaved schedule) (default " + one + ")");
    add("--order", v.order, "Axis order for rank mapping (default " + m.order + ")");
    add("--mbs", v.mbs,
        "Micro-batch size (sequences) (default " + std::to_string(t.micro_batch_size) + ")");
    add("--gbs", v.gbs,
        "Global batch size (sequences) (default: mbs·dp, one micro-batch per step)");
    add("--seq", v.seq, "Sequence length (tokens) (default " + std::to_string(t.seq_length) + ")");
    add("--schedule", v.schedule,
        "Pipeline schedule: gpipe, 1f1b, interleaved (default " + to_string(t.schedule) +
            "; interleaved when --vpp > 1)");
    add("--recompute", v.recompute,
        "Activation recomputation: none, selective (Megatron: core attention), full, selective-op (torchtitan's op-level SAC) (default " + to_string(t.recompute) + ")");
    add("--recompute-modules", v.recompute_modules,
        "Modules recomputed under selective recomputation, comma-separated, as Megatron-LM's "
        "--recompute-modules: " + recompute_module_names() +
            "; implies --recompute selective (default: core_attn alone, Megatron's default; \"\" restores it)");
    add("--zero", v.zero,
        "ZeRO stage 0-3; 1 = Megatron's distributed optimizer (default " +
            std::to_string(t.zero_stage) + ")");
    add("--zero-replicas", v.zero_replicas,
        "Hybrid sharding (HSDP): replicas of the ZeRO shard group, which then spans dp/N data-parallel "
        "ranks (Megatron-LM's --num-distributed-optimizer-instances, torchtitan's "
        "data_parallel_replicate_degree) (default " + std::to_string(t.zero_replicas) + ": one group over all)");
    add("--fsdp-fp32-shards", v.fsdp_fp32_shards,
        std::string("ZeRO-3 shards as PyTorch FSDP keeps them under mixed precision (torchtitan, llm-foundry): on, "
                    "each shard the fp32 master, no training-precision shard beside it; off, a bf16 shard beside "
                    "the fp32 master as Megatron-FSDP and DeepSpeed keep it (needs --zero 3) (default ") +
            (t.fsdp_fp32_shards ? "on" : "off") + ")");
    add("--dtype", v.dtype,
        "Training precision: bf16, fp16, fp8, fp4 (NVFP4 GEMMs, Blackwell), fp32 (default " + to_string(t.dtype) +
            "; fp32 on a cluster without a bf16 peak, e.g. cpu-local)");
    add("--flash-attention", v.flash,
        std::string("Fused (flash) attention: on, or off for unfused "
                    "attention that stores the s×s scores, as 2022-era runs (default ") +
            (t.flash_attention ? "on" : "off") + ")");
    add("--grad-reduce-dtype", v.grad_reduce,
        std::string("Precision of gradient accumulation and the data-parallel reduction in "
                    "bf16/fp8 training: fp32 (Megatron-LM's default) or bf16 (Megatron-LM's "
                    "--grad-reduce-in-bf16, Megatron-Bridge's performance recipes) (default ") +
            (t.grad_reduce_in_bf16 ? "bf16" : "fp32") + ")");
    add("--tp-comm-overlap", v.tp_overlap,
        "Tensor-parallel communication tiled against the GEMMs (Megatron-LM's "
        "--tp-comm-overlap, needs --sp): none, pipe (one tile exposed), ring (none exposed) "
        "(default " + to_string(ParallelConfig{}.tp_comm_overlap) + ")");
    const ParallelConfig par;
    add("--overlap-grad-reduce", v.overlap_grad,
        std::string("Data-parallel gradient reduction per model chunk beside the backward "
                    "(Megatron-LM's --overlap-grad-reduce): on, off (default ") +
            (par.overlap_grad_reduce ? "on" : "off") + ")");
    add("--overlap-param-gather", v.overlap_param,
        std::string("Distributed optimizer's parameter gather beside the next forwards "
                    "(Megatron-LM's --overlap-param-gather, needs --overlap-grad-reduce): on, off "
                    "(default ") +
            (par.overlap_param_gather ? "on" : "off") + "; off with --overlap-grad-reduce off)");
    add("--moe-dispatcher", v.moe_dispatcher,
        "MoE token dispatch (Megatron-LM's --moe-token-dispatcher-type): allgather, alltoall "
        "(one copy per token and expert), flex (DeepEP/HybridEP: one copy per token and "
        "destination node across nodes, fanned out over NVLink) (default " +
            to_string(par.moe_dispatcher) + ")");
    add("--moe-flex-backend", v.moe_flex_backend,
        "Library of the flex dispatcher (Megatron-LM's --moe-flex-dispatcher-backend, needs "
        "--moe-dispatcher flex): deepep, hybridep (default " + to_string(par.moe_flex_backend) + ")");
    add("--moe-a2a-overlap", v.moe_a2a_overlap,
        std::string("MoE dispatch and combine of one micro-batch beside another's compute "
                    "(Megatron-LM's --overlap-moe-expert-parallel-comm; needs ep > 1, alltoall or "
                    "flex, vpp > 1 with pp > 1, no full recompute): on, off (default ") +
            (par.moe_a2a_overlap ? "on" : "off") + ")");
    add("--fp8-recipe", v.fp8_recipe,
        "Scaling of the fp8 GEMMs with --dtype fp8 (Megatron-LM's --fp8-recipe): tensorwise (one "
        "scale per tensor from its amax, current scaling), delayed (one scale per tensor from the "
        "amax history, Megatron's default), blockwise (1x128 / 128x128 blocks), "
        "mxfp8 (1x32 blocks, Blackwell), rowwise (one scale per row, torchao's rowwise) (default " +
            to_string(t.fp8_recipe) + ")");
    add("--attention-kernel", v.attention_kernel,
        "Fused attention kernel the framework runs: fused (Transformer Engine's: cuDNN, or "
        "FlashAttention-3 on Hopper; Megatron-LM), sdpa (PyTorch's scaled_dot_product_attention: "
        "FlashAttention-2 on Hopper and Ampere, cuDNN on Blackwell; torchtitan) (default " +
            to_string(t.attention_kernel) + ")");
    add("--cuda-graphs", v.cuda_graphs,
        "CUDA-graph capture (Megatron-LM's --cuda-graph-impl): none, per-layer (local or "
        "transformer_engine: each layer's kernels, not a dropless MoE layer's experts), "
        "full-iteration (the whole forward-backward) (default " + to_string(t.cuda_graphs) + ")");
    add("--cuda-graph-modules", v.cuda_graph_modules,
        "What per-layer CUDA graphs capture (Megatron-LM's --cuda-graph-modules), comma-separated: "
        "attn, mlp, moe, moe_router, moe_preprocess, mamba; the rest of the layer is launched from "
        "the host; \"\" the whole layer (default \"\")");
    add("--moe-rank-capacity-factor", v.moe_rank_capacity_factor,
        "Per-rank token budget of HybridEP, times the average routed tokens (Megatron-LM's "
        "--moe-expert-rank-capacity-factor; needs --moe-dispatcher flex --moe-flex-backend hybridep): "
        "sync-free experts with static shapes that CUDA graphs capture; 0 none (default 0)");
    add("--offload-activation-layers", v.offload_activation_layers,
        "Copy the activations of the first N transformer layers to host memory after their forward "
        "and back before their backward (Megatron-LM's --cpu-offloading-num-layers; needs pp 1, "
        "recompute none, no per-layer CUDA graphs, fewer than the model's layers) (default " +
            std::to_string(t.offload_activation_layers) + ")");
    add("--layers-per-stage", v.layers_per_stage,
        "Uneven pipeline split, e.g. 7,8,8,7 (default: even, "
        "the end stages one layer less when it does not divide)");
    add("--first-stage-layers", v.first_stage,
        "Layers on the first pipeline rank, the others split evenly (Megatron-LM's "
        "--decoder-first-pipeline-num-layers) (default: even split)");
    add("--last-stage-layers", v.last_stage,
        "Layers on the last pipeline rank (Megatron-LM's --decoder-last-pipeline-num-layers) "
        "(default: even split)");
    v.options["--account-for-embedding"] = c->add_flag(
        "--account-for-embedding", v.account_embedding,
        "Count the embedding as a layer in the pipeline split: the first chunk holds one layer "
        "less (Megatron-LM's --account-for-embedding-in-pipeline-split) (default off)");
    v.options["--account-for-loss"] = c->add_flag(
        "--account-for-loss", v.account_loss,
        "Count the LM head and loss as a layer in the pipeline split: the last chunk holds one "
        "layer less (Megatron-LM's --account-for-loss-in-pipeline-split) (default off)");
    v.options["--sp"] = c->add_flag("--sp", v.sp,
                                    std::string("Sequence parallelism with TP (default ") +
                                        (ParallelConfig{}.sequence_parallel ? "on" : "off") + ")");
    v.options["--no-sp"] = c->add_flag("--no-sp", v.no_sp, "No sequence parallelism");
    v.options["--sp"]->excludes(v.options["--no-sp"]);
}

std::string LayoutFlags::source() const {
    return v_->options.at("layout")->count() ? v_->file : std::string("<flags>");
}

LayoutOverrides LayoutFlags::overrides() const {
    const auto& v = *v_;
    auto given = [&](const std::string& name) { return v.options.at(name)->count() > 0; };
    LayoutOverrides o;
    if (given("--model")) o.model = v.model;
    if (given("--cluster")) o.cluster = v.cluster;
    if (given("--gpus")) o.gpus = v.gpus;
    if (given("--nodes")) o.nodes = v.nodes;
    if (given("--tp")) o.tp = v.tp;
    if (given("--pp")) o.pp = v.pp;
    if (given("--dp")) o.dp = v.dp;
    if (given("--cp")) o.cp = v.cp;
    if (given("--ep")) o.ep = v.ep;
    if (given("--etp")) o.etp = v.etp;
    if (given("--vpp")) o.vpp = v.vpp;
    if (given("--order")) o.order = v.order;
    if (given("--mbs")) o.mbs = v.mbs;
    if (given("--gbs")) o.gbs = v.gbs;
    if (given("--seq")) o.seq = v.seq;
    if (given("--schedule")) o.schedule = v.schedule;
    if (given("--recompute")) o.recompute = v.recompute;
    if (given("--recompute-modules")) o.recompute_modules = v.recompute_modules;
    if (given("--zero")) o.zero = v.zero;
    if (given("--zero-replicas")) o.zero_replicas = v.zero_replicas;
    if (given("--fsdp-fp32-shards")) o.fsdp_fp32_shards = v.fsdp_fp32_shards;
    if (given("--dtype")) o.dtype = v.dtype;
    if (given("--flash-attention")) o.flash_attention = v.flash;
    if (given("--tp-comm-overlap")) o.tp_comm_overlap = v.tp_overlap;
    if (given("--overlap-grad-reduce")) o.overlap_grad_reduce = v.overlap_grad;
    if (given("--overlap-param-gather")) o.overlap_param_gather = v.overlap_param;
    if (given("--moe-dispatcher")) o.moe_dispatcher = v.moe_dispatcher;
    if (given("--moe-flex-backend")) o.moe_flex_backend = v.moe_flex_backend;
    if (given("--moe-a2a-overlap")) o.moe_a2a_overlap = v.moe_a2a_overlap;
    if (given("--fp8-recipe")) o.fp8_recipe = v.fp8_recipe;
    if (given("--cuda-graphs")) o.cuda_graphs = v.cuda_graphs;
    if (given("--cuda-graph-modules")) o.cuda_graph_modules = v.cuda_graph_modules;
    if (given("--attention-kernel")) o.attention_kernel = v.attention_kernel;
    if (given("--offload-activation-layers")) o.offload_activation_layers = v.offload_activation_layers;
    if (given("--moe-rank-capacity-factor")) o.moe_rank_capacity_factor = v.moe_rank_capacity_factor;
    if (given("--first-stage-layers")) o.first_stage_layers = v.first_stage;
    if (given("--last-stage-layers")) o.last_stage_layers = v.last_stage;
    o.account_for_embedding = given("--account-for-embedding");
    o.account_for_loss = given("--account-for-loss");
    if (given("--grad-reduce-dtype")) o.grad_reduce_dtype = v.grad_reduce;
    if (given("--sp")) o.sequence_parallel = true;
    if (given("--no-sp")) o.sequence_parallel = false;
    if (given("--layers-per-stage")) {
        std::vector<int> split;
        std::string cur;
        for (char ch : v.layers_per_stage + ",") {
            if (ch == ',') {
                try {
                    std::size_t used = 0;
                    const int n = std::stoi(cur, &used);
                    if (used != cur.size()) throw std::invalid_argument(cur);
                    split.push_back(n);
                } catch (const std::exception&) {
                    throw InputError("<flags>", "--layers-per-stage",
                                     "'" + cur + "' is not an integer in '" + v.layers_per_stage +
                                         "'");
                }
                cur.clear();
            } else {
                cur += ch;
            }
        }
        o.layers_per_stage = split;
    }
    return o;
}

Layout LayoutFlags::build() const {
    std::optional<std::string> file;
    if (v_->options.at("layout")->count()) file = v_->file;
    return build_layout(file, overrides());
}

}  // namespace meshwork::cli
