#include "core/export/megatron_import.h"

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
#include "core/export/megatron_import_parser.h"

namespace meshwork {

namespace megatron_import_detail {

// The arguments that describe the layout (arguments.py); read below.
constexpr std::array kLayoutFlags = std::to_array<FlagSpec>({
    {"--num-layers", true}, {"--hidden-size", true}, {"--ffn-hidden-size", true},
    {"--num-attention-heads", true}, {"--group-query-attention", false},
    {"--num-query-groups", true}, {"--kv-channels", true}, {"--seq-length", true},
    {"--max-position-embeddings", true}, {"--vocab-size", true}, {"--padded-vocab-size", true},
    {"--tokenizer-type", true},
    {"--normalization", true}, {"--swiglu", false}, {"--position-embedding-type", true},
    {"--use-rotary-position-embeddings", false}, {"--no-position-embedding", false},
    {"--untie-embeddings-and-output-weights", false}, {"--disable-bias-linear", false},
    {"--add-qkv-bias", false}, {"--num-experts", true, true}, {"--moe-router-topk", true},
    {"--moe-ffn-hidden-size", true}, {"--moe-shared-expert-intermediate-size", true},
    {"--moe-shared-expert-gate", false}, {"--moe-router-enable-expert-bias", false},
    {"--moe-layer-freq", true}, {"--moe-expert-capacity-factor", true},
    {"--multi-latent-attention", false}, {"--q-lora-rank", true}, {"--kv-lora-rank", true},
    {"--qk-head-dim", true}, {"--qk-pos-emb-head-dim", true}, {"--v-head-dim", true},
    {"--tensor-model-parallel-size", true}, {"--pipeline-model-parallel-size", true},
    {"--context-parallel-size", true}, {"--expert-model-parallel-size", true},
    {"--expert-tensor-parallel-size", true}, {"--sequence-parallel", false},
    {"--tp-comm-overlap", false}, {"--microbatch-group-size-per-virtual-pipeline-stage", true},
    {"--overlap-grad-reduce", false}, {"--overlap-param-gather", false},
    {"--use-tp-pp-dp-mapping", false}, {"--num-layers-per-virtual-pipeline-stage", true},
    {"--num-virtual-stages-per-pipeline-rank", true},
    {"--decoder-first-pipeline-num-layers", true}, {"--decoder-last-pipeline-num-layers", true},
    {"--account-for-embedding-in-pipeline-split", false}, {"--account-for-loss-in-pipeline-split", false},
    {"--pipeline-model-parallel-layout", true}, {"--micro-batch-size", true},
    {"--global-batch-size", true}, {"--recompute-granularity", true},
    {"--recompute-method", true}, {"--recompute-num-layers", true}, {"--recompute-modules", true, true},
    {"--recompute-activations", false}, {"--use-distributed-optimizer", false},
    {"--use-megatron-fsdp", false}, {"--use-custom-fsdp", false}, {"--use-torch-fsdp2", false},
    {"--data-parallel-sharding-strategy", true}, {"--num-distributed-optimizer-instances", true},
    {"--outer-dp-sharding-strategy", true},
    {"--bf16", false}, {"--fp16", false},
    {"--fp8-format", true}, {"--use-flash-attn", false}, {"--attention-backend", true},
    {"--grad-reduce-in-bf16", false}, {"--moe-token-dispatcher-type", true},
    {"--moe-flex-dispatcher-backend", true}, {"--moe-enable-deepep", false},
    {"--overlap-moe-expert-parallel-comm", false},
    // speed-only knobs (core/layout/speed_knobs.h): the fp8 recipe and CUDA-graph capture
    {"--fp8-recipe", true}, {"--fp4-format", true}, {"--fp4-recipe", true}, {"--cuda-graph-impl", true}, {"--enable-cuda-graph", false},
    {"--external-cuda-graph", false}, {"--cuda-graph-modules", true, true}, {"--cuda-graph-scope", true, true},
    {"--moe-expert-rank-capacity-factor", true},
    // activation offload to the host: the one CPU-offloading flag Megatron-LM's parser has
    // (model_parallel_config.py:461; cpu_offloading follows from it, arguments.py:1950-1951)
    {"--cpu-offloading-num-layers", true},
    // optimizer offload: Megatron-LM's hybrid device optimizer (arguments.py:2918-2922) and
    // Pai-Megatron-Patch's hybridadam with its policy (megatron_patch/arguments.py:467-478)
    {"--optimizer", true}, {"--optimizer-cpu-offload", false}, {"--optimizer-offload-fraction", true},
    {"--optimizer-offload-policy", true},
    // Megatron-DeepSpeed's MoE (megatron/arguments.py:608-615, :1159 at 4efb479d)
    {"--moe-expert-parallel-size", true}, {"--topk", true}, {"--expert-interval", true},
    {"--mlp-type", true}, {"--disable-moe-token-dropping", false}, {"--moe-train-capacity-factor", true},
    {"--enable-expert-tensor-parallelism", false},
    // Pai-Megatron-Patch's window: transformers' sliding_window, W keys with the query
    // (megatron_patch/arguments.py:294; model/mistral/modeling_attn_mask_utils.py at a098ca5a)
    {"--sliding-window", true},
    // Megatron-DeepSpeed (deepspeedai/Megatron-DeepSpeed megatron/arguments.py)
    {"--num-key-value-heads", true}, {"--zero-stage", true}, {"--deepspeed", false},
    {"--no-pipeline-parallel", false},
    // Earlier Megatron-LM (before the 2022 rename to --recompute-*; --fp8-hybrid before
    // --fp8-format), still in published scripts
    {"--checkpoint-activations", false}, {"--activations-checkpoint-method", true},
    {"--activations-checkpoint-num-layers", true}, {"--fp8-hybrid", false}, {"--fp8-e4m3", false},
    // Pai-Megatron-Patch's name for the shared-expert width
    {"--shared-moe-ffn-hidden-size", true},
    // Pai-Megatron-Patch's RoPE switch, "Deprecated: use --position-embedding-type", its MLA
    // head widths and its attention-head type (megatron_patch/arguments.py:256-260, :453-454,
    // :169-174 at a098ca5a)
    {"--use-llama2-rotary-position-embeddings", false}, {"--qk-nope-head-dim", true},
    {"--qk-rope-head-dim", true}, {"--attention-head-type", true},
    // Megatron-DeepSpeed's DeepSpeed-Ulysses sequence parallelism (megatron/arguments.py:974
    // at 4efb479d, default 1)
    {"--ds-sequence-parallel-size", true},
    // model details ModelSpec holds (RoPE, norm epsilon, QK norm, window, MTP, router, dropout)
    {"--rotary-base", true}, {"--rotary-percent", true}, {"--use-rope-scaling", false},
    {"--rope-scaling-factor", true}, {"--rotary-scaling-factor", true}, {"--rope-type", true},
    {"--rotary-seq-len-interpolation-factor", true}, {"--norm-epsilon", true},
    {"--layernorm-epsilon", true}, {"--qk-layernorm", false}, {"--window-size", true},
    {"--window-attn-skip-freq", true}, {"--softmax-type", true}, {"--quick-geglu", false},
    {"--glu-linear-offset", true}, {"--activation-func-clamp-value", true},
    {"--mtp-num-layers", true}, {"--moe-router-score-function", true},
    {"--hidden-dropout", true}, {"--attention-dropout", true},
    // hybrid models (pretrain_mamba.py, pretrain_hybrid.py): the layer pattern, the ratios
    // of core_v0.12 … core_v0.16, the Mamba-2 sizes (transformer_config.py:1256-1270 at
    // d98e8a64) and the squared-ReLU MLP (arguments.py:2448)
    {"--is-hybrid-model", false}, {"--hybrid-layer-pattern", true}, {"--hybrid-override-pattern", true},
    {"--hybrid-attention-ratio", true}, {"--hybrid-mlp-ratio", true}, {"--mamba-state-dim", true},
    {"--mamba-head-dim", true}, {"--mamba-num-groups", true}, {"--mamba-num-heads", true},
    {"--squared-relu", false},
});

const FlagSpec* layout_flag(const std::string& name) {
    for (const auto& f : kLayoutFlags) {
        if (f.name == name) return &f;
    }
    return nullptr;
}

ImportResult MegatronParser::run(const ScriptRun& script) {
    script_ = &script;
    for (const auto& n : script.notes) result_.notes.push_back(n);
    for (const auto& [line, text] : script.exports) {
        result_.ignored.push_back({"line " + std::to_string(line), text, "environment variable: not part of the layout"});
    }
    ShellCommand argv;
    argv_ = &argv;
    const std::size_t i = pick_command(script, argv);
    arguments(argv, i);
    if (!issues_.empty()) throw InputError(issues_);
    build();
    if (!issues_.empty()) throw InputError(issues_);
    return std::move(result_);
}

}  // namespace megatron_import_detail

using megatron_import_detail::kMaxScriptPaths;
using megatron_import_detail::MegatronParser;

namespace {

// One path through the script and what it imports to.
struct PathOutcome {
    std::vector<ScriptDecision> decisions;
    std::optional<ImportResult> result;
    std::vector<InputIssue> issues;
    int exit_line = 0;
    bool launched = false;  // a training command was found on this path
};

std::string branch_text(const ScriptDecision& d) {
    return "'" + d.condition + "' taken as " + (d.taken ? "true" : "false");
}

}  // namespace

ImportResult import_megatron(const std::string& text, const std::string& file,
                             const ImportOptions& options) {
    ScriptOptions script_options;
    script_options.set = options.set;
    script_options.sources = options.sources;
    std::vector<PathOutcome> paths;
    explore_shell_script(text, file, script_options, kMaxScriptPaths, [&](const ScriptRun& run) {
        PathOutcome p;
        p.decisions = run.decisions;
        p.exit_line = run.exit_line;
        MegatronParser parser(file, options);
        try {
            p.result = parser.run(run);
        } catch (const InputError& e) {
            p.issues = e.issues();
        }
        p.launched = parser.launched_training();
        paths.push_back(std::move(p));
    });
    // Paths that stop at `exit` before launching anything are the script's error exits
    // (a missing file, an unsupported size): the import follows the paths that launch.
    std::vector<const PathOutcome*> live;
    std::vector<int> exits;
    for (const auto& p : paths) {
        if (p.exit_line > 0 && !p.launched) {
            exits.push_back(p.exit_line);
            continue;
        }
        live.push_back(&p);
    }
    if (live.empty()) live.push_back(&paths.front());
    const auto same_issues = [](const std::vector<InputIssue>& a, const std::vector<InputIssue>& b) {
        if (a.size() != b.size()) return false;
        for (std::size_t k = 0; k < a.size(); ++k) {
            if (a[k].field != b[k].field || a[k].message != b[k].message) return false;
        }
        return true;
    };
    bool all_same = true;
    for (const PathOutcome* p : live) all_same = all_same && !p->result && same_issues(p->issues, live.front()->issues);
    if (all_same && !live.front()->result) throw InputError(live.front()->issues);
    for (const PathOutcome* p : live) {
        if (p->result) continue;
        std::vector<InputIssue> issues = p->issues;
        for (const auto& d : p->decisions) {
            issues.push_back({file, "line " + std::to_string(d.line),
                              "on this path " + branch_text(d) + ", which is not known: " + d.reason});
        }
        throw InputError(issues);
    }
    // Every path imports: they must agree, or the unknown conditions that matter are named.
    const ImportResult& first = *live.front()->result;
    const std::string first_json = layout_to_json(first.layout).dump();
    std::vector<InputIssue> differ;
    for (const PathOutcome* p : live) {
        if (layout_to_json(p->result->layout).dump() == first_json) continue;
        for (std::size_t k = 0; k < p->decisions.size() && k < live.front()->decisions.size(); ++k) {
            const auto& a = live.front()->decisions[k];
            const auto& b = p->decisions[k];
            if (a.line != b.line || a.file != b.file) break;
            if (a.taken == b.taken) continue;
            const std::string field = "line " + std::to_string(a.line);
            bool known = false;
            for (const auto& i : differ) known = known || i.field == field;
            if (!known) {
                differ.push_back({file, field,
                                  "the layout depends on '" + a.condition + "', which is not known: " + a.reason});
            }
        }
    }
    if (!differ.empty()) throw InputError(differ);
    ImportResult r = first;
    for (const auto& d : live.front()->decisions) {
        r.notes.push_back("line " + std::to_string(d.line) + ": '" + d.condition +
                          "' is not known (" + d.reason + "); every branch gives this layout");
    }
    std::sort(exits.begin(), exits.end());
    exits.erase(std::unique(exits.begin(), exits.end()), exits.end());
    for (int line : exits) {
        r.notes.push_back("line " + std::to_string(line) +
                          ": the path that stops at this exit (the script's own error check) was not followed");
    }
    r.format = ImportFormat::Megatron;
    return r;
}

}  // namespace meshwork
