// The Megatron-LM launch-script parser behind import_megatron (megatron_import.h): one path
// through a script (shell_script.h) to the training command it launches, its arguments read
// and typed, and the layout they describe. Internal to core/export. Its methods are defined by
// job: megatron_import.cpp (the entry and the flag table), megatron_import_command.cpp (which
// command trains, and its launcher's options), megatron_import_arguments.cpp (the arguments,
// read and typed), megatron_import_model.cpp (the model they describe) and
// megatron_import_layout.cpp (world, pipeline, overlaps, MoE dispatch, offload, training).
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/error.h"
#include "core/export/megatron_import.h"
#include "core/export/shell_script.h"
#include "core/layout/layout.h"
#include "core/model/model_spec.h"

namespace meshwork::megatron_import_detail {

inline constexpr long long kMaxAxis = 1 << 20;
inline constexpr long long kMaxWidth = 1 << 20;
inline constexpr long long kMaxBatch = 1ll << 30;
inline constexpr long long kMaxGpus = 1 << 22;
inline constexpr const char* kUnknownFlagWarning =
    "unknown to Megatron-LM (core_v0.12.0 to d98e8a64) and to the forks import-args knows; read as not "
    "changing the layout (listed in ignored[]). --strict refuses it";
// Paths through conditions on unknown values that an import follows before it asks for --set.
inline constexpr int kMaxScriptPaths = 256;

struct FlagSpec {
    std::string_view name;
    bool takes_value;
    // nargs "+": the value is every word up to the next --flag, kept space-separated.
    bool many = false;
};

// One of the arguments that describe the layout (the table in megatron_import.cpp), or null.
const FlagSpec* layout_flag(const std::string& name);
// Whether `flag` is one of the model's architecture arguments that MegatronParser::model()
// reads (megatron_import_model.cpp): what a caller that names the model itself leaves out.
bool model_architecture_flag(const std::string& flag);

inline bool starts_with(const std::string& s, std::string_view prefix) {
    return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

inline std::string basename(const std::string& path) {
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
    ImportResult run(const ScriptRun& script);

    [[nodiscard]] bool launched_training() const { return found_command_; }

    // The model, when the arguments do not describe it (a Megatron-Bridge recipe takes it from
    // a Hugging Face config): build() uses it instead of reading --num-layers and the rest.
    void use_model(const ModelSpec& model) { given_model_ = model; }

private:
    // ---- the command ---------------------------------------------------------------------
    static bool megatron_flag(const std::string& word);
    static bool python_name(const std::string& b);
    static bool py_script(const std::string& w) { return w.size() > 3 && w.compare(w.size() - 3, 3, ".py") == 0; }
    // CPython's options that take a value (python(1)): -W and -X; -c and -m end the options.
    static bool python_option_with_value(const std::string& o) { return o == "-W" || o == "-X"; }
    // Index after the interpreter's options that start at `j` (`python -u -O -m ...`).
    static std::size_t skip_python_options(const std::vector<ScriptWord>& w, std::size_t j);
    // A training entry point of Megatron-LM and its forks: pretrain_gpt.py, pretrain_mamba.py,
    // Megatron-DeepSpeed's pretrain_gpt.py, Pai-Megatron-Patch's pretrain_qwen.py, ...
    static bool training_entry_point(const std::string& script) { return starts_with(basename(script), "pretrain_"); }
    // A module run as the entry point (`python -m megatron.training.pretrain_gpt`, torchrun's
    // -m): its file is the last dotted component with .py (`pretrain_gpt.py`); "" for a word
    // that is not a dotted module name.
    static std::string module_script(const std::string& module);
    // Whether the words from `k` carry a layout argument (--num-layers, --micro-batch-size, ...):
    // an argument only a training command takes. Ignored flags such as --split or --seed
    // are shared with data-preparation scripts and do not make a command training.
    static bool carries_layout_arguments(const std::vector<ScriptWord>& w, std::size_t k);
    // The script a launcher at `k` runs: the first *.py word after it; npos for none.
    static std::size_t script_after(const std::vector<ScriptWord>& w, std::size_t k);
    // Only a command that runs a known training entry point, or carries the training
    // arguments, trains: `python load_ratios.py --split train` before the torchrun line is
    // data preparation.
    static bool trains(const std::vector<ScriptWord>& w, std::size_t k);

    // Where the launcher (torchrun, deepspeed, python, or the script itself) starts in `c`;
    // npos when `c` does not launch a Megatron-LM training script.
    static std::size_t launcher_index(const ScriptCommand& c);

    std::size_t pick_command(const ScriptRun& script, ShellCommand& argv);

    // The Python programs the script runs instead of a training entry point, for the message
    // when nothing trains: "scripts/training/run_recipe.py (line 204)". A program is the first
    // *.py word of a command (after python, torchrun or a wrapper) or the module of `python -m`.
    static std::string launched_programs(const ScriptRun& script);

    // No command launches training: the Megatron-LM arguments of a variable (a config file
    // that a job script sources), when exactly one variable holds a model: --num-layers,
    // which Megatron-LM requires, or a hybrid layer pattern, which gives the layer count.
    std::size_t from_variable(const ScriptRun& script, ShellCommand& argv);

    // srun's options before the command it runs (srun(1)); returns the index after them.
    std::size_t srun_options(const ShellCommand& w, std::size_t k, std::size_t end);

    std::string where(std::size_t k) const {
        if (argv_ != nullptr && k < argv_->size() && !(*argv_)[k].origin.empty()) return (*argv_)[k].origin;
        return "argv[" + std::to_string(k) + "]";
    }
    std::string where(std::size_t k, const std::string& flag) const;
    void add(const std::string& field, const std::string& message);
    // Word `k` must be known; the error names the argument at `at` and why it is unknown.
    bool expanded_ok(std::size_t k, const std::string& flag, std::size_t at);
    bool expanded_ok(std::size_t k, const std::string& flag) { return expanded_ok(k, flag, k); }

    // Reads torchrun / python -m torch.distributed.run / deepspeed / python; returns the
    // index of the first Megatron argument.
    std::size_t launcher(const ShellCommand& argv);

    // DeepSpeed's launcher (deepspeed/launcher/runner.py): --num_nodes, --num_gpus; the
    // rest (hostfile, ports, ...) is listed.
    std::size_t deepspeed_options(const ShellCommand& argv, std::size_t i);

    std::size_t torchrun_options(const ShellCommand& argv, std::size_t i);

    // ---- the arguments -------------------------------------------------------------------
    void arguments(const ShellCommand& argv, std::size_t i);

    // argparse keeps the last value of a flag given twice (its default "store" action), so
    // a launch script that appends an override (`ARGS+=(--seq-length 8192)`) means the later
    // one: the same rule here, with a note naming both.
    // --strict: only Megatron-LM's own arguments (the pinned commit and its releases).
    void strict_refusal(std::size_t at, const std::string& flag);

    void remember(std::size_t at, const std::string& flag, const std::string& value);

    // --recompute-modules (nargs "+", words kept space-separated): Meshwork's modules; the
    // ones of block kinds no Meshwork model has are refused by name.
    void recompute_modules(TrainingConfig& t);
    void cuda_graph_modules(TrainingConfig& t);

    // ---- typed access ----------------------------------------------------------------------
    [[nodiscard]] bool has(const std::string& flag) const { return seen_.count(flag) > 0; }
    [[nodiscard]] bool megatron_arg_given(const std::string& flag) const { return ignored_flags_.count(flag) > 0; }
    std::string field(const std::string& flag) const;
    // "argv[K]" of a flag that was given.
    std::string position(const std::string& flag) const;
    std::string text(const std::string& flag, const std::string& fallback = "") const;
    long long integer(const std::string& flag, long long fallback, long long min_value,
                      long long max_value);
    long long required(const std::string& flag, long long min_value, long long max_value);
    void conflict(const std::string& a, const std::string& b, const std::string& why);
    void needs(const std::string& flag, const std::string& other, const std::string& why);

    // ---- building the layout -----------------------------------------------------------------
    ModelSpec model(bool& vocab_known);

    // Megatron-LM's hybrid model: --hybrid-layer-pattern (main) or --hybrid-override-pattern
    // (deprecated, forwarded to it; both at once assert, arguments.py:743-752 at d98e8a64)
    // decides the layers and their count (:786-796: --num-layers is ignored with a warning);
    // without a pattern, --is-hybrid-model or the ratios of core_v0.12 … core_v0.16 build one
    // (all Mamba-2 at the ratios' default 0).
    void hybrid_layers(ModelSpec& m);

    // The Mamba-2 sizes (TransformerConfig defaults: state 128, head 64, groups 8, heads
    // hidden·expand / head with expand 2, mamba_mixer.py:217-251 at d98e8a64) and the
    // pattern's E layers against --num-experts.
    void mamba_and_experts(ModelSpec& m);

    // Megatron-DeepSpeed's MoE (DeepSpeed-MoE): --num-experts is a list (nargs "+", default
    // [1]), --topk, --expert-interval, --moe-expert-parallel-size (megatron/arguments.py:608-615,
    // :1151, :1159 at 4efb479d). It is read with --deepspeed or any of its own MoE flags.
    bool megatron_deepspeed_moe() const;
    void deepspeed_moe(ModelSpec& m);

    double real(const std::string& flag, double fallback, double min_value, double max_value);

    // RoPE, norm epsilon, QK norm, window, MTP, router scores, with Megatron-LM's defaults
    // (docs/upstream-megatron.md).
    void rope_and_details(ModelSpec& m, const std::string& pos);

    void build();

    // An srun or #SBATCH count: srun's option first, then the job's; `fallback` if neither.
    long long slurm_count(const std::string& option, long long fallback, bool* found = nullptr);

    void world(Layout& l);

    void pipeline(Layout& l);

    // Megatron-LM's data-parallel overlap flags, both off by default (arguments.py:3121,
    // 3148 at d98e8a64); --overlap-param-gather needs --overlap-grad-reduce and the distributed
    // optimizer or Megatron-FSDP (asserts at arguments.py:1024-1029). Megatron-DeepSpeed runs
    // DeepSpeed's engine: its overlap is the DeepSpeed config's, not these flags.
    void overlap(Layout& l, bool sharded_optimizer);

    // The MoE token dispatcher (--moe-token-dispatcher-type, default allgather,
    // transformer_config.py:891 at d98e8a64), the flex backend (--moe-flex-dispatcher-backend,
    // default deepep, :898; the deprecated --moe-enable-deepep needs flex, :1743-1748) and
    // --overlap-moe-expert-parallel-comm (model_parallel_config.py:343). Megatron-DeepSpeed
    // runs DeepSpeed's MoE, an all-to-all: the layout's default.
    void moe_dispatch(Layout& l);

    // Anything that moves memory changes the layout. Megatron-LM's --optimizer-cpu-offload
    // keeps --optimizer-offload-fraction of the optimizer state on the host (argparse default
    // 1.0, arguments.py:2918-2922 at d98e8a64) and needs --use-precision-aware-optimizer
    // (:1884-1888); Pai-Megatron-Patch's --optimizer hybridadam does the same with
    // --optimizer-offload-policy static (its default) and the fraction, or moves what a
    // memory threshold leaves with policy auto (megatron_patch/arguments.py:467-478 at
    // a098ca5a). A layout holds the whole optimizer on the host or none of it.
    void optimizer_offload(TrainingConfig& t);

    void training(Layout& l);

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
    std::optional<ModelSpec> given_model_;
};

}  // namespace meshwork::megatron_import_detail
