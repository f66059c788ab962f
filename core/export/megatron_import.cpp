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

namespace meshwork {

namespace {

constexpr long long kMaxAxis = 1 << 20;
constexpr long long kMaxWidth = 1 << 20;
constexpr long long kMaxBatch = 1ll << 30;
constexpr long long kMaxGpus = 1 << 22;
constexpr const char* kUnknownFlagWarning =
    "unknown to Megatron-LM (core_v0.12.0 to d98e8a64) and to the forks import-args knows; read as not "
    "changing the layout (listed in ignored[]). --strict refuses it";
// Paths through conditions on unknown values that an import follows before it asks for --set.
constexpr int kMaxScriptPaths = 256;

struct FlagSpec {
    std::string_view name;
    bool takes_value;
    // nargs "+": the value is every word up to the next --flag, kept space-separated.
    bool many = false;
};

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
    {"--fp8-recipe", true}, {"--cuda-graph-impl", true}, {"--enable-cuda-graph", false},
    {"--external-cuda-graph", false},
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

bool starts_with(const std::string& s, std::string_view prefix) {
    return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

std::string basename(const std::string& path) {
    return std::filesystem::path(path).filename().string();
}

using ShellCommand = std::vector<ScriptWord>;

struct SeenArg {
    int index = 0;
    std::string value;  // empty for store_true flags
};

class MegatronParser {
public:
    MegatronParser(const std::string& file, const ImportOptions& options)
        : file_(file), options_(options) {}

    // One path through the script: its training command, or the Megatron-LM arguments held
    // in a variable when the script launches nothing itself (a config sourced by a job).
    ImportResult run(const ScriptRun& script) {
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

    [[nodiscard]] bool launched_training() const { return found_command_; }

private:
    // ---- the command ---------------------------------------------------------------------
    static bool megatron_flag(const std::string& word) {
        if (!starts_with(word, "--")) return false;
        const std::string flag = word.substr(0, word.find('='));
        return layout_flag(flag) != nullptr || megatron_ignored_flag_reason(flag) != nullptr;
    }
    static bool python_name(const std::string& b) {
        return b == "python" || (starts_with(b, "python") && b.find_first_not_of("0123456789.", 6) == std::string::npos);
    }
    static bool py_script(const std::string& w) { return w.size() > 3 && w.compare(w.size() - 3, 3, ".py") == 0; }
    // CPython's options that take a value (python(1)): -W and -X; -c and -m end the options.
    static bool python_option_with_value(const std::string& o) { return o == "-W" || o == "-X"; }
    // Index after the interpreter's options that start at `j` (`python -u -O -m ...`).
    static std::size_t skip_python_options(const std::vector<ScriptWord>& w, std::size_t j) {
        while (j < w.size() && starts_with(w[j].text, "-") && w[j].text != "-m" && w[j].text != "-c") {
            j += python_option_with_value(w[j].text) ? 2 : 1;
        }
        return j;
    }
    // A training entry point of Megatron-LM and its forks: pretrain_gpt.py, pretrain_mamba.py,
    // Megatron-DeepSpeed's pretrain_gpt.py, Pai-Megatron-Patch's pretrain_qwen.py, ...
    static bool training_entry_point(const std::string& script) { return starts_with(basename(script), "pretrain_"); }
    // A module run as the entry point (`python -m megatron.training.pretrain_gpt`, torchrun's
    // -m): its file is the last dotted component with .py (`pretrain_gpt.py`); "" for a word
    // that is not a dotted module name.
    static std::string module_script(const std::string& module) {
        if (module.empty() || module.find('/') != std::string::npos || py_script(module)) return "";
        for (char c : module) {
            if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '.') return "";
        }
        return module.substr(module.rfind('.') == std::string::npos ? 0 : module.rfind('.') + 1) + ".py";
    }
    // Whether the words from `k` carry a layout argument (--num-layers, --micro-batch-size, ...):
    // an argument only a training command takes. Ignored flags such as --split or --seed
    // are shared with data-preparation scripts and do not make a command training.
    static bool carries_layout_arguments(const std::vector<ScriptWord>& w, std::size_t k) {
        // Flags that data preparation and checking tools share with training
        // (tools/preprocess_data.py's --tokenizer-type and --vocab-size, a parity check's
        // --bf16) do not make a command training.
        static constexpr std::string_view kShared[] = {"--tokenizer-type", "--vocab-size", "--bf16", "--fp16"};
        for (std::size_t j = k; j < w.size(); ++j) {
            if (!starts_with(w[j].text, "--")) continue;
            const std::string flag = w[j].text.substr(0, w[j].text.find('='));
            if (layout_flag(flag) == nullptr) continue;
            if (std::find(std::begin(kShared), std::end(kShared), flag) != std::end(kShared)) continue;
            return true;
        }
        return false;
    }
    // The script a launcher at `k` runs: the first *.py word after it; npos for none.
    static std::size_t script_after(const std::vector<ScriptWord>& w, std::size_t k) {
        for (std::size_t j = k + 1; j < w.size(); ++j) {
            if (py_script(w[j].text)) return j;
            if ((w[j].text == "-m" || w[j].text == "--module") && j + 1 < w.size() &&
                training_entry_point(module_script(w[j + 1].text)))
                return j + 1;
            if (starts_with(w[j].text, "--") && layout_flag(w[j].text.substr(0, w[j].text.find('='))) != nullptr) break;
        }
        return std::string::npos;
    }
    // Only a command that runs a known training entry point, or carries the training
    // arguments, trains: `python load_ratios.py --split train` before the torchrun line is
    // data preparation.
    static bool trains(const std::vector<ScriptWord>& w, std::size_t k) {
        const std::size_t s = script_after(w, k);
        if (s != std::string::npos && (training_entry_point(w[s].text) || training_entry_point(module_script(w[s].text))))
            return true;
        return carries_layout_arguments(w, k);
    }

    // Where the launcher (torchrun, deepspeed, python, or the script itself) starts in `c`;
    // npos when `c` does not launch a Megatron-LM training script.
    static std::size_t launcher_index(const ScriptCommand& c) {
        const auto& w = c.words;
        const auto has_flags_after = [&](std::size_t k) {
            for (std::size_t j = k; j < w.size(); ++j) {
                if (megatron_flag(w[j].text)) return true;
            }
            return false;
        };
        if (!w.empty() && megatron_flag(w[0].text)) {  // the bare arguments
            return carries_layout_arguments(w, 0) ? 0 : std::string::npos;
        }
        for (std::size_t k = 0; k < w.size(); ++k) {
            const std::string b = basename(w[k].text);
            if (b == "torchrun" || b == "deepspeed") return trains(w, k) ? k : std::string::npos;
            if (python_name(b)) {
                const std::size_t j = skip_python_options(w, k + 1);
                if (j + 1 < w.size() && w[j].text == "-m" && starts_with(w[j + 1].text, "torch.distributed.")) {
                    return trains(w, k) ? k : std::string::npos;
                }
                if (j + 1 < w.size() && w[j].text == "-m" && training_entry_point(module_script(w[j + 1].text))) {
                    return trains(w, k) ? k : std::string::npos;
                }
                // A training entry point trains even when its arguments come from a variable
                // the script does not set (`python pretrain_gpt.py ${ARGS}`): the import then
                // asks for that variable, as for torchrun.
                if (j < w.size() && py_script(w[j].text)) {
                    return (has_flags_after(j) || training_entry_point(w[j].text)) && trains(w, k) ? k
                                                                                                  : std::string::npos;
                }
                return std::string::npos;
            }
            if (py_script(b)) {
                return (has_flags_after(k) || training_entry_point(b)) && trains(w, k) ? k : std::string::npos;
            }
        }
        return std::string::npos;
    }

    std::size_t pick_command(const ScriptRun& script, ShellCommand& argv) {
        const ScriptCommand* chosen = nullptr;
        std::size_t at = 0;
        // A checkpoint conversion takes the layout's arguments to shard what it writes
        // (tools/checkpoint/convert.py; ModelOpt's convert_model.py before its finetune.py in
        // Megatron-LM's examples/post_training/modelopt/eagle3.sh) but runs no training step:
        // beside a command that trains, it is not the training command.
        const auto conversion = [](const ScriptCommand& c, std::size_t k) {
            for (std::size_t j = k; j < c.words.size(); ++j) {
                const ScriptWord& w = c.words[j];
                if (!py_script(w.text)) continue;
                return starts_with(basename(w.unresolved.empty() ? w.text : w.known_tail), "convert");
            }
            return false;
        };
        std::size_t trainers = 0;
        for (const auto& c : script.commands) {
            const std::size_t k = launcher_index(c);
            trainers += k != std::string::npos && !conversion(c, k) ? 1 : 0;
        }
        for (const auto& c : script.commands) {
            const std::size_t k = launcher_index(c);
            if (k == std::string::npos) continue;
            if (trainers > 0 && conversion(c, k)) {
                result_.notes.push_back("line " + std::to_string(c.line) + ": a checkpoint conversion, not the training command");
                continue;
            }
            if (chosen != nullptr) {
                add("line " + std::to_string(c.line),
                    "a second training command ('" + c.words[k].text + "') after the one on line " +
                        std::to_string(chosen->line) + ": the script launches training twice");
                continue;
            }
            chosen = &c;
            at = k;
        }
        if (!issues_.empty()) throw InputError(issues_);
        if (chosen == nullptr) return from_variable(script, argv);
        found_command_ = true;
        for (const auto& e : chosen->env) {
            result_.ignored.push_back({"line " + std::to_string(chosen->line), e,
                                       "environment variable: not part of the layout"});
        }
        // What runs the launcher: srun's options are read, other wrappers listed.
        std::size_t k = 0;
        while (k < at) {
            const std::string b = basename(chosen->words[k].text);
            if (b == "srun") {
                k = srun_options(chosen->words, k + 1, at);
                continue;
            }
            if (b == "mpirun" || b == "mpiexec") {
                // mpirun -np N runs the script N times: one process per GPU, as srun does.
                launcher_srun_ = true;
                for (std::size_t j = k + 1; j + 1 < at; ++j) {
                    const std::string& o = chosen->words[j].text;
                    if (o == "-np" || o == "-n" || o == "--np" || o == "-c") srun_["--ntasks"] = chosen->words[j + 1].text;
                    if (o == "-N" || o == "--npernode") srun_["--ntasks-per-node"] = chosen->words[j + 1].text;
                }
            }
            std::string wrapper = chosen->words[k].text;
            ++k;
            while (k < at && basename(chosen->words[k].text) != "srun") wrapper += " " + chosen->words[k++].text;
            result_.ignored.push_back({"line " + std::to_string(chosen->line), wrapper,
                                       "command wrapping the launcher (profiler, environment manager): "
                                       "not part of the layout"});
        }
        argv.assign(chosen->words.begin() + static_cast<std::ptrdiff_t>(at), chosen->words.end());
        command_line_ = chosen->line;
        return launcher(argv);
    }

    // The Python programs the script runs instead of a training entry point, for the message
    // when nothing trains: "scripts/training/run_recipe.py (line 204)". A program is the first
    // *.py word of a command (after python, torchrun or a wrapper) or the module of `python -m`.
    static std::string launched_programs(const ScriptRun& script) {
        std::vector<std::string> programs;
        std::vector<std::string> seen;  // each program once, with the line it first runs on
        bool recipe = false;
        bool child_script = false;
        for (const auto& c : script.commands) {
            const auto& w = c.words;
            std::string program;
            for (std::size_t j = 0; j < w.size() && program.empty(); ++j) {
                const std::string& t = w[j].text;
                // A path with an unknown directory reads as its known tail: ".../run_recipe.py".
                if (py_script(t)) program = w[j].unresolved.empty() ? t : "..." + w[j].known_tail;
                if (t == "-m" && j + 1 < w.size() && !starts_with(w[j + 1].text, "torch.distributed.") &&
                    j > 0 && (python_name(basename(w[j - 1].text)) || starts_with(w[j - 1].text, "-")))
                    program = "-m " + w[j + 1].text;
            }
            // `bash ds_pretrain_gpt2.sh $CONFIG ...`: another script, with its arguments.
            if (program.empty() && w.size() > 1 && (basename(w[0].text) == "bash" || basename(w[0].text) == "sh")) {
                for (std::size_t j = 1; j < w.size() && program.empty(); ++j) {
                    if (starts_with(w[j].text, "-")) continue;
                    if (w[j].text.size() > 3 && w[j].text.compare(w[j].text.size() - 3, 3, ".sh") == 0) {
                        program = "bash " + w[j].text;
                        child_script = true;
                    }
                    break;
                }
            }
            if (program.empty()) continue;
            for (const auto& word : w) recipe = recipe || word.text == "--recipe" || starts_with(word.text, "--recipe=");
            recipe = recipe || basename(program) == "run_recipe.py";
            if (std::find(programs.begin(), programs.end(), program) != programs.end()) continue;
            programs.push_back(program);
            seen.push_back(program + " (line " + std::to_string(c.line) + ")");
        }
        if (seen.empty()) return "";
        std::string out = "; it runs ";
        for (std::size_t i = 0; i < seen.size() && i < 4; ++i) out += (i ? ", " : "") + seen[i];
        if (seen.size() > 4) out += " and " + std::to_string(seen.size() - 4) + " more";
        out += ": none is a Megatron-LM training entry point (pretrain_*.py) or takes its layout arguments";
        if (child_script) {
            out += ". A script run by bash is a file of its own: import that file (its arguments with "
                   "--set 1=VALUE, --set 2=VALUE, ...)";
        }
        if (recipe) {
            out += ". A Megatron-Bridge recipe (--recipe, scripts/training/run_recipe.py) holds its layout in "
                   "Python and KEY=VALUE overrides, which import-args does not read: state its axes to "
                   "`meshwork-cli estimate` (--tp, --pp, --ep, --mbs, --gbs, ...)";
        }
        return out;
    }

    // No command launches training: the Megatron-LM arguments of a variable (a config file
    // that a job script sources), when exactly one variable holds a model: --num-layers,
    // which Megatron-LM requires, or a hybrid layer pattern, which gives the layer count.
    std::size_t from_variable(const ScriptRun& script, ShellCommand& argv) {
        std::vector<std::string> candidates;
        for (const auto& [name, words] : script.variables) {
            bool model = false;
            for (const auto& w : words) {
                const std::string flag = w.text.substr(0, w.text.find('='));
                model = model || flag == "--num-layers" || flag == "--hybrid-layer-pattern" ||
                        flag == "--hybrid-override-pattern";
            }
            if (model) candidates.push_back(name);
        }
        // A variable whose words are all inside another candidate (GPT_ARGS in ALL_ARGS) is a part.
        std::vector<std::string> outer;
        for (const auto& c : candidates) {
            bool part = false;
            for (const auto& o : candidates) {
                if (o == c) continue;
                const auto& in = script.variables.at(c);
                const auto& big = script.variables.at(o);
                part = part || (big.size() > in.size() &&
                                std::search(big.begin(), big.end(), in.begin(), in.end(),
                                            [](const ScriptWord& a, const ScriptWord& b) { return a.text == b.text; }) !=
                                    big.end());
            }
            if (!part) outer.push_back(c);
        }
        if (outer.size() != 1) {
            std::string msg = "no training command (torchrun, python -m torch.distributed.run, deepspeed, "
                              "srun or python with a training script)";
            if (script.exit_line > 0) msg += ": the script stops at exit on line " + std::to_string(script.exit_line);
            if (outer.empty()) msg += launched_programs(script);
            if (outer.size() > 1) {
                msg += ", and several variables hold Megatron-LM arguments:";
                for (const auto& o : outer) msg += " " + o;
            }
            for (const auto& n : script.notes) {
                if (n.find("sourced file") != std::string::npos) msg += "; " + n;
            }
            add("script", msg);
            throw InputError(issues_);
        }
        const std::string& name = outer.front();
        argv = script.variables.at(name);
        from_variable_ = true;
        const int line = script.variable_lines.count(name) ? script.variable_lines.at(name) : 0;
        result_.notes.push_back("no training command in the script: the Megatron-LM arguments are those of " +
                                name + " (line " + std::to_string(line) + ")");
        return 0;
    }

    // srun's options before the command it runs (srun(1)); returns the index after them.
    std::size_t srun_options(const ShellCommand& w, std::size_t k, std::size_t end) {
        static const std::map<std::string, std::string> kShort = {{"-N", "--nodes"}, {"-n", "--ntasks"}};
        static const std::vector<std::string> kNoValue = {"--exclusive", "--overlap", "--unbuffered", "-u",
                                                          "--label", "-l", "--kill-on-bad-exit", "-K",
                                                          "--no-container-mount-home", "--container-writable"};
        launcher_srun_ = true;
        while (k < end && starts_with(w[k].text, "-")) {
            std::string opt = w[k].text;
            std::string value;
            const std::size_t at = k;
            if (const auto eq = opt.find('='); eq != std::string::npos) {
                value = opt.substr(eq + 1);
                opt = opt.substr(0, eq);
                ++k;
            } else if (std::find(kNoValue.begin(), kNoValue.end(), opt) != kNoValue.end()) {
                ++k;
            } else {
                value = k + 1 < end ? w[k + 1].text : "";
                if (k + 1 < end && !w[k + 1].unresolved.empty()) value.clear();
                k += 2;
            }
            if (const auto s = kShort.find(opt); s != kShort.end()) opt = s->second;
            if (opt == "--nodes" || opt == "--ntasks" || opt == "--ntasks-per-node" || opt == "--gpus-per-node") {
                srun_[opt] = value;
            } else {
                result_.ignored.push_back({"line " + std::to_string(w[at].line), "srun " + opt + (value.empty() ? "" : " " + value),
                                           "srun option: not part of the layout"});
            }
        }
        return k;
    }

    std::string where(std::size_t k) const { return "argv[" + std::to_string(k) + "]"; }
    std::string where(std::size_t k, const std::string& flag) const {
        return where(k) + " " + flag;
    }
    void add(const std::string& field, const std::string& message) {
        issues_.push_back({file_, field, message});
    }
    // Word `k` must be known; the error names the argument at `at` and why it is unknown.
    bool expanded_ok(std::size_t k, const std::string& flag, std::size_t at) {
        const auto& w = (*argv_)[k];
        if (w.unresolved.empty()) return true;
        add(where(at, flag), w.unresolved);
        return false;
    }
    bool expanded_ok(std::size_t k, const std::string& flag) { return expanded_ok(k, flag, k); }

    // Reads torchrun / python -m torch.distributed.run / deepspeed / python; returns the
    // index of the first Megatron argument.
    std::size_t launcher(const ShellCommand& argv) {
        std::size_t i = 0;
        // `$DIR/finetune.py ARGS` run directly: the unknown directory decides nothing (as for a
        // script after python or torchrun below), the name does.
        const bool script_in_unknown_dir = !argv[0].unresolved.empty() && starts_with(argv[0].known_tail, "/") &&
                                           py_script(argv[0].known_tail);
        const std::string first = script_in_unknown_dir ? argv[0].known_tail.substr(1) : argv[0].text;
        if (!script_in_unknown_dir && !expanded_ok(0, first)) return argv.size();
        if (starts_with(first, "--")) return 0;  // the bare arguments
        const std::string name = basename(first);
        if (name == "torchrun") {
            launched_ = true;
            i = torchrun_options(argv, 1);
        } else if (name == "deepspeed") {
            i = deepspeed_options(argv, 1);
        } else if (python_name(name)) {
            i = 1;
            while (i < argv.size() && starts_with(argv[i].text, "-") && argv[i].text != "-m") {
                const std::string& o = argv[i].text;
                if (python_option_with_value(o)) ++i;
                else if (o != "-u" && o != "-O" && o != "-OO" && o != "-B" && o != "-E" &&
                         o != "-s" && o != "-S" && o != "-I" && o != "-P" && o != "-q" && o != "-b" &&
                         o != "-bb" && o != "-d" && o != "-v") {
                    add(where(i, o), "unknown python option");
                }
                ++i;
            }
            if (i < argv.size() && argv[i].text == "-m") {
                const std::string module = i + 1 < argv.size() ? argv[i + 1].text : "";
                if (module == "torch.distributed.run" || module == "torch.distributed.launch") {
                    launched_ = true;
                    i = torchrun_options(argv, i + 2);
                } else if (!module_script(module).empty()) {
                    entry_module_ = true;
                    ++i;  // the module is the training script
                } else {
                    add(where(i + 1), "python -m '" + module +
                                          "': expected torch.distributed.run, a training module or a training script");
                    return argv.size();
                }
            }
        } else if (!py_script(name)) {
            add(where(0), "'" + first +
                              "': expected torchrun, deepspeed, python, a training script or the bare "
                              "Megatron-LM arguments");
            return argv.size();
        }
        if (i >= argv.size()) {
            add(where(i), "the training script is missing (e.g. pretrain_gpt.py)");
            return argv.size();
        }
        // `$DIR/pretrain_gpt.py`: an unknown directory decides nothing of the layout, the name does.
        const bool unknown_dir = !argv[i].unresolved.empty() && starts_with(argv[i].known_tail, "/");
        std::string script = unknown_dir ? argv[i].known_tail.substr(1) : argv[i].text;
        if (entry_module_ && !unknown_dir) {
            const std::string file = module_script(script);
            if (file.empty()) {
                add(where(i, script), "expected the training module (e.g. megatron.training.pretrain_gpt)");
                return argv.size();
            }
            result_.notes.push_back("training module " + script + " read as " + file);
            script = file;
        }
        if (!unknown_dir && !expanded_ok(i, script)) return argv.size();
        if (!py_script(script)) {
            add(where(i, script), "expected the training script (e.g. pretrain_gpt.py)");
            return argv.size();
        }
        entry_script_ = basename(script);
        const std::string& entry = entry_script_;
        if (starts_with(entry, "generate") || entry.find("text_generation") != std::string::npos ||
            entry.find("inference") != std::string::npos) {
            // Generation and inference entry points (examples/academic_paper_scripts/detxoify_lm/
            // generate_samples_gpt.py, tools/run_text_generation_server.py) run the model on the
            // same argparse and parallel axes; their own flags (--out-seq-length, --temperature)
            // are listed as ignored with the file that defines them.
            result_.notes.push_back("script " + script +
                                    " generates text rather than training: the layout is its model and parallel "
                                    "axes, trained with its micro-batch as the batch");
        } else if (entry != "pretrain_gpt.py") {
            result_.notes.push_back("training script " + script +
                                    " read with pretrain_gpt.py's arguments");
        }
        return i + 1;
    }

    // DeepSpeed's launcher (deepspeed/launcher/runner.py): --num_nodes, --num_gpus; the
    // rest (hostfile, ports, ...) is listed.
    std::size_t deepspeed_options(const ShellCommand& argv, std::size_t i) {
        launcher_deepspeed_ = true;
        static const std::vector<std::string> kNoValue = {"--no_ssh_check", "--no_local_rank", "--force_multi",
                                                          "--no_python", "--save_pid", "--enable_each_rank_log",
                                                          "--elastic_training", "--bind_cores_to_rank",
                                                          "--module", "--no_ssh"};
        while (i < argv.size() && starts_with(argv[i].text, "-")) {
            std::string flag = argv[i].text;
            std::string value;
            const std::size_t at = i;
            if (const auto eq = flag.find('='); eq != std::string::npos) {
                value = flag.substr(eq + 1);
                flag = flag.substr(0, eq);
                ++i;
            } else if (std::find(kNoValue.begin(), kNoValue.end(), flag) != kNoValue.end()) {
                ++i;
            } else {
                if (i + 1 >= argv.size()) {
                    add(where(i, flag), "the value is missing");
                    return argv.size();
                }
                value = argv[i + 1].text;
                if (!expanded_ok(i + 1, flag, at) &&
                    (flag == "--num_nodes" || flag == "--num_gpus" || flag == "--num-nodes" || flag == "--num-gpus")) {
                    i += 2;
                    continue;
                }
                i += 2;
            }
            std::replace(flag.begin(), flag.end(), '-', '_');
            if (flag == "__num_nodes") {
                if (!parse_int_text(value, 1, kMaxGpus, nnodes_)) add(where(at, flag), "'" + value + "': expected a number of nodes");
                ds_nodes_given_ = true;
            } else if (flag == "__num_gpus") {
                if (!parse_int_text(value, 1, kMaxGpus, nproc_)) add(where(at, flag), "'" + value + "': expected a number of GPUs per node");
                ds_gpus_given_ = true;
            } else {
                result_.ignored.push_back({where(at), argv[at].text + (value.empty() || argv[at].text.find('=') != std::string::npos ? "" : " " + value),
                                           "DeepSpeed launcher option: not part of the layout"});
            }
        }
        return i;
    }

    std::size_t torchrun_options(const ShellCommand& argv, std::size_t i) {
        while (i < argv.size() && starts_with(argv[i].text, "-")) {
            std::string flag = argv[i].text;
            std::string value;
            bool inline_value = false;
            if (const auto eq = flag.find('='); eq != std::string::npos) {
                value = flag.substr(eq + 1);
                flag = flag.substr(0, eq);
                inline_value = true;
            }
            const LauncherOption* o = torchrun_option(flag);
            if (o == nullptr) {
                add(where(i, flag), "unknown torchrun option");
                ++i;
                continue;
            }
            const std::size_t at = i;
            if (o->takes_value && !inline_value) {
                if (i + 1 >= argv.size()) {
                    add(where(i, flag), "the value is missing");
                    return argv.size();
                }
                value = argv[++i].text;
                // Only the world size is read; an unknown port or address does not matter.
                const bool read = flag == "--nnodes" || flag == "--nproc-per-node" || flag == "--nproc_per_node";
                if (read && !expanded_ok(i, flag, at)) {
                    ++i;
                    continue;
                }
            }
            ++i;
            const std::string norm = flag == "--nproc_per_node" ? "--nproc-per-node" : flag;
            if (norm == "-m" || norm == "--module") {
                entry_module_ = true;
            } else if (norm == "--nnodes") {
                if (!parse_int_text(value, 1, kMaxGpus, nnodes_)) {
                    add(where(at, flag), "'" + value +
                                             "': expected a fixed number of nodes (elastic "
                                             "ranges such as 1:4 have no single world size)");
                }
            } else if (norm == "--nproc-per-node") {
                if (!parse_int_text(value, 1, kMaxGpus, nproc_)) {
                    add(where(at, flag), "'" + value +
                                             "': expected a number of processes (gpu/auto "
                                             "depend on the machine: give a number)");
                }
            } else {
                result_.ignored.push_back({where(at), flag + (value.empty() ? "" : " " + value),
                                           "launcher rendezvous or process option: not part of "
                                           "the layout"});
            }
        }
        return i;
    }

    // ---- the arguments -------------------------------------------------------------------
    void arguments(const ShellCommand& argv, std::size_t i) {
        while (i < argv.size()) {
            std::string flag = argv[i].text;
            if (!argv[i].unresolved.empty() && !starts_with(flag, "--")) {
                add(where(i), "an unknown word where an argument was expected: " + argv[i].unresolved);
                ++i;
                continue;
            }
            if (!starts_with(flag, "--")) {
                add(where(i), "'" + flag + "': a value without a flag");
                ++i;
                continue;
            }
            std::string inline_value;
            bool has_inline = false;
            if (const auto eq = flag.find('='); eq != std::string::npos) {
                inline_value = flag.substr(eq + 1);
                flag = flag.substr(0, eq);
                has_inline = true;
            }
            const std::size_t at = i++;
            if (options_.strict && megatron_upstream_flag_source(flag) == nullptr) {
                strict_refusal(at, flag);
            }
            if (const FlagSpec* spec = layout_flag(flag)) {
                std::string value;
                if (spec->takes_value) {
                    if (has_inline) {
                        value = inline_value;
                    } else if (i < argv.size() && !starts_with(argv[i].text, "--")) {
                        value = argv[i++].text;
                        if (!expanded_ok(i - 1, flag, at)) continue;
                        bool expanded = true;
                        while (spec->many && i < argv.size() && !starts_with(argv[i].text, "--")) {
                            value += " " + argv[i++].text;
                            expanded = expanded && expanded_ok(i - 1, flag, at);
                        }
                        if (!expanded) continue;
                    } else {
                        add(where(at, flag), "the value is missing");
                        continue;
                    }
                    if (has_inline && !expanded_ok(at, flag)) continue;
                } else if (has_inline) {
                    add(where(at, flag), "takes no value (found '=" + inline_value + "')");
                    continue;
                }
                remember(at, flag, value);
                continue;
            }
            // Ignored or unknown: the values are the words up to the next --flag.
            std::string text = argv[at].text;
            bool unexpanded = !argv[at].unresolved.empty();
            while (i < argv.size() && !starts_with(argv[i].text, "--")) {
                text += " " + argv[i].text;
                unexpanded = unexpanded || !argv[i].unresolved.empty();
                ++i;
            }
            ignored_flags_.insert(flag);
            if (const char* unread = megatron_unread_layout_flag(flag)) {
                add(where(at, flag), std::string("changes the layout in a way import-args does not read: ") + unread);
            } else if (const char* reason = megatron_ignored_flag_reason(flag)) {
                // An unexpanded value of an ignored flag is harmless: it is not read.
                (void)unexpanded;
                std::string why = reason;
                // A flag of an earlier release or of an extra arguments provider names where
                // upstream defines it.
                const char* source = megatron_upstream_flag_source(flag);
                if (source != nullptr && (starts_with(source, "core_v") || !starts_with(source, "megatron/training/"))) {
                    why += std::string(" (Megatron-LM ") + source + ")";
                }
                result_.ignored.push_back({where(at), text, why});
            } else if (options_.strict) {
                // strict_refusal has named it.
            } else if (const char* word = megatron_layout_like_word(flag); word != nullptr) {
                add(where(at, flag), std::string("unknown Megatron-LM argument whose name ('") + word +
                                         "') says it may change the layout: neither a layout argument nor a known "
                                         "ignored one of Megatron-LM (core_v0.12.0 to d98e8a64) or a known fork "
                                         "(docs/export.md)");
            } else {
                // A flag that no known release or fork defines: a fork's or a user's own
                // (--data-path2, --wandb-name). It is taken as not changing the layout, with a
                // warning; --strict refuses it.
                result_.ignored.push_back({where(at), text,
                                           "not an argument of Megatron-LM (core_v0.12.0 to d98e8a64) or of the "
                                           "forks import-args knows: taken as not changing the layout"});
                result_.warnings.push_back(where(at) + " " + flag + ": " + kUnknownFlagWarning);
            }
        }
    }

    // argparse keeps the last value of a flag given twice (its default "store" action), so
    // a launch script that appends an override (`ARGS+=(--seq-length 8192)`) means the later
    // one: the same rule here, with a note naming both.
    // --strict: only Megatron-LM's own arguments (the pinned commit and its releases).
    void strict_refusal(std::size_t at, const std::string& flag) {
        std::string why = "not an argument of Megatron-LM (core_v0.12.0 to d98e8a64); --strict accepts upstream's "
                          "arguments only";
        if (const char* reason = megatron_ignored_flag_reason(flag)) why += std::string(" (") + reason + ")";
        else if (layout_flag(flag) != nullptr) why += " (a fork's layout argument: Megatron-DeepSpeed, Pai-Megatron-Patch "
                                                      "or an earlier Megatron-LM)";
        add(where(at, flag), why);
    }

    void remember(std::size_t at, const std::string& flag, const std::string& value) {
        const auto it = seen_.find(flag);
        if (it != seen_.end() && it->second.value != value) {
            result_.notes.push_back(flag + " is given twice ('" + it->second.value + "' at " +
                                    where(static_cast<std::size_t>(it->second.index)) + ", '" + value + "' at " +
                                    where(at) + "): Megatron-LM's argparse keeps the last");
        }
        seen_[flag] = {static_cast<int>(at), value};
    }

    // --recompute-modules (nargs "+", words kept space-separated): Meshwork's modules; the
    // ones of block kinds no Meshwork model has are refused by name.
    void recompute_modules(TrainingConfig& t) {
        if (!has("--recompute-modules")) return;
        const std::string words = text("--recompute-modules");
        std::size_t start = 0;
        while (start < words.size()) {
            std::size_t end = words.find(' ', start);
            if (end == std::string::npos) end = words.size();
            const std::string name = words.substr(start, end - start);
            start = end + 1;
            if (name.empty()) continue;
            RecomputeModule m{};
            if (parse_recompute_module(name, m)) {
                t.recompute_modules.push_back(m);
            } else if (name == "gdn_norm_out" || name == "gdp_in_proj" || name == "gdp_qkv" || name == "mhc") {
                add(field("--recompute-modules"), "'" + name + "': a module of gated delta nets or hyper-connections, "
                                                  "which no Meshwork model has");
            } else {
                add(field("--recompute-modules"), "'" + name + "' is not a Megatron-LM recompute module (" +
                                                      recompute_module_names() + ")");
            }
        }
    }

    // ---- typed access ----------------------------------------------------------------------
    [[nodiscard]] bool has(const std::string& flag) const { return seen_.count(flag) > 0; }
    [[nodiscard]] bool megatron_arg_given(const std::string& flag) const { return ignored_flags_.count(flag) > 0; }
    std::string field(const std::string& flag) const {
        const auto it = seen_.find(flag);
        return it == seen_.end() ? flag : where(static_cast<std::size_t>(it->second.index), flag);
    }
    // "argv[K]" of a flag that was given.
    std::string position(const std::string& flag) const {
        const auto it = seen_.find(flag);
        return it == seen_.end() ? flag : where(static_cast<std::size_t>(it->second.index));
    }
    std::string text(const std::string& flag, const std::string& fallback = "") const {
        const auto it = seen_.find(flag);
        return it == seen_.end() ? fallback : it->second.value;
    }
    long long integer(const std::string& flag, long long fallback, long long min_value,
                      long long max_value) {
        if (!has(flag)) return fallback;
        long long v = 0;
        if (!parse_int_text(text(flag), min_value, max_value, v)) {
            add(field(flag), "'" + text(flag) + "' is not an integer in [" +
                                 std::to_string(min_value) + ", " + std::to_string(max_value) + "]");
            return fallback;
        }
        return v;
    }
    long long required(const std::string& flag, long long min_value, long long max_value) {
        if (!has(flag)) {
            add(flag, "required: the layout cannot be built without it");
            return min_value;
        }
        return integer(flag, min_value, min_value, max_value);
    }
    void conflict(const std::string& a, const std::string& b, const std::string& why) {
        if (has(a) && has(b)) add(field(b), "conflicts with " + field(a) + ": " + why);
    }
    void needs(const std::string& flag, const std::string& other, const std::string& why) {
        if (has(flag) && !has(other)) add(field(flag), "has no effect without " + other + ": " + why);
    }

    // ---- building the layout -----------------------------------------------------------------
    ModelSpec model(bool& vocab_known) {
        ModelSpec m;
        hybrid_layers(m);
        m.hidden_size = required("--hidden-size", 1, kMaxWidth);
        m.num_heads = static_cast<int>(required("--num-attention-heads", 1, 1 << 14));
        const bool swiglu = has("--swiglu");
        // Megatron's defaults (validate_args): 4h, or 2/3 of it rounded down to 64 for SwiGLU.
        const long long ffn_default =
            swiglu ? static_cast<long long>((4 * m.hidden_size * 2 / 3) / 64 * 64) : 4 * m.hidden_size;
        m.ffn_hidden_size = integer("--ffn-hidden-size", ffn_default, 1, kMaxWidth);
        if (!has("--ffn-hidden-size")) {
            result_.notes.push_back("--ffn-hidden-size not given: Megatron-LM's default " +
                                    std::to_string(ffn_default));
        }
        needs("--num-query-groups", "--group-query-attention",
              "Megatron-LM reads the groups only with grouped-query attention");
        conflict("--num-query-groups", "--num-key-value-heads", "one count of key/value heads");
        m.num_kv_heads = has("--group-query-attention")
                             ? static_cast<int>(integer("--num-query-groups", 1, 1, 1 << 14))
                             : m.num_heads;
        // Megatron-DeepSpeed: --num-key-value-heads alone turns grouped-query attention on.
        if (has("--num-key-value-heads")) {
            m.num_kv_heads = static_cast<int>(integer("--num-key-value-heads", m.num_heads, 1, 1 << 14));
        }
        if (m.num_kv_heads > m.num_heads || m.num_heads % m.num_kv_heads != 0) {
            add(field("--num-query-groups"), "the query groups must divide the attention heads");
        }
        if (has("--kv-channels")) {
            m.head_dim = integer("--kv-channels", 0, 1, kMaxWidth);
        } else if (m.hidden_size % m.num_heads != 0) {
            add(field("--hidden-size"), "not a multiple of --num-attention-heads (give --kv-channels)");
        } else {
            m.head_dim = m.hidden_size / m.num_heads;
        }
        const long long seq = integer("--seq-length", 0, 1, 1ll << 26);
        if (seq == 0 && !has("--max-position-embeddings")) {
            // Neither length is stated (a Retro or encoder script's usage line left empty):
            // say what is missing rather than build a model of no positions.
            required("--seq-length", 1, 1ll << 26);
            throw InputError(issues_);
        }
        m.max_position_embeddings = integer("--max-position-embeddings", seq, 1, 1ll << 26);
        if (!has("--max-position-embeddings") && seq > 0) {
            result_.notes.push_back("--max-position-embeddings not given: taken as --seq-length");
        }
        vocab_known = true;
        if (has("--padded-vocab-size")) {
            // The model's embedding is --padded-vocab-size when it is given, over --vocab-size
            // (training/argument_utils.py:474-478 at d98e8a64).
            m.vocab_size = integer("--padded-vocab-size", 0, 1, 1 << 24);
            if (has("--vocab-size")) {
                result_.notes.push_back("--padded-vocab-size " + text("--padded-vocab-size") + " is the embedding; " +
                                        field("--vocab-size") + " is not used for it (Megatron-LM reads the padded size first)");
            }
        } else if (has("--vocab-size")) {
            m.vocab_size = integer("--vocab-size", 0, 1, 1 << 24);
        } else if (text("--tokenizer-type") == "GPT2BPETokenizer" ||
                   (!has("--tokenizer-type") && megatron_arg_given("--merge-file"))) {
            // The GPT-2 BPE vocabulary that GPT2BPETokenizer loads; it is Megatron-LM's only
            // tokenizer that reads a --merge-file.
            m.vocab_size = 50257;
            if (!has("--tokenizer-type")) {
                result_.notes.push_back("--merge-file without --tokenizer-type: the GPT-2 BPE vocabulary (50257)");
            }
        } else if (options_.vocab_size) {
            m.vocab_size = *options_.vocab_size;
            result_.notes.push_back("vocabulary size " + std::to_string(m.vocab_size) + " from --vocab-size");
        } else {
            vocab_known = false;
        }
        if (has("--tokenizer-type")) {
            result_.ignored.push_back({position("--tokenizer-type"), "--tokenizer-type " + text("--tokenizer-type"),
                                       vocab_known && !has("--vocab-size") && !has("--padded-vocab-size")
                                           ? "tokenizer: read for its vocabulary size only"
                                           : "tokenizer: not part of the layout"});
        }
        // Megatron-LM spells RMSNorm/LayerNorm, Megatron-DeepSpeed rmsnorm/layernorm.
        const std::string norm = text("--normalization", "LayerNorm");
        if (norm == "RMSNorm" || norm == "rmsnorm") m.norm = NormKind::RmsNorm;
        else if (norm == "LayerNorm" || norm == "layernorm") m.norm = NormKind::LayerNorm;
        else add(field("--normalization"), "'" + norm + "': expected LayerNorm or RMSNorm");
        // --quick-geglu: gated, x·σ(1.702x) (argument_utils.py:323-326); gpt-oss adds the
        // offset and the clamp (mlp.py:325-332).
        conflict("--swiglu", "--quick-geglu", "one MLP activation");
        // --squared-relu: relu(x)² in an ungated MLP; Megatron-LM asserts it without --swiglu
        // (argument_utils.py:320-322 at d98e8a64).
        conflict("--swiglu", "--squared-relu", "one MLP activation");
        conflict("--quick-geglu", "--squared-relu", "one MLP activation");
        m.mlp = swiglu || has("--quick-geglu") ? MlpKind::Gated : MlpKind::Dense;
        if (has("--squared-relu")) m.mlp_activation = "relu2";
        if (has("--quick-geglu")) m.glu_activation = "quick_gelu";
        if (m.mlp == MlpKind::Gated) {
            m.glu_linear_offset = real("--glu-linear-offset", 0.0, -1e6, 1e6);
            m.glu_clamp = real("--activation-func-clamp-value", 0.0, 0.0, 1e6);
        }
        std::string pos = text("--position-embedding-type", "learned_absolute");
        // mrope (multimodal RoPE, Qwen2-VL's sections of the rotary dimensions) has RoPE's
        // shapes and no parameters (Megatron-LM training/arguments.py:2397-2398, :1643-1645 at
        // d98e8a64): read as rope.
        if (pos == "mrope") {
            result_.notes.push_back(field("--position-embedding-type") +
                                    " mrope: multimodal RoPE, the shapes and FLOPs of rope (read as rope)");
            pos = "rope";
        }
        if (pos != "learned_absolute" && pos != "rope" && pos != "yarn" && pos != "none") {
            add(field("--position-embedding-type"),
                "'" + pos + "': expected learned_absolute, rope, mrope, yarn or none");
        }
        // Pai-Megatron-Patch's --use-llama2-rotary-position-embeddings is its older name for
        // RoPE (megatron_patch/arguments.py:256-260 at a098ca5a).
        m.learned_position_embeddings = pos == "learned_absolute" &&
                                        !has("--use-rotary-position-embeddings") &&
                                        !has("--use-llama2-rotary-position-embeddings") &&
                                        !has("--no-position-embedding");
        if (has("--attention-head-type") && text("--attention-head-type") != "multihead") {
            // Pai's multiquery: one K/V head (megatron_patch/arguments.py:169-174).
            if (text("--attention-head-type") == "multiquery") {
                add(field("--attention-head-type"),
                    "multiquery (Pai-Megatron-Patch: one K/V head) is not read: state it as "
                    "--group-query-attention --num-query-groups 1");
            } else {
                add(field("--attention-head-type"), "'" + text("--attention-head-type") +
                                                         "': expected multihead or multiquery (Pai-Megatron-Patch)");
            }
        }
        if (has("--ds-sequence-parallel-size") && text("--ds-sequence-parallel-size") != "1") {
            add(field("--ds-sequence-parallel-size"),
                "changes the layout in a way import-args does not read: DeepSpeed-Ulysses sequence parallelism "
                "(Megatron-DeepSpeed; 1, its default, is read as none)");
        }
        m.tie_embeddings = !has("--untie-embeddings-and-output-weights");
        rope_and_details(m, pos);
        m.linear_bias = !has("--disable-bias-linear");
        m.qkv_bias = m.linear_bias || has("--add-qkv-bias");

        if (has("--multi-latent-attention")) {
            m.uses_mla = true;
            // Defaults of arguments.py's MLA group.
            m.mla.q_lora_rank = integer("--q-lora-rank", 0, 1, kMaxWidth);
            m.mla.kv_lora_rank = integer("--kv-lora-rank", 32, 1, kMaxWidth);
            // Pai-Megatron-Patch names the two head widths --qk-nope-head-dim and
            // --qk-rope-head-dim (megatron_patch/arguments.py:453-454 at a098ca5a).
            conflict("--qk-head-dim", "--qk-nope-head-dim", "one Q/K head width");
            conflict("--qk-pos-emb-head-dim", "--qk-rope-head-dim", "one positional head width");
            m.mla.qk_nope_head_dim =
                integer(has("--qk-nope-head-dim") ? "--qk-nope-head-dim" : "--qk-head-dim", 128, 1, kMaxWidth);
            m.mla.qk_rope_head_dim =
                integer(has("--qk-rope-head-dim") ? "--qk-rope-head-dim" : "--qk-pos-emb-head-dim", 64, 0, kMaxWidth);
            m.mla.v_head_dim = integer("--v-head-dim", 128, 1, kMaxWidth);
            m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
            m.num_kv_heads = m.num_heads;
        } else {
            for (const char* f : {"--q-lora-rank", "--kv-lora-rank", "--qk-head-dim", "--qk-pos-emb-head-dim",
                                  "--v-head-dim", "--qk-nope-head-dim", "--qk-rope-head-dim"}) {
                needs(f, "--multi-latent-attention", "an MLA dimension");
            }
        }
        if (megatron_deepspeed_moe()) {
            deepspeed_moe(m);
        } else if (has("--num-experts")) {
            auto& e = m.moe;
            if (text("--num-experts").find(' ') != std::string::npos) {
                add(field("--num-experts"), "'" + text("--num-experts") + "': Megatron-LM takes one expert count "
                                            "(a list of counts per layer group is Megatron-DeepSpeed's, with --deepspeed)");
            }
            e.num_experts = static_cast<int>(integer("--num-experts", 0, 1, 1 << 16));
            e.top_k = static_cast<int>(integer("--moe-router-topk", 2, 1, 1 << 16));
            e.expert_ffn_hidden = integer("--moe-ffn-hidden-size", m.ffn_hidden_size, 1, kMaxWidth);
            conflict("--moe-shared-expert-intermediate-size", "--shared-moe-ffn-hidden-size", "one shared-expert width");
            e.shared_ffn_hidden = integer("--moe-shared-expert-intermediate-size",
                                          integer("--shared-moe-ffn-hidden-size", 0, 1, kMaxWidth), 1, kMaxWidth);
            e.shared_expert_gate = has("--moe-shared-expert-gate");
            if (e.shared_ffn_hidden > 0) {
                // Megatron states the total width of the shared experts; Meshwork counts them
                // in routed-expert widths where that divides (DeepSeek), else as one.
                e.num_shared_experts =
                    !e.shared_expert_gate && e.shared_ffn_hidden % e.expert_ffn_hidden == 0
                        ? static_cast<int>(e.shared_ffn_hidden / e.expert_ffn_hidden)
                        : 1;
            }
            e.router_bias = has("--moe-router-enable-expert-bias");
            e.router_score = text("--moe-router-score-function", "softmax");
            if (e.router_score != "softmax" && e.router_score != "sigmoid") {
                add(field("--moe-router-score-function"), "'" + e.router_score + "': Meshwork models softmax and sigmoid");
            }
            if (e.router_bias && e.router_score == "softmax") {
                add(field("--moe-router-enable-expert-bias"),
                    "needs --moe-router-score-function sigmoid (TransformerConfig refuses expert bias with softmax)");
            }
            if (has("--moe-layer-freq")) {
                std::string error;
                if (!parse_moe_layer_freq(text("--moe-layer-freq"), m.num_layers, e.first_k_dense,
                                          e.layer_freq, error)) {
                    add(field("--moe-layer-freq"), error);
                }
            }
            if (e.top_k > e.num_experts) add(field("--moe-router-topk"), "more than --num-experts");
        } else {
            for (const char* f : {"--moe-router-topk", "--moe-ffn-hidden-size",
                                  "--moe-shared-expert-intermediate-size", "--moe-shared-expert-gate",
                                  "--moe-router-enable-expert-bias", "--moe-layer-freq",
                                  "--moe-expert-capacity-factor", "--moe-router-score-function"}) {
                needs(f, "--num-experts", "an MoE setting on a dense model");
            }
        }
        if (m.is_hybrid()) {
            mamba_and_experts(m);
        } else {
            for (const char* f : {"--mamba-state-dim", "--mamba-head-dim", "--mamba-num-groups", "--mamba-num-heads"}) {
                if (has(f)) result_.notes.push_back(field(f) + " is not used: not a hybrid model (no --hybrid-layer-pattern)");
            }
        }
        return m;
    }

    // Megatron-LM's hybrid model: --hybrid-layer-pattern (main) or --hybrid-override-pattern
    // (deprecated, forwarded to it; both at once assert, arguments.py:743-752 at d98e8a64)
    // decides the layers and their count (:786-796: --num-layers is ignored with a warning);
    // without a pattern, --is-hybrid-model or the ratios of core_v0.12 … core_v0.16 build one
    // (all Mamba-2 at the ratios' default 0).
    void hybrid_layers(ModelSpec& m) {
        conflict("--hybrid-layer-pattern", "--hybrid-override-pattern", "one layer pattern (Megatron-LM asserts)");
        const std::string flag = has("--hybrid-layer-pattern") ? "--hybrid-layer-pattern" : "--hybrid-override-pattern";
        std::string pattern = text(flag);
        if (has(flag)) {
            if (const std::string problem = megatron_hybrid_pattern_problem(pattern); !problem.empty()) {
                add(field(flag), problem);
                return;
            }
            m.num_layers = static_cast<int>(pattern.size());
            const long long given = integer("--num-layers", m.num_layers, 1, 10000);
            if (given != m.num_layers) {
                result_.notes.push_back(field("--num-layers") + " " + text("--num-layers") + " is not used: " +
                                        field(flag) + " has " + std::to_string(m.num_layers) +
                                        " layers (Megatron-LM takes the pattern's count)");
            }
            for (const char* f : {"--hybrid-attention-ratio", "--hybrid-mlp-ratio"}) {
                if (has(f)) result_.notes.push_back(field(f) + " is not used: " + flag + " gives every layer");
            }
        } else {
            m.num_layers = static_cast<int>(required("--num-layers", 1, 10000));
            // pretrain_mamba.py builds a MambaModel from the ratios even when none is given
            // (pretrain_mamba.py:73-75 at core_v0.12.0).
            if (!has("--is-hybrid-model") && !has("--hybrid-attention-ratio") && !has("--hybrid-mlp-ratio") &&
                entry_script_ != "pretrain_mamba.py") {
                return;
            }
            const double attention = real("--hybrid-attention-ratio", 0.0, 0, 1);
            const double mlp = real("--hybrid-mlp-ratio", 0.0, 0, 1);
            if (attention + mlp > 1) {
                add(field("--hybrid-mlp-ratio"), "the attention and MLP ratios add up to more than 1 (Megatron-LM asserts)");
                return;
            }
            pattern = megatron_pattern_from_ratios(m.num_layers, attention, mlp);
            result_.notes.push_back("hybrid layer pattern " + pattern + " from the ratios (attention " +
                                    text("--hybrid-attention-ratio", "0") + ", MLP " + text("--hybrid-mlp-ratio", "0") +
                                    ") as Megatron-LM's pattern_from_ratios builds it");
        }
        try {
            m.block_kinds = block_kinds_from_pattern(pattern, file_, field(flag));
        } catch (const InputError& e) {
            add(field(flag), e.issues().front().message);
        }
    }

    // The Mamba-2 sizes (TransformerConfig defaults: state 128, head 64, groups 8, heads
    // hidden·expand / head with expand 2, mamba_mixer.py:217-251 at d98e8a64) and the
    // pattern's E layers against --num-experts.
    void mamba_and_experts(ModelSpec& m) {
        bool any_moe = false;
        for (const auto& k : m.block_kinds) any_moe = any_moe || k.ffn == FfnKind::Moe;
        const std::string pattern_field = field(has("--hybrid-layer-pattern") ? "--hybrid-layer-pattern" : "--hybrid-override-pattern");
        if (any_moe && !m.is_moe()) add(pattern_field, "E (MoE) layers need --num-experts");
        if (!any_moe && m.is_moe()) {
            result_.notes.push_back(field("--num-experts") + " is not used: the hybrid pattern has no E (MoE) layer");
            m.moe = MoeSpec{};
        }
        if (!m.has_mixer(MixerKind::Mamba2)) {
            for (const char* f : {"--mamba-state-dim", "--mamba-head-dim", "--mamba-num-groups", "--mamba-num-heads"}) {
                if (has(f)) result_.notes.push_back(field(f) + " is not used: the hybrid pattern has no Mamba (M) layer");
            }
            return;
        }
        auto& d = m.mamba;
        d.state_dim = integer("--mamba-state-dim", 128, 1, kMaxWidth);
        d.head_dim = integer("--mamba-head-dim", 64, 1, kMaxWidth);
        d.num_groups = static_cast<int>(integer("--mamba-num-groups", 8, 1, 1 << 14));
        if (has("--mamba-num-heads")) {
            d.num_heads = static_cast<int>(integer("--mamba-num-heads", 1, 1, 1 << 16));
        } else if ((2 * m.hidden_size) % d.head_dim != 0) {
            add(field("--mamba-head-dim"), "does not divide the Mamba inner width 2 × --hidden-size (Megatron-LM asserts)");
        } else {
            d.num_heads = static_cast<int>(2 * m.hidden_size / d.head_dim);
            result_.notes.push_back("--mamba-num-heads not given: hidden size × 2 / head dim = " +
                                    std::to_string(d.num_heads) + " (Megatron-LM's default)");
        }
        if (d.num_heads > 0 && d.num_heads % d.num_groups != 0) {
            add(field("--mamba-num-groups"), std::to_string(d.num_groups) + " groups do not divide " +
                                                 std::to_string(d.num_heads) + " Mamba heads (Megatron-LM asserts)");
        }
    }

    // Megatron-DeepSpeed's MoE (DeepSpeed-MoE): --num-experts is a list (nargs "+", default
    // [1]), --topk, --expert-interval, --moe-expert-parallel-size (megatron/arguments.py:608-615,
    // :1151, :1159 at 4efb479d). It is read with --deepspeed or any of its own MoE flags.
    bool megatron_deepspeed_moe() const {
        return has("--deepspeed") || has("--moe-expert-parallel-size") || has("--topk") || has("--expert-interval") ||
               has("--mlp-type") || has("--enable-expert-tensor-parallelism") ||
               has("--moe-train-capacity-factor") || has("--disable-moe-token-dropping");
    }
    void deepspeed_moe(ModelSpec& m) {
        const std::string fork = " (Megatron-DeepSpeed 4efb479d, megatron/arguments.py)";
        std::vector<long long> counts;
        const std::string list = text("--num-experts", "1");
        for (std::size_t start = 0; start < list.size();) {
            std::size_t end = list.find(' ', start);
            if (end == std::string::npos) end = list.size();
            long long n = 0;
            if (!parse_int_text(list.substr(start, end - start), 1, 1 << 16, n)) {
                add(field("--num-experts"), "'" + list + "': expected expert counts" + fork);
                return;
            }
            counts.push_back(n);
            start = end + 1;
        }
        const int interval = static_cast<int>(integer("--expert-interval", 2, 1, 10000));
        // get_num_experts_per_layer (model/transformer.py:1650-1658): one count for every
        // expert layer, or one per layer group; layer L (1-based) has experts when L % interval == 0.
        if (counts.size() > 1) {
            if (static_cast<int>(counts.size()) != m.num_layers / interval) {
                add(field("--num-experts"), std::to_string(counts.size()) + " counts for " +
                                                std::to_string(m.num_layers / interval) +
                                                " expert layers: Megatron-DeepSpeed asserts one or one per expert layer" + fork);
                return;
            }
            for (long long c : counts) {
                if (c != counts.front()) {
                    add(field("--num-experts"), "'" + list + "': different expert counts per layer (pyramid MoE); a "
                                                "ModelSpec holds one count" + fork);
                    return;
                }
            }
        }
        for (const char* f : {"--moe-expert-parallel-size", "--topk", "--expert-interval", "--mlp-type",
                              "--enable-expert-tensor-parallelism", "--moe-train-capacity-factor",
                              "--disable-moe-token-dropping"}) {
            if (counts.front() == 1 && has(f)) {
                result_.ignored.push_back({position(f), std::string(f) + (text(f).empty() ? "" : " " + text(f)),
                                           "a Megatron-DeepSpeed MoE setting with one expert (--num-experts 1, a dense model)"});
            }
        }
        if (counts.front() == 1) return;
        if (text("--mlp-type", "standard") != "standard") {
            add(field("--mlp-type"), "'" + text("--mlp-type") + "': residual MoE (a dense MLP mixed with the experts by a "
                                     "learned coefficient) is not a block Meshwork models" + fork);
            return;
        }
        auto& e = m.moe;
        e.num_experts = static_cast<int>(counts.front());
        e.top_k = static_cast<int>(integer("--topk", 1, 1, 1 << 16));
        e.expert_ffn_hidden = m.ffn_hidden_size;
        e.first_k_dense = interval - 1;
        e.layer_freq = interval;
        if (e.top_k > e.num_experts) add(field("--topk"), "more than --num-experts");
        result_.notes.push_back("Megatron-DeepSpeed MoE: " + std::to_string(e.num_experts) + " experts, top-" +
                                std::to_string(e.top_k) + ", in every layer L with L % " + std::to_string(interval) +
                                " == 0 (--expert-interval" + (has("--expert-interval") ? "" : ", default 2") + ")");
    }

    double real(const std::string& flag, double fallback, double min_value, double max_value) {
        if (!has(flag)) return fallback;
        const std::string v = text(flag);
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        if (end == v.c_str() || *end != '\0' || !std::isfinite(d) || d < min_value || d > max_value) {
            add(field(flag), "'" + v + "' is not a number in [" + std::to_string(min_value) + ", " +
                                 std::to_string(max_value) + "]");
            return fallback;
        }
        return d;
    }

    // RoPE, norm epsilon, QK norm, window, MTP, router scores, with Megatron-LM's defaults
    // (docs/upstream-megatron.md).
    void rope_and_details(ModelSpec& m, const std::string& pos) {
        conflict("--norm-epsilon", "--layernorm-epsilon", "one epsilon");
        m.norm_eps = real("--norm-epsilon", real("--layernorm-epsilon", 1e-5, 0, 1), 0, 1);
        // Megatron-LM's dropout defaults are 0.1 (transformer_config.py hidden_dropout,
        // attention_dropout); the cost model stores masks only above 0.
        m.hidden_dropout = real("--hidden-dropout", 0.1, 0, 1);
        m.attention_dropout = real("--attention-dropout", 0.1, 0, 1);
        // With MLA, --qk-layernorm is the norm of the Q and KV latents, which MLA always has
        // (counted with MLA); otherwise per-head norms of Q and K (Qwen3).
        m.qk_norm = has("--qk-layernorm") && !has("--multi-latent-attention");
        if (has("--window-size")) {
            // LEFT,RIGHT keys beside the query; a causal window of W keys is W - 1,0.
            const std::string w = text("--window-size");
            long long left = 0;
            if (!parse_int_text(w.substr(w.find_first_not_of("(["), w.find(',') - w.find_first_not_of("([")), 0,
                                1ll << 26, left)) {
                add(field("--window-size"), "'" + w + "': expected LEFT,RIGHT such as 4095,0");
            }
            m.sliding_window = left + 1;
            if (has("--window-attn-skip-freq")) {
                // An integer N: every N-th layer full. A list pattern Meshwork cannot hold.
                m.global_attention_every = static_cast<int>(integer("--window-attn-skip-freq", 0, 1, 1 << 20));
            }
        } else if (has("--window-attn-skip-freq")) {
            add(field("--window-attn-skip-freq"), "full-attention layers without --window-size: no window to skip");
        }
        if (has("--sliding-window")) {
            conflict("--window-size", "--sliding-window", "one attention window");
            if (!has("--window-size")) m.sliding_window = integer("--sliding-window", 0, 1, 1ll << 26);
        }
        if (has("--softmax-type")) {
            const std::string t = text("--softmax-type");
            if (t == "learnable") {
                m.attention_sinks = true;
            } else if (t != "vanilla") {
                add(field("--softmax-type"), "'" + t + "': Meshwork holds vanilla and learnable (attention sinks); "
                                             "off-by-one is a fixed offset it does not model");
            }
        }
        m.mtp_layers = static_cast<int>(integer("--mtp-num-layers", 0, 0, 64));
        if (m.learned_position_embeddings) {
            for (const char* f : {"--rotary-base", "--rotary-percent", "--use-rope-scaling", "--rope-type",
                                  "--rotary-scaling-factor", "--rotary-seq-len-interpolation-factor"}) {
                if (has(f)) result_.ignored.push_back({position(f), f, "RoPE setting with learned positions: not used"});
            }
            return;
        }
        m.rope.theta = real("--rotary-base", 10000, 1, 1e12);
        m.rope.percent = real("--rotary-percent", 1.0, 0, 1);
        // --rope-type: MLA takes yarn by default, other attention rope (arguments.py:2906).
        const bool mla = has("--multi-latent-attention");
        const std::string rope_type = text("--rope-type", mla ? "yarn" : "rope");
        if (rope_type != "rope" && rope_type != "yarn") add(field("--rope-type"), "'" + rope_type + "': expected rope or yarn");
        // Every RoPE flag given is read or listed: none vanishes.
        const auto unused = [&](const char* f, const std::string& why) {
            if (has(f)) result_.ignored.push_back({position(f), std::string(f) + (text(f).empty() ? "" : " " + text(f)), why});
        };
        if (mla) {
            // MLA builds its own rotary embedding from --rope-type: YaRN with
            // --rotary-scaling-factor, or plain RoPE; neither reads --use-rope-scaling or the
            // interpolation factor (multi_latent_attention.py:181-199 at d98e8a64).
            const std::string mla_why = "multi-latent attention builds its rotary embedding from --rope-type "
                                        "(multi_latent_attention.py:181-199): Megatron-LM does not read it";
            unused("--use-rope-scaling", mla_why);
            unused("--rope-scaling-factor", mla_why);
            unused("--rotary-seq-len-interpolation-factor", mla_why);
            if (rope_type == "yarn") {
                m.rope.scaling = "yarn";
                m.rope.factor = real("--rotary-scaling-factor", 1.0, 0, 1e6);
            } else {
                unused("--rotary-scaling-factor", "read by YaRN only; --rope-type rope");
                if (!megatron_arg_given("--no-rope-fusion")) {
                    add(field("--rope-type"), "multi-latent attention with --rope-type rope needs --no-rope-fusion: "
                                              "MLATransformerConfig raises 'apply_rope_fusion for MLA only works with "
                                              "YARN RoPE' (transformer_config.py:3345-3346)");
                }
            }
            return;
        }
        if (has("--rope-type") && rope_type != "rope") {
            // get_transformer_config asserts it (training/argument_utils.py:339-340).
            add(field("--rope-type"), "'" + rope_type + "' is for multi-latent attention: Megatron-LM asserts "
                                      "rope for other attention (training/argument_utils.py:339-340); YaRN there is "
                                      "--position-embedding-type yarn");
        }
        if (has("--use-rope-scaling")) {
            m.rope.scaling = "llama3";
            m.rope.factor = real("--rope-scaling-factor", 8.0, 0, 1e6);
            if (pos == "yarn") {
                add(field("--use-rope-scaling"), "conflicts with --position-embedding-type yarn: one RoPE scaling");
            }
            unused("--rotary-scaling-factor", "read by YaRN only (--position-embedding-type yarn)");
            unused("--rotary-seq-len-interpolation-factor", "--use-rope-scaling is the scaling read");
        } else if (pos == "yarn") {
            m.rope.scaling = "yarn";
            m.rope.factor = real("--rotary-scaling-factor", 1.0, 0, 1e6);
            unused("--rope-scaling-factor", "read with --use-rope-scaling only");
            unused("--rotary-seq-len-interpolation-factor", "YaRN is the scaling read");
        } else {
            unused("--rope-scaling-factor", "read with --use-rope-scaling only");
            unused("--rotary-scaling-factor", "read by YaRN only (--position-embedding-type yarn)");
            if (has("--rotary-seq-len-interpolation-factor")) {
                m.rope.scaling = "linear";
                m.rope.factor = static_cast<double>(integer("--rotary-seq-len-interpolation-factor", 1, 1, 1 << 20));
            }
        }
    }

    void build() {
        auto& l = result_.layout;
        bool vocab_known = true;
        const ModelSpec spec = model(vocab_known);
        if (!issues_.empty()) return;
        const ModelMatch match = resolve_model(spec, vocab_known,
                                               options_.name.empty() ? "imported" : options_.name,
                                               file_, "model");
        l.model = match.model;
        l.model_ref = match.preset;
        if (!match.preset.empty()) {
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

    // An srun or #SBATCH count: srun's option first, then the job's; `fallback` if neither.
    long long slurm_count(const std::string& option, long long fallback, bool* found = nullptr) {
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

    void world(Layout& l) {
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

    void pipeline(Layout& l) {
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

    // Megatron-LM's data-parallel overlap flags, both off by default (arguments.py:3121,
    // 3148 at d98e8a64); --overlap-param-gather needs --overlap-grad-reduce and the distributed
    // optimizer or Megatron-FSDP (asserts at arguments.py:1024-1029). Megatron-DeepSpeed runs
    // DeepSpeed's engine: its overlap is the DeepSpeed config's, not these flags.
    void overlap(Layout& l, bool sharded_optimizer) {
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

    // The MoE token dispatcher (--moe-token-dispatcher-type, default allgather,
    // transformer_config.py:891 at d98e8a64), the flex backend (--moe-flex-dispatcher-backend,
    // default deepep, :898; the deprecated --moe-enable-deepep needs flex, :1743-1748) and
    // --overlap-moe-expert-parallel-comm (model_parallel_config.py:343). Megatron-DeepSpeed
    // runs DeepSpeed's MoE, an all-to-all: the layout's default.
    void moe_dispatch(Layout& l) {
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

    // Anything that moves memory changes the layout. Megatron-LM's --optimizer-cpu-offload
    // keeps --optimizer-offload-fraction of the optimizer state on the host (argparse default
    // 1.0, arguments.py:2918-2922 at d98e8a64) and needs --use-precision-aware-optimizer
    // (:1884-1888); Pai-Megatron-Patch's --optimizer hybridadam does the same with
    // --optimizer-offload-policy static (its default) and the fraction, or moves what a
    // memory threshold leaves with policy auto (megatron_patch/arguments.py:467-478 at
    // a098ca5a). A layout holds the whole optimizer on the host or none of it.
    void optimizer_offload(TrainingConfig& t) {
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

    void training(Layout& l) {
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
        if (has("--fp8-hybrid") || has("--fp8-e4m3")) {
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
        // (arguments.py:619-631), both per layer.
        if (has("--cuda-graph-impl")) {
            const std::string g = text("--cuda-graph-impl");
            if (!parse_cuda_graphs(g, t.cuda_graphs) || g == "per-layer" || g == "full-iteration") {
                add(field("--cuda-graph-impl"), "'" + g + "': expected none, local, transformer_engine or full_iteration");
            }
            conflict("--cuda-graph-impl", "--enable-cuda-graph", "one CUDA-graph implementation");
            conflict("--cuda-graph-impl", "--external-cuda-graph", "one CUDA-graph implementation");
        } else if (has("--enable-cuda-graph") || has("--external-cuda-graph")) {
            conflict("--enable-cuda-graph", "--external-cuda-graph", "one CUDA-graph implementation");
            t.cuda_graphs = CudaGraphs::PerLayer;
        }
        // --cpu-offloading-num-layers N > 0 turns CPU offloading on (arguments.py:1950-1951 at
        // d98e8a64); validation then holds Megatron's own rules (layout_rules.h).
        if (has("--cpu-offloading-num-layers")) {
            t.offload_activation_layers = static_cast<int>(integer("--cpu-offloading-num-layers", 0, 0, 100000));
        }
        // Honoured for bf16 parameters only (arguments.py:1204-1216 at d98e8a64).
        t.grad_reduce_in_bf16 = has("--grad-reduce-in-bf16") && (t.dtype == DType::Bf16 || t.dtype == DType::Fp8);
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
        if (has("--moe-expert-capacity-factor")) {
            const std::string v = text("--moe-expert-capacity-factor");
            char* end = nullptr;
            const double f = std::strtod(v.c_str(), &end);
            if (end == v.c_str() || *end != '\0' || !std::isfinite(f) || f <= 0 || f > 1000) {
                add(field("--moe-expert-capacity-factor"), "'" + v + "' is not a positive number");
            } else {
                t.moe_capacity_factor = f;
            }
        }
    }

    const std::string& file_;
    const ImportOptions& options_;
    const ShellCommand* argv_ = nullptr;
    std::map<std::string, SeenArg> seen_;
    std::vector<InputIssue> issues_;
    ImportResult result_;
    bool launched_ = false;  // torchrun or python -m torch.distributed.run
    bool entry_module_ = false;  // the training script is a module (python -m, torchrun -m)
    long long nnodes_ = 1;
    long long nproc_ = 1;
    const ScriptRun* script_ = nullptr;
    std::set<std::string> ignored_flags_;  // the ignored flags that were given
    bool from_variable_ = false;
    bool found_command_ = false;
    bool launcher_srun_ = false;
    bool launcher_deepspeed_ = false;
    bool ds_nodes_given_ = false;
    bool ds_gpus_given_ = false;
    std::map<std::string, std::string> srun_;  // --nodes, --ntasks, --ntasks-per-node, --gpus-per-node
    int command_line_ = 0;
    // The training script's file name (pretrain_gpt.py, pretrain_mamba.py, ...); "" for bare arguments.
    std::string entry_script_;
};

}  // namespace

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
