// The layout the arguments describe beyond the model: the world and its axes, the pipeline
// split and schedule, the overlaps, MoE dispatch, offload and the training settings:
// MegatronParser, megatron_import_parser.h.
#include "core/export/megatron_import_parser.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include "core/common/error.h"
#include "core/export/canonical_layout.h"
#include "core/export/import_common.h"
#include "core/export/megatron_flags.h"
#include "core/export/megatron_hybrid.h"
#include "core/export/model_match.h"
#include "core/export/moe_layer_pattern.h"
#include "core/export/pipeline_layout.h"
#include "core/export/shell_script.h"
#include "core/layout/layout_json.h"
#include "core/layout/pipeline_split.h"
#include "core/model/hf_hybrid_config.h"
#include "core/schedule/pipeline_schedule.h"

namespace meshwork::megatron_import_detail {

void MegatronParser::build() {
    auto& l = result_.layout;
    bool vocab_known = true;
    const ModelSpec spec = given_model_ ? *given_model_ : model(vocab_known);
    if (!issues_.empty()) return;
    const ModelMatch match = resolve_model(spec, vocab_known,
                                           options_.name.empty() ? "imported" : options_.name,
                                           file_, "model");
    l.model = match.model;
    l.model_ref = match.preset;
    if (given_model_) {
        // The caller names the model (--model, or the preset it found): no note here.
    } else if (!match.preset.empty()) {
        result_.notes.push_back("model matches the bundled preset " + match.preset);
    } else {
        result_.notes.push_back("model written inline (model_type " + l.model.family +
                                "): no bundled preset has this architecture");
    }
    apply_import_defaults(l, options_, file_, "Megatron-LM arguments", result_.notes);
    // Megatron-LM's multimodal models (examples/multimodal: --vision-model-type, --img-h)
    // put a vision encoder before the language model; Meshwork models the language model.
    for (const char* vision : {"--vision-model-type", "--img-h"}) {
        if (!megatron_arg_given(vision)) continue;
        result_.warnings.push_back(std::string(vision) +
                                   ": a multimodal model; its vision encoder is not modelled, the layout "
                                   "holds the language model only");
        break;
    }

    auto& mesh = l.parallel.mesh;
    mesh.tp = static_cast<int>(integer("--tensor-model-parallel-size", 1, 1, kMaxAxis));
    mesh.pp = static_cast<int>(integer("--pipeline-model-parallel-size", 1, 1, kMaxAxis));
    mesh.cp = static_cast<int>(integer("--context-parallel-size", 1, 1, kMaxAxis));
    mesh.ep = static_cast<int>(integer("--expert-model-parallel-size", 1, 1, kMaxAxis));
    // Megatron: the expert TP size defaults to the dense one. Dense models have no
    // expert layers, where Meshwork's convention is 1.
    mesh.etp = static_cast<int>(
        integer("--expert-tensor-parallel-size", l.model.is_moe() ? mesh.tp : 1, 1, kMaxAxis));
    if (megatron_deepspeed_moe() && l.model.is_moe()) {
        // DeepSpeed-MoE: experts split over --moe-expert-parallel-size ranks, tensor-parallel
        // only with --enable-expert-tensor-parallelism (Megatron-DeepSpeed arguments.py:1151, :1159).
        conflict("--expert-model-parallel-size", "--moe-expert-parallel-size", "one expert-parallel size");
        mesh.ep = static_cast<int>(integer("--moe-expert-parallel-size", mesh.ep, 1, kMaxAxis));
        mesh.etp = has("--enable-expert-tensor-parallelism") ? mesh.tp : 1;
    }
    if (has("--use-tp-pp-dp-mapping")) mesh.order = kTpPpDpAxisOrder;
    l.parallel.sequence_parallel = has("--sequence-parallel") && mesh.tp > 1;
    if (has("--sequence-parallel") && mesh.tp == 1) {
        result_.notes.push_back("--sequence-parallel with tensor-parallel size 1 has no effect");
    }
    if (has("--tp-comm-overlap")) {
        // Megatron-LM turns SP off at tp 1, then asserts SP for --tp-comm-overlap
        // (training/arguments.py:1436-1442). Transformer Engine's default methods
        // (module/base.py:350-359) ring-exchange the all-gathers and bulk-overlap the
        // backward reduce-scatters; only the forward reduce-scatters are pipelined: read
        // as "ring".
        if (!l.parallel.sequence_parallel) {
            add(field("--tp-comm-overlap"),
                "needs --sequence-parallel with --tensor-model-parallel-size > 1 "
                "(Megatron-LM asserts it)");
        }
        l.parallel.tp_comm_overlap = TpOverlap::Ring;
    }

    world(l);
    pipeline(l);
    training(l);
    if (!issues_.empty()) return;
    l = canonical_layout(std::move(l));
}

long long MegatronParser::slurm_count(const std::string& option, long long fallback, bool* found) {
    if (found != nullptr) *found = srun_.count(option) != 0 || script_->sbatch.count(option) != 0;
    std::string value;
    std::string where_text;
    if (const auto it = srun_.find(option); it != srun_.end()) {
        value = it->second;
        where_text = "srun " + option;
    } else if (const auto jt = script_->sbatch.find(option); jt != script_->sbatch.end()) {
        value = jt->second;
        where_text = "#SBATCH " + option;
    } else {
        return fallback;
    }
    // --gpus-per-node=h100:8 names the GPU type before the count.
    if (const auto colon = value.rfind(':'); colon != std::string::npos) value = value.substr(colon + 1);
    long long v = 0;
    if (!parse_int_text(value, 1, kMaxGpus, v)) {
        add(where_text, "'" + value + "': expected a number");
        return fallback;
    }
    return v;
}

void MegatronParser::world(Layout& l) {
    auto& mesh = l.parallel.mesh;
    const std::optional<int> from_options = world_from_options(options_, l.cluster.allocation_gpus());
    long long world = 0;
    std::string source;
    const bool sbatch = script_->sbatch.count("--nodes") != 0;
    // A launcher's count that the script does not state (deepspeed without --num_nodes,
    // srun without -n or -N) is an assumption: a world size the user states wins over it.
    bool assumed = false;
    if (launched_) {
        world = nnodes_ * nproc_;
        source = "torchrun's " + std::to_string(nnodes_) + " nodes × " + std::to_string(nproc_) + " processes";
        if (nproc_ != l.cluster.allocation_gpus() && nnodes_ > 1) {
            result_.notes.push_back("torchrun starts " + std::to_string(nproc_) +
                                    " processes per node; the cluster has " +
                                    std::to_string(l.cluster.allocation_gpus()) + " GPUs per host");
        }
    } else if (launcher_deepspeed_) {
        if (!ds_gpus_given_) {
            nproc_ = l.cluster.allocation_gpus();
            result_.notes.push_back("deepspeed without --num_gpus uses every GPU of a node: " +
                                    std::to_string(nproc_) + " on " + l.cluster_ref);
        }
        if (!ds_nodes_given_) {
            nnodes_ = 1;
            if (!from_options) result_.notes.push_back("deepspeed without --num_nodes: one node (a hostfile is not read)");
        }
        assumed = !ds_nodes_given_ || !ds_gpus_given_;
        world = nnodes_ * nproc_;
        source = "deepspeed's " + std::to_string(nnodes_) + " nodes × " + std::to_string(nproc_) + " GPUs";
    } else if (launcher_srun_ || (from_variable_ && sbatch)) {
        // srun runs the training script once per task (one task per GPU).
        bool nodes_found = false;
        bool per_node_found = false;
        bool gpus_found = false;
        bool tasks_found = false;
        const long long nodes = slurm_count("--nodes", 1, &nodes_found);
        const long long per_node =
            slurm_count("--ntasks-per-node", slurm_count("--gpus-per-node", 1, &gpus_found), &per_node_found);
        world = slurm_count("--ntasks", nodes * per_node, &tasks_found);
        assumed = !tasks_found && (!nodes_found || (!per_node_found && !gpus_found));
        source = "srun's " + std::to_string(world) + " tasks";
    } else if (from_options) {
        world = *from_options;
    } else {
        add("world size", "the script does not say how many GPUs run it: launch it with torchrun "
                          "--nnodes N --nproc-per-node G (or srun, deepspeed, #SBATCH), or pass "
                          "--gpus/--nodes");
        return;
    }
    if (!source.empty() && from_options && *from_options != world) {
        if (assumed) {
            result_.notes.push_back(std::string(options_.gpus ? "--gpus" : "--nodes") + " states " +
                                    std::to_string(*from_options) + " GPUs: it wins over " + source +
                                    ", which the script does not state");
            world = *from_options;
            source.clear();
        } else {
            add(options_.gpus ? "--gpus" : "--nodes",
                std::to_string(*from_options) + " GPUs disagree with " + source);
        }
    }
    const long long model_parallel = static_cast<long long>(mesh.tp) * mesh.pp * mesh.cp;
    if (world % model_parallel != 0 && assumed && !source.empty()) {
        // The launcher's count is a default the script does not state: ask for the world.
        add("world size", "the script does not state how many GPUs run it (" + source +
                              " is the launcher's default), and that is not divisible by tp × pp × cp = " +
                              std::to_string(model_parallel) + ": pass --gpus N or --nodes N");
        return;
    }
    if (world % model_parallel != 0) {
        add(field("--tensor-model-parallel-size"),
            "the world size " + std::to_string(world) + (source.empty() ? "" : " (" + source + ")") +
                " is not divisible by tp × pp × cp = " + std::to_string(model_parallel));
        return;
    }
    l.gpus = static_cast<int>(world);
    mesh.dp = static_cast<int>(world / model_parallel);
}

void MegatronParser::pipeline(Layout& l) {
    const int pp = l.parallel.mesh.pp;
    const int layers = l.model.num_layers;
    if (has("--pipeline-model-parallel-layout")) {
        for (const char* f : {"--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank",
                              "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers",
                              "--account-for-embedding-in-pipeline-split",
                              "--account-for-loss-in-pipeline-split"}) {
            conflict("--pipeline-model-parallel-layout", f, "the layout states the split (validate_args)");
        }
        PipelineLayout parsed;
        std::string error;
        if (!parse_pipeline_layout(text("--pipeline-model-parallel-layout"), pp, parsed, error)) {
            add(field("--pipeline-model-parallel-layout"), error);
            return;
        }
        int sum = 0;
        for (int n : parsed.layers_per_chunk) sum += n;
        if (sum != layers) {
            add(field("--pipeline-model-parallel-layout"),
                "places " + std::to_string(sum) + " transformer layers; --num-layers is " + std::to_string(layers));
            return;
        }
        // validate_layer_layout asserts the m count is --mtp-num-layers.
        if (parsed.mtp_layers != l.model.mtp_layers) {
            add(field("--pipeline-model-parallel-layout"),
                "places " + std::to_string(parsed.mtp_layers) + " MTP layers; --mtp-num-layers is " +
                    std::to_string(l.model.mtp_layers) + " (Megatron-LM requires them equal)");
            return;
        }
        l.parallel.vpp = parsed.vpp;
        l.training.schedule = parsed.vpp > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
        l.placement.layers_per_stage = parsed.layers_per_chunk;
        return;
    }
    conflict("--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank",
             "Megatron-LM accepts one of them");
    const bool first = has("--decoder-first-pipeline-num-layers");
    const bool last = has("--decoder-last-pipeline-num-layers");
    const char* uneven_flag = first ? "--decoder-first-pipeline-num-layers" : "--decoder-last-pipeline-num-layers";
    const bool embedding = has("--account-for-embedding-in-pipeline-split");
    const bool loss = has("--account-for-loss-in-pipeline-split");
    const char* account_flag =
        embedding ? "--account-for-embedding-in-pipeline-split" : "--account-for-loss-in-pipeline-split";
    if ((first || last) && (embedding || loss)) {
        // transformer_config.py:2229-2239
        add(field(account_flag), std::string("cannot be combined with ") + uneven_flag + " (Megatron-LM refuses it)");
        return;
    }
    int vpp = 1;
    if (has("--num-layers-per-virtual-pipeline-stage")) {
        if (first || last) {
            // arguments.py:954-956
            add(field(uneven_flag), "needs --num-virtual-stages-per-pipeline-rank, not "
                                    "--num-layers-per-virtual-pipeline-stage (Megatron-LM asserts it)");
            return;
        }
        const long long per = integer("--num-layers-per-virtual-pipeline-stage", 1, 1, 10000);
        // The accounted embedding and loss count as layers here too (arguments.py:957-975).
        const long long counted = layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
        if (counted % pp != 0 || (counted / pp) % per != 0) {
            add(field("--num-layers-per-virtual-pipeline-stage"),
                "the layers per pipeline stage (" + std::to_string(counted) + " / " + std::to_string(pp) +
                    ") are not a multiple of it");
        } else {
            vpp = static_cast<int>((counted / pp) / per);
        }
    } else if (has("--num-virtual-stages-per-pipeline-rank")) {
        vpp = static_cast<int>(integer("--num-virtual-stages-per-pipeline-rank", 1, 1, 10000));
    }
    l.parallel.vpp = vpp;
    l.training.schedule = vpp > 1 ? Schedule::Interleaved : Schedule::OneFOneB;

    std::string error;
    if (embedding || loss) {
        auto split = accounted_split(layers, pp, vpp, embedding, loss, error);
        if (split.empty()) {
            add(field(account_flag), error);
            return;
        }
        l.placement.layers_per_stage = std::move(split);
        return;
    }
    if (first || last) {
        std::optional<int> f, e;
        if (first) f = static_cast<int>(integer("--decoder-first-pipeline-num-layers", 0, 0, layers));
        if (last) e = static_cast<int>(integer("--decoder-last-pipeline-num-layers", 0, 0, layers));
        auto split = uneven_split(layers, pp, vpp, f, e, error);
        if (split.empty()) {
            add(field(uneven_flag), error);
            return;
        }
        l.placement.layers_per_stage = std::move(split);
        return;
    }
    if (layers % (pp * vpp) != 0) {
        add(field("--num-layers"), std::to_string(layers) + " layers do not split evenly over " +
                                       std::to_string(pp * vpp) +
                                       " pipeline chunks (Megatron-LM requires it without "
                                       "--decoder-first/last-pipeline-num-layers)");
    }
}

void MegatronParser::overlap(Layout& l, bool sharded_optimizer) {
    if (has("--deepspeed")) return;
    l.parallel.overlap_grad_reduce = has("--overlap-grad-reduce");
    l.parallel.overlap_param_gather = has("--overlap-param-gather");
    if (has("--overlap-param-gather") && !has("--overlap-grad-reduce")) {
        add(field("--overlap-param-gather"), "needs --overlap-grad-reduce (Megatron-LM asserts it)");
    }
    if (has("--overlap-param-gather") && !sharded_optimizer) {
        add(field("--overlap-param-gather"),
            "needs --use-distributed-optimizer or --use-megatron-fsdp (Megatron-LM asserts it)");
    }
}

void MegatronParser::moe_dispatch(Layout& l) {
    if (has("--deepspeed")) return;
    auto& p = l.parallel;
    p.moe_dispatcher = MoeDispatcher::AllGather;
    if (has("--moe-token-dispatcher-type")) {
        const std::string d = text("--moe-token-dispatcher-type");
        if (!parse_moe_dispatcher(d, p.moe_dispatcher)) {
            add(field("--moe-token-dispatcher-type"), "'" + d + "': expected allgather, alltoall or flex");
        }
    }
    if (has("--moe-flex-dispatcher-backend")) {
        const std::string b = text("--moe-flex-dispatcher-backend");
        if (!parse_moe_flex_backend(b, p.moe_flex_backend)) {
            add(field("--moe-flex-dispatcher-backend"),
                "'" + b + "': expected deepep or hybridep (ncclep is not modelled)");
        } else if (p.moe_dispatcher != MoeDispatcher::Flex) {
            result_.ignored.push_back({position("--moe-flex-dispatcher-backend"),
                                       "--moe-flex-dispatcher-backend " + b,
                                       "has no effect without --moe-token-dispatcher-type flex"});
            p.moe_flex_backend = MoeFlexBackend::DeepEP;
        }
    }
    if (has("--moe-enable-deepep")) {
        if (p.moe_dispatcher != MoeDispatcher::Flex) {
            add(field("--moe-enable-deepep"),
                "needs --moe-token-dispatcher-type flex (Megatron-LM raises otherwise)");
        } else if (has("--moe-flex-dispatcher-backend") && p.moe_flex_backend == MoeFlexBackend::HybridEP) {
            add(field("--moe-enable-deepep"),
                "conflicts with --moe-flex-dispatcher-backend hybridep (Megatron-LM raises)");
        }
        p.moe_flex_backend = MoeFlexBackend::DeepEP;
    }
    p.moe_a2a_overlap = has("--overlap-moe-expert-parallel-comm");
    if (!l.model.is_moe()) {
        p.moe_dispatcher = ParallelConfig{}.moe_dispatcher;
        p.moe_flex_backend = MoeFlexBackend::DeepEP;
    }
}

void MegatronParser::optimizer_offload(TrainingConfig& t) {
    const std::string optimizer = text("--optimizer", "adam");
    const bool pai = optimizer == "hybridadam";
    const bool upstream = has("--optimizer-cpu-offload");
    if (has("--optimizer")) {
        result_.ignored.push_back({position("--optimizer"), "--optimizer " + optimizer,
                                   pai ? "Pai-Megatron-Patch's hybrid CPU/GPU Adam: read for its offload"
                                       : "optimizer, learning rate or regularisation: not part of the layout"});
    }
    if (!pai && !upstream) {
        for (const char* f : {"--optimizer-offload-fraction", "--optimizer-offload-policy"}) {
            if (has(f)) {
                result_.ignored.push_back({position(f), std::string(f) + " " + text(f),
                                           "has no effect without --optimizer-cpu-offload (Megatron-LM) or "
                                           "--optimizer hybridadam (Pai-Megatron-Patch)"});
            }
        }
        return;
    }
    if (upstream && !megatron_arg_given("--use-precision-aware-optimizer")) {
        add(field("--optimizer-cpu-offload"), "needs --use-precision-aware-optimizer (Megatron-LM asserts it, "
                                              "training/arguments.py:1884-1888)");
    }
    const std::string policy = text("--optimizer-offload-policy", "static");
    if (has("--optimizer-offload-policy") && !pai) {
        result_.ignored.push_back({position("--optimizer-offload-policy"), "--optimizer-offload-policy " + policy,
                                   "Pai-Megatron-Patch reads it with --optimizer hybridadam only"});
    } else if (pai && policy != "static") {
        add(field("--optimizer-offload-policy"),
            "'" + policy + "': Pai-Megatron-Patch's policy moves as much optimizer state to the host as "
            "--optimizer-offload-auto-threshold leaves, which a layout cannot hold (it holds the whole "
            "optimizer on the host or none): give static with --optimizer-offload-fraction 1.0");
        return;
    }
    const double fraction = real("--optimizer-offload-fraction", 1.0, 0.0, 1.0);
    if (fraction >= 1.0) {
        t.offload_optimizer = Offload::Cpu;
        result_.notes.push_back("optimizer state on the host (training.offload_optimizer cpu): " +
                                std::string(pai ? "Pai-Megatron-Patch's hybridadam" : "--optimizer-cpu-offload") +
                                " with offload fraction 1.0");
    } else if (fraction <= 0.0) {
        result_.notes.push_back("--optimizer-offload-fraction 0: no optimizer state on the host");
    } else {
        add(has("--optimizer-offload-fraction") ? field("--optimizer-offload-fraction") : "--optimizer-offload-fraction",
            "a fraction " + text("--optimizer-offload-fraction") + " of the optimizer state on the host: a layout "
            "holds the whole optimizer on the host (fraction 1.0, training.offload_optimizer) or none");
    }
}

void MegatronParser::training(Layout& l) {
    auto& t = l.training;
    const auto& mesh = l.parallel.mesh;
    t.micro_batch_size = static_cast<int>(required("--micro-batch-size", 1, kMaxBatch));
    const long long gbs_default = static_cast<long long>(t.micro_batch_size) * mesh.dp;
    t.global_batch_size = static_cast<int>(integer("--global-batch-size", gbs_default, 1, kMaxBatch));
    t.seq_length = static_cast<int>(required("--seq-length", 1, 1ll << 26));
    if (has("--microbatch-group-size-per-virtual-pipeline-stage")) {
        // Meshwork schedules the smallest group Megatron-LM accepts (core/schedule): a
        // different one changes how many micro-batches the warm-up holds.
        const long long given = integer("--microbatch-group-size-per-virtual-pipeline-stage", 0, 1, kMaxBatch);
        const long long per_step = static_cast<long long>(mesh.dp) * t.micro_batch_size;
        const int m = per_step > 0 ? static_cast<int>(t.global_batch_size / per_step) : 0;
        const int runs = interleaved_group_size(mesh.pp, m);
        if (runs > 0 && given != runs) {
            result_.notes.push_back("--microbatch-group-size-per-virtual-pipeline-stage " +
                                    std::to_string(given) + ": Meshwork's interleaved schedule runs groups of " +
                                    std::to_string(runs));
        }
    }

    // validate_args turns --recompute-activations into selective granularity whatever
    // --recompute-granularity says (training/arguments.py:607-608 at d98e8a64).
    if (has("--recompute-activations") && has("--recompute-granularity") &&
        text("--recompute-granularity") != "selective") {
        result_.notes.push_back("--recompute-activations sets --recompute-granularity selective over " +
                                field("--recompute-granularity") + " '" + text("--recompute-granularity") +
                                "' (Megatron-LM's validate_args, training/arguments.py:607-608)");
    }
    // The flags before the 2022 rename: full recompute with --activations-checkpoint-method.
    const bool legacy = has("--checkpoint-activations") || has("--activations-checkpoint-method");
    for (const char* f : {"--recompute-activations", "--recompute-granularity", "--recompute-method"}) {
        if (legacy) conflict(has("--checkpoint-activations") ? "--checkpoint-activations" : "--activations-checkpoint-method",
                             f, "one recompute setting");
    }
    if (legacy) {
        seen_["--recompute-granularity"] = {seen_.count("--checkpoint-activations") ? seen_["--checkpoint-activations"].index
                                                                                    : seen_["--activations-checkpoint-method"].index,
                                            "full"};
        seen_["--recompute-method"] = {seen_["--recompute-granularity"].index,
                                       text("--activations-checkpoint-method", "uniform")};
        if (has("--activations-checkpoint-num-layers")) seen_["--recompute-num-layers"] = seen_["--activations-checkpoint-num-layers"];
        result_.notes.push_back("earlier Megatron-LM recompute flags read as --recompute-granularity full "
                                "--recompute-method " + text("--recompute-method"));
    }
    const std::string granularity =
        has("--recompute-activations") ? "selective" : text("--recompute-granularity");
    const std::string method = text("--recompute-method");
    if (granularity != "selective" && has("--recompute-modules")) {
        // Megatron reads the modules only with selective granularity (transformer_config.py:1943).
        result_.ignored.push_back({position("--recompute-modules"), "--recompute-modules " + text("--recompute-modules"),
                                   "Megatron-LM reads it only with --recompute-granularity selective"});
    }
    if (granularity.empty()) {
        needs("--recompute-method", "--recompute-granularity", "a recompute setting");
        needs("--recompute-num-layers", "--recompute-granularity", "a recompute setting");
    } else if (granularity == "selective") {
        t.recompute = Recompute::Selective;
        for (const char* f : {"--recompute-method", "--recompute-num-layers"}) {
            if (has(f)) add(field(f), "applies to --recompute-granularity full only");
        }
        recompute_modules(t);
    } else if (granularity == "full") {
        t.recompute = Recompute::Full;
        const long long n = integer("--recompute-num-layers", 1, 1, 100000);
        if (method == "uniform") {
            t.recompute_num_layers = 0;  // every layer is recomputed, in units of n
        } else if (method == "block") {
            t.recompute_num_layers = static_cast<int>(n);
        } else {
            add(has("--recompute-method") ? field("--recompute-method") : "--recompute-method",
                "'" + method + "': full recompute needs --recompute-method uniform or block");
        }
    } else {
        add(field("--recompute-granularity"), "'" + granularity + "': expected full or selective");
    }

    const bool fsdp = has("--use-megatron-fsdp") || has("--use-custom-fsdp");
    // arguments.py:3190: the strategy defaults to optim_grads_params (ZeRO-3).
    const std::string strategy = text("--data-parallel-sharding-strategy", "optim_grads_params");
    const bool distopt = has("--use-distributed-optimizer");
    if (has("--use-torch-fsdp2")) {
        conflict("--use-torch-fsdp2", "--use-distributed-optimizer",
                 "Megatron-LM refuses the distributed optimizer with FSDP2");
        t.zero_stage = 3;
    } else if (fsdp) {
        if (strategy == "optim") t.zero_stage = 1;
        else if (strategy == "optim_grads") t.zero_stage = 2;
        else if (strategy == "optim_grads_params") t.zero_stage = 3;
        else if (strategy == "no_shard") t.zero_stage = distopt ? 1 : 0;
        else add(field("--data-parallel-sharding-strategy"),
                 "'" + strategy + "': expected no_shard, optim, optim_grads or optim_grads_params");
    } else {
        if (has("--data-parallel-sharding-strategy")) {
            result_.ignored.push_back({position("--data-parallel-sharding-strategy"),
                                       "--data-parallel-sharding-strategy " + strategy,
                                       "has no effect without --use-megatron-fsdp"});
        }
        t.zero_stage = distopt ? 1 : 0;
    }

    // Hybrid sharding: the distributed optimizer (or Megatron-FSDP) in N copies across the
    // data-parallel domain, each sharded over dp·cp/N ranks (parallel_state.py:922-929).
    // Without either, DDP all-reduces over the whole group and N changes nothing.
    if (has("--num-distributed-optimizer-instances")) {
        const int n = static_cast<int>(integer("--num-distributed-optimizer-instances", 1, 1, 1 << 20));
        if (t.zero_stage >= 1) {
            t.zero_replicas = n;
        } else if (n > 1) {
            result_.ignored.push_back({position("--num-distributed-optimizer-instances"),
                                       "--num-distributed-optimizer-instances " + std::to_string(n),
                                       "has no effect without --use-distributed-optimizer or "
                                       "--use-megatron-fsdp: DDP all-reduces over the whole data-parallel group"});
        }
    }
    // Megatron-FSDP's HSDP can shard the optimizer states across the replicas too
    // (`optim`, "HFSDP": mcore_fsdp_adapter.py:420 at d98e8a64). That moves memory a
    // layout's replicas cannot state, so it is refused rather than read as plain HSDP.
    if (has("--outer-dp-sharding-strategy")) {
        const std::string outer = text("--outer-dp-sharding-strategy", "no_shard");
        if (outer != "no_shard" && fsdp && t.zero_replicas > 1) {
            add(field("--outer-dp-sharding-strategy"),
                "'" + outer + "': Megatron-FSDP then shards the optimizer states across the " +
                    std::to_string(t.zero_replicas) +
                    " replicas as well; a layout's hybrid sharding (training.zero_replicas) keeps each "
                    "replica's state whole, so it cannot hold this");
        } else {
            result_.ignored.push_back({position("--outer-dp-sharding-strategy"),
                                       "--outer-dp-sharding-strategy " + outer,
                                       "has effect only with Megatron-FSDP's hybrid sharding "
                                       "(--use-megatron-fsdp and --num-distributed-optimizer-instances > 1)"});
        }
    }
    overlap(l, fsdp || distopt);
    moe_dispatch(l);
    optimizer_offload(t);

    if (has("--zero-stage")) {
        if (has("--deepspeed")) {
            t.zero_stage = static_cast<int>(integer("--zero-stage", 0, 0, 3));
        } else {
            result_.ignored.push_back({position("--zero-stage"), "--zero-stage " + text("--zero-stage"),
                                       "Megatron-DeepSpeed reads it only with --deepspeed"});
        }
    }
    conflict("--bf16", "--fp16", "one training precision");
    // fp4 training (transformer_config.py:671-692 at d98e8a64): e2m1 is the one format, NVFP4
    // the recipe Meshwork prices ("custom" runs a quantizer factory of the user's); Megatron-LM
    // refuses it beside fp8 (arguments.py:1100-1101).
    conflict("--fp4-format", "--fp8-format", "one low-precision GEMM format (fp8 or fp4)");
    if (has("--fp4-recipe") && !has("--fp4-format")) {
        result_.ignored.push_back({position("--fp4-recipe"), "--fp4-recipe " + text("--fp4-recipe"),
                                   "read only with --fp4-format"});
    }
    if (has("--fp4-format")) {
        const std::string f = text("--fp4-format");
        if (f != "e2m1") add(field("--fp4-format"), "'" + f + "': expected e2m1");
        if (has("--fp4-recipe") && text("--fp4-recipe") != "nvfp4") {
            add(field("--fp4-recipe"), "'" + text("--fp4-recipe") + "': expected nvfp4 (a custom quantizer is not modelled)");
        }
        t.dtype = DType::Fp4;
    } else if (has("--fp8-hybrid") || has("--fp8-e4m3")) {
        conflict("--fp8-hybrid", "--fp8-format", "one FP8 format");
        t.dtype = DType::Fp8;
    } else if (has("--fp8-format")) {
        const std::string f = text("--fp8-format");
        if (f != "hybrid" && f != "e4m3") add(field("--fp8-format"), "'" + f + "': expected e4m3 or hybrid");
        t.dtype = DType::Fp8;
    } else if (has("--bf16")) {
        t.dtype = DType::Bf16;
    } else if (has("--fp16")) {
        t.dtype = DType::Fp16;
    } else {
        t.dtype = DType::Fp32;
    }

    // Without --fp8-recipe Megatron-LM scales with delayed scaling (transformer_config.py:
    // 594-596 at d98e8a64); the layout's own default is current scaling.
    if (t.dtype == DType::Fp8 && !has("--fp8-recipe")) t.fp8_recipe = Fp8Recipe::Delayed;
    if (has("--fp8-recipe")) {
        const std::string r = text("--fp8-recipe");
        // Megatron-LM's names (core/enums.py:12-19 at d98e8a64): torchao's rowwise is not one.
        if (r == "rowwise" || !parse_fp8_recipe(r, t.fp8_recipe)) {
            add(field("--fp8-recipe"), "'" + r + "': expected tensorwise, delayed, blockwise or mxfp8");
        }
    }
    // --cuda-graph-impl (transformer_config.py:1075 at d98e8a64); the deprecated
    // --enable-cuda-graph is "local" and --external-cuda-graph "transformer_engine"
    // (arguments.py:619-631), both per layer, and either asserts --cuda-graph-impl is
    // "none" (:611-614), its default, which they then replace.
    const bool impl_stated = has("--cuda-graph-impl") && text("--cuda-graph-impl") != "none";
    if (has("--cuda-graph-impl")) {
        const std::string g = text("--cuda-graph-impl");
        if (!parse_cuda_graphs(g, t.cuda_graphs) || g == "per-layer" || g == "full-iteration") {
            add(field("--cuda-graph-impl"), "'" + g + "': expected none, local, transformer_engine or full_iteration");
        }
        if (impl_stated) {
            conflict("--cuda-graph-impl", "--enable-cuda-graph", "one CUDA-graph implementation");
            conflict("--cuda-graph-impl", "--external-cuda-graph", "one CUDA-graph implementation");
        }
    }
    if (!impl_stated && (has("--enable-cuda-graph") || has("--external-cuda-graph"))) {
        conflict("--enable-cuda-graph", "--external-cuda-graph", "one CUDA-graph implementation");
        t.cuda_graphs = CudaGraphs::PerLayer;
    }
    cuda_graph_modules(t);
    // --cpu-offloading-num-layers N > 0 turns CPU offloading on (arguments.py:1950-1951 at
    // d98e8a64); validation then holds Megatron's own rules (layout_rules.h).
    if (has("--cpu-offloading-num-layers")) {
        t.offload_activation_layers = static_cast<int>(integer("--cpu-offloading-num-layers", 0, 0, 100000));
    }
    // Honoured for bf16 parameters only (arguments.py:1204-1216 at d98e8a64).
    t.grad_reduce_in_bf16 = has("--grad-reduce-in-bf16") && (t.dtype == DType::Bf16 || quantized_gemms(t.dtype));
    t.flash_attention = true;  // Megatron's default backend (auto) uses fused attention
    if (has("--attention-backend")) {
        const std::string b = text("--attention-backend");
        if (b == "unfused" || b == "local") t.flash_attention = false;
        else if (b != "auto" && b != "flash" && b != "fused")
            add(field("--attention-backend"), "'" + b + "': expected flash, fused, unfused, local or auto");
        if (has("--use-flash-attn") && !t.flash_attention) {
            add(field("--attention-backend"), "conflicts with " + field("--use-flash-attn"));
        }
    }
    if (megatron_deepspeed_moe() && l.model.is_moe()) {
        // DeepSpeed-MoE drops tokens over capacity (train factor 1.0) unless
        // --disable-moe-token-dropping (Megatron-DeepSpeed arguments.py:910-914).
        t.moe_capacity_factor = has("--disable-moe-token-dropping")
                                    ? 0.0
                                    : real("--moe-train-capacity-factor", 1.0, 1e-6, 1000);
    }
    // The capacity of each expert and the per-rank token budget of HybridEP
    // (transformer_config.py:1019-1025 at d98e8a64): positive numbers.
    for (const auto& [flag, target] : {std::pair<const char*, double*>{"--moe-expert-capacity-factor", &t.moe_capacity_factor},
                                       std::pair<const char*, double*>{"--moe-expert-rank-capacity-factor",
                                                                       &t.moe_rank_capacity_factor}}) {
        if (!has(flag)) continue;
        const std::string v = text(flag);
        char* end = nullptr;
        const double f = std::strtod(v.c_str(), &end);
        if (end == v.c_str() || *end != '\0' || !std::isfinite(f) || f <= 0 || f > 1000) {
            add(field(flag), "'" + v + "' is not a positive number");
        } else {
            *target = f;
        }
    }
}

}  // namespace meshwork::megatron_import_detail
