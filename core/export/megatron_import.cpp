#include "export/megatron_import.h"

#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <string_view>

#include "common/error.h"
#include "export/canonical_layout.h"
#include "export/import_common.h"
#include "export/megatron_flags.h"
#include "export/model_match.h"
#include "export/moe_layer_pattern.h"
#include "export/shell_words.h"
#include "export/stage_split.h"

namespace meshwork {

namespace {

constexpr long long kMaxAxis = 1 << 20;
constexpr long long kMaxWidth = 1 << 20;
constexpr long long kMaxBatch = 1ll << 30;
constexpr long long kMaxGpus = 1 << 22;

struct FlagSpec {
    std::string_view name;
    bool takes_value;
};

// The arguments that describe the layout (arguments.py); read below.
constexpr std::array kLayoutFlags = std::to_array<FlagSpec>({
    {"--num-layers", true}, {"--hidden-size", true}, {"--ffn-hidden-size", true},
    {"--num-attention-heads", true}, {"--group-query-attention", false},
    {"--num-query-groups", true}, {"--kv-channels", true}, {"--seq-length", true},
    {"--max-position-embeddings", true}, {"--vocab-size", true}, {"--tokenizer-type", true},
    {"--normalization", true}, {"--swiglu", false}, {"--position-embedding-type", true},
    {"--use-rotary-position-embeddings", false}, {"--no-position-embedding", false},
    {"--untie-embeddings-and-output-weights", false}, {"--disable-bias-linear", false},
    {"--add-qkv-bias", false}, {"--num-experts", true}, {"--moe-router-topk", true},
    {"--moe-ffn-hidden-size", true}, {"--moe-shared-expert-intermediate-size", true},
    {"--moe-shared-expert-gate", false}, {"--moe-router-enable-expert-bias", false},
    {"--moe-layer-freq", true}, {"--moe-expert-capacity-factor", true},
    {"--multi-latent-attention", false}, {"--q-lora-rank", true}, {"--kv-lora-rank", true},
    {"--qk-head-dim", true}, {"--qk-pos-emb-head-dim", true}, {"--v-head-dim", true},
    {"--tensor-model-parallel-size", true}, {"--pipeline-model-parallel-size", true},
    {"--context-parallel-size", true}, {"--expert-model-parallel-size", true},
    {"--expert-tensor-parallel-size", true}, {"--sequence-parallel", false},
    {"--use-tp-pp-dp-mapping", false}, {"--num-layers-per-virtual-pipeline-stage", true},
    {"--num-virtual-stages-per-pipeline-rank", true},
    {"--decoder-first-pipeline-num-layers", true}, {"--decoder-last-pipeline-num-layers", true},
    {"--pipeline-model-parallel-layout", true}, {"--micro-batch-size", true},
    {"--global-batch-size", true}, {"--recompute-granularity", true},
    {"--recompute-method", true}, {"--recompute-num-layers", true},
    {"--recompute-activations", false}, {"--use-distributed-optimizer", false},
    {"--use-megatron-fsdp", false}, {"--use-custom-fsdp", false}, {"--use-torch-fsdp2", false},
    {"--data-parallel-sharding-strategy", true}, {"--bf16", false}, {"--fp16", false},
    {"--fp8-format", true}, {"--use-flash-attn", false}, {"--attention-backend", true},
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

struct SeenArg {
    int index = 0;
    std::string value;  // empty for store_true flags
};

class MegatronParser {
public:
    MegatronParser(const std::string& file, const ImportOptions& options)
        : file_(file), options_(options) {}

    ImportResult run(const std::string& text) {
        const ShellCommand argv = pick_command(split_shell_commands(text, file_));
        argv_ = &argv;
        std::size_t i = launcher(argv);
        arguments(argv, i);
        if (!issues_.empty()) throw InputError(issues_);
        build();
        if (!issues_.empty()) throw InputError(issues_);
        return std::move(result_);
    }

private:
    // ---- the command ---------------------------------------------------------------------
    ShellCommand pick_command(std::vector<ShellCommand> commands) {
        ShellCommand chosen;
        int chosen_line = 0;
        for (auto& cmd : commands) {
            std::size_t k = 0;
            const bool exported = cmd.front().text == "export" && cmd.front().expansion.empty();
            if (exported) k = 1;
            while (k < cmd.size() && cmd[k].assignment) {
                result_.ignored.push_back({"line " + std::to_string(cmd[k].line), cmd[k].text,
                                           "environment variable: not part of the layout"});
                ++k;
            }
            if (k == cmd.size()) continue;
            if (exported) {
                add("line " + std::to_string(cmd.front().line),
                    "'export " + cmd[k].text + "': expected NAME=value");
                continue;
            }
            if (!chosen.empty()) {
                add("line " + std::to_string(cmd[k].line),
                    "a second command ('" + cmd[k].text + "') after the one on line " +
                        std::to_string(chosen_line) + ": import one command line at a time");
                continue;
            }
            chosen.assign(cmd.begin() + static_cast<std::ptrdiff_t>(k), cmd.end());
            chosen_line = cmd[k].line;
        }
        if (!issues_.empty()) throw InputError(issues_);
        if (chosen.empty()) throw InputError(file_, "", "no command line found");
        return chosen;
    }

    std::string where(std::size_t k) const { return "argv[" + std::to_string(k) + "]"; }
    std::string where(std::size_t k, const std::string& flag) const {
        return where(k) + " " + flag;
    }
    void add(const std::string& field, const std::string& message) {
        issues_.push_back({file_, field, message});
    }
    // Word `k` must not need a shell expansion; the error names the argument at `at`.
    bool expanded_ok(std::size_t k, const std::string& flag, std::size_t at) {
        const auto& w = (*argv_)[k];
        if (w.expansion.empty()) return true;
        add(where(at, flag), "'" + w.expansion +
                                 "' is a shell expansion that was not resolved: substitute its "
                                 "value (import-args runs nothing)");
        return false;
    }
    bool expanded_ok(std::size_t k, const std::string& flag) { return expanded_ok(k, flag, k); }

    // Reads torchrun / python -m torch.distributed.run / python; returns the index of the
    // first Megatron argument.
    std::size_t launcher(const ShellCommand& argv) {
        std::size_t i = 0;
        const std::string first = argv[0].text;
        if (!expanded_ok(0, first)) return argv.size();
        if (starts_with(first, "--")) return 0;  // the bare arguments
        const std::string name = basename(first);
        if (name == "torchrun") {
            launched_ = true;
            i = torchrun_options(argv, 1);
        } else if (starts_with(name, "python")) {
            i = 1;
            while (i < argv.size() && starts_with(argv[i].text, "-") && argv[i].text != "-m") {
                const std::string& o = argv[i].text;
                if (o == "-W" || o == "-X") ++i;  // options with a value
                else if (o != "-u" && o != "-O" && o != "-OO" && o != "-B" && o != "-E" &&
                         o != "-s" && o != "-S" && o != "-I") {
                    add(where(i, o), "unknown python option");
                }
                ++i;
            }
            if (i < argv.size() && argv[i].text == "-m") {
                const std::string module = i + 1 < argv.size() ? argv[i + 1].text : "";
                if (module != "torch.distributed.run" && module != "torch.distributed.launch") {
                    add(where(i + 1), "python -m '" + module +
                                          "': expected torch.distributed.run or a training script");
                    return argv.size();
                }
                launched_ = true;
                i = torchrun_options(argv, i + 2);
            }
        } else if (name.size() <= 3 || name.substr(name.size() - 3) != ".py") {
            add(where(0), "'" + first +
                              "': expected torchrun, python, a training script or the bare "
                              "Megatron-LM arguments");
            return argv.size();
        }
        if (i >= argv.size()) {
            add(where(i), "the training script is missing (e.g. pretrain_gpt.py)");
            return argv.size();
        }
        const std::string script = argv[i].text;
        if (!expanded_ok(i, script)) return argv.size();
        if (script.size() <= 3 || script.substr(script.size() - 3) != ".py") {
            add(where(i, script), "expected the training script (e.g. pretrain_gpt.py)");
            return argv.size();
        }
        if (basename(script) != "pretrain_gpt.py") {
            result_.notes.push_back("training script " + script +
                                    " read with pretrain_gpt.py's arguments");
        }
        return i + 1;
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
                if (!expanded_ok(i, flag, at)) {
                    ++i;
                    continue;
                }
            }
            ++i;
            const std::string norm = flag == "--nproc_per_node" ? "--nproc-per-node" : flag;
            if (norm == "--nnodes") {
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
            if (const FlagSpec* spec = layout_flag(flag)) {
                std::string value;
                if (spec->takes_value) {
                    if (has_inline) {
                        value = inline_value;
                    } else if (i < argv.size() && !starts_with(argv[i].text, "--")) {
                        value = argv[i++].text;
                        if (!expanded_ok(i - 1, flag, at)) continue;
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
            bool unexpanded = !argv[at].expansion.empty();
            while (i < argv.size() && !starts_with(argv[i].text, "--")) {
                text += " " + argv[i].text;
                unexpanded = unexpanded || !argv[i].expansion.empty();
                ++i;
            }
            if (const char* reason = megatron_ignored_flag_reason(flag)) {
                // An unexpanded value of an ignored flag is harmless: it is not read.
                (void)unexpanded;
                result_.ignored.push_back({where(at), text, reason});
            } else {
                add(where(at, flag),
                    "unknown Megatron-LM argument: neither a layout argument nor one of the "
                    "known ignored arguments (docs/export.md lists both)");
            }
        }
    }

    void remember(std::size_t at, const std::string& flag, const std::string& value) {
        const auto it = seen_.find(flag);
        if (it != seen_.end()) {
            if (it->second.value != value) {
                add(where(at, flag), "'" + value + "' conflicts with '" + it->second.value +
                                         "' given at " + where(static_cast<std::size_t>(it->second.index)));
            }
            return;
        }
        seen_[flag] = {static_cast<int>(at), value};
    }

    // ---- typed access ----------------------------------------------------------------------
    [[nodiscard]] bool has(const std::string& flag) const { return seen_.count(flag) > 0; }
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
        m.num_layers = static_cast<int>(required("--num-layers", 1, 10000));
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
        m.num_kv_heads = has("--group-query-attention")
                             ? static_cast<int>(integer("--num-query-groups", 1, 1, 1 << 14))
                             : m.num_heads;
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
        m.max_position_embeddings = integer("--max-position-embeddings", seq, 1, 1ll << 26);
        if (!has("--max-position-embeddings") && seq > 0) {
            result_.notes.push_back("--max-position-embeddings not given: taken as --seq-length");
        }
        vocab_known = true;
        if (has("--vocab-size")) {
            m.vocab_size = integer("--vocab-size", 0, 1, 1 << 24);
        } else if (text("--tokenizer-type") == "GPT2BPETokenizer") {
            m.vocab_size = 50257;  // the GPT-2 BPE vocabulary that GPT2BPETokenizer loads
        } else {
            vocab_known = false;
        }
        if (has("--tokenizer-type")) {
            result_.ignored.push_back({position("--tokenizer-type"), "--tokenizer-type " + text("--tokenizer-type"),
                                       vocab_known && !has("--vocab-size")
                                           ? "tokenizer: read for its vocabulary size only"
                                           : "tokenizer: not part of the layout"});
        }
        const std::string norm = text("--normalization", "LayerNorm");
        if (norm == "RMSNorm") m.norm = NormKind::RmsNorm;
        else if (norm == "LayerNorm") m.norm = NormKind::LayerNorm;
        else add(field("--normalization"), "'" + norm + "': expected LayerNorm or RMSNorm");
        m.mlp = swiglu ? MlpKind::Gated : MlpKind::Dense;
        const std::string pos = text("--position-embedding-type", "learned_absolute");
        if (pos != "learned_absolute" && pos != "rope" && pos != "yarn" && pos != "none") {
            add(field("--position-embedding-type"),
                "'" + pos + "': expected learned_absolute, rope, yarn or none");
        }
        m.learned_position_embeddings = pos == "learned_absolute" &&
                                        !has("--use-rotary-position-embeddings") &&
                                        !has("--no-position-embedding");
        m.tie_embeddings = !has("--untie-embeddings-and-output-weights");
        m.linear_bias = !has("--disable-bias-linear");
        m.qkv_bias = m.linear_bias || has("--add-qkv-bias");

        if (has("--multi-latent-attention")) {
            m.uses_mla = true;
            // Defaults of arguments.py's MLA group.
            m.mla.q_lora_rank = integer("--q-lora-rank", 0, 1, kMaxWidth);
            m.mla.kv_lora_rank = integer("--kv-lora-rank", 32, 1, kMaxWidth);
            m.mla.qk_nope_head_dim = integer("--qk-head-dim", 128, 1, kMaxWidth);
            m.mla.qk_rope_head_dim = integer("--qk-pos-emb-head-dim", 64, 0, kMaxWidth);
            m.mla.v_head_dim = integer("--v-head-dim", 128, 1, kMaxWidth);
            m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
            m.num_kv_heads = m.num_heads;
        } else {
            for (const char* f : {"--q-lora-rank", "--kv-lora-rank", "--qk-head-dim",
                                  "--qk-pos-emb-head-dim", "--v-head-dim"}) {
                needs(f, "--multi-latent-attention", "an MLA dimension");
            }
        }
        if (has("--num-experts")) {
            auto& e = m.moe;
            e.num_experts = static_cast<int>(integer("--num-experts", 0, 1, 1 << 16));
            e.top_k = static_cast<int>(integer("--moe-router-topk", 2, 1, 1 << 16));
            e.expert_ffn_hidden = integer("--moe-ffn-hidden-size", m.ffn_hidden_size, 1, kMaxWidth);
            e.shared_ffn_hidden = integer("--moe-shared-expert-intermediate-size", 0, 1, kMaxWidth);
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
                                  "--moe-expert-capacity-factor"}) {
                needs(f, "--num-experts", "an MoE setting on a dense model");
            }
        }
        return m;
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

        auto& mesh = l.parallel.mesh;
        mesh.tp = static_cast<int>(integer("--tensor-model-parallel-size", 1, 1, kMaxAxis));
        mesh.pp = static_cast<int>(integer("--pipeline-model-parallel-size", 1, 1, kMaxAxis));
        mesh.cp = static_cast<int>(integer("--context-parallel-size", 1, 1, kMaxAxis));
        mesh.ep = static_cast<int>(integer("--expert-model-parallel-size", 1, 1, kMaxAxis));
        // Megatron: the expert TP size defaults to the dense one. Dense models have no
        // expert layers, where Meshwork's convention is 1.
        mesh.etp = static_cast<int>(
            integer("--expert-tensor-parallel-size", l.model.is_moe() ? mesh.tp : 1, 1, kMaxAxis));
        if (has("--use-tp-pp-dp-mapping")) mesh.order = "tp-cp-ep-pp-dp";
        l.parallel.sequence_parallel = has("--sequence-parallel") && mesh.tp > 1;
        if (has("--sequence-parallel") && mesh.tp == 1) {
            result_.notes.push_back("--sequence-parallel with tensor-parallel size 1 has no effect");
        }

        world(l);
        pipeline(l);
        training(l);
        if (!issues_.empty()) return;
        l = canonical_layout(std::move(l));
    }

    void world(Layout& l) {
        auto& mesh = l.parallel.mesh;
        const std::optional<int> from_options = world_from_options(options_, l.cluster.gpus_per_node);
        long long world = 0;
        if (launched_) {
            world = nnodes_ * nproc_;
            if (from_options && *from_options != world) {
                add(options_.gpus ? "--gpus" : "--nodes",
                    std::to_string(*from_options) + " GPUs disagree with torchrun's " +
                        std::to_string(nnodes_) + " nodes × " + std::to_string(nproc_) + " processes");
            }
            if (nproc_ != l.cluster.gpus_per_node && nnodes_ > 1) {
                result_.notes.push_back("torchrun starts " + std::to_string(nproc_) +
                                        " processes per node; the cluster has " +
                                        std::to_string(l.cluster.gpus_per_node) + " GPUs per node");
            }
        } else if (from_options) {
            world = *from_options;
        } else {
            add("world size", "the command line does not say how many GPUs run it: launch it "
                              "with torchrun --nnodes N --nproc-per-node G, or pass --gpus/--nodes");
            return;
        }
        const long long model_parallel = static_cast<long long>(mesh.tp) * mesh.pp * mesh.cp;
        if (world % model_parallel != 0) {
            add(field("--tensor-model-parallel-size"),
                "the world size " + std::to_string(world) +
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
            add(field("--pipeline-model-parallel-layout"),
                "not read by import-args yet: describe the split with "
                "--decoder-first/last-pipeline-num-layers");
        }
        conflict("--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank",
                 "Megatron-LM accepts one of them");
        int vpp = 1;
        if (has("--num-layers-per-virtual-pipeline-stage")) {
            const long long per = integer("--num-layers-per-virtual-pipeline-stage", 1, 1, 10000);
            if (layers % pp != 0 || (layers / pp) % per != 0) {
                add(field("--num-layers-per-virtual-pipeline-stage"),
                    "the layers per pipeline stage (" + std::to_string(layers) + " / " +
                        std::to_string(pp) + ") are not a multiple of it");
            } else {
                vpp = static_cast<int>((layers / pp) / per);
            }
        } else if (has("--num-virtual-stages-per-pipeline-rank")) {
            vpp = static_cast<int>(integer("--num-virtual-stages-per-pipeline-rank", 1, 1, 10000));
        }
        l.parallel.vpp = vpp;
        l.training.schedule = vpp > 1 ? Schedule::Interleaved : Schedule::OneFOneB;

        const bool first = has("--decoder-first-pipeline-num-layers");
        const bool last = has("--decoder-last-pipeline-num-layers");
        if (first || last) {
            if (pp < 2) {
                add(field(first ? "--decoder-first-pipeline-num-layers"
                                : "--decoder-last-pipeline-num-layers"),
                    "needs a pipeline-parallel size of at least 2");
                return;
            }
            if (vpp > 1) {
                add(field(first ? "--decoder-first-pipeline-num-layers"
                                : "--decoder-last-pipeline-num-layers"),
                    "uneven stages with virtual pipeline stages are not imported yet");
                return;
            }
            const long long f = integer("--decoder-first-pipeline-num-layers", -1, 0, layers);
            const long long e = integer("--decoder-last-pipeline-num-layers", -1, 0, layers);
            const int ends = (first ? 1 : 0) + (last ? 1 : 0);
            const long long rest = layers - (first ? f : 0) - (last ? e : 0);
            const int middle_stages = pp - ends;
            if (rest < 0 || (middle_stages == 0 ? rest != 0 : rest % middle_stages != 0)) {
                add(field(first ? "--decoder-first-pipeline-num-layers"
                                : "--decoder-last-pipeline-num-layers"),
                    "the remaining " + std::to_string(rest) + " layers do not split evenly over " +
                        std::to_string(middle_stages) + " stages");
                return;
            }
            const int middle = middle_stages == 0 ? 0 : static_cast<int>(rest / middle_stages);
            l.placement.layers_per_stage =
                ends_split(pp, first ? static_cast<int>(f) : middle, middle,
                           last ? static_cast<int>(e) : middle);
            return;
        }
        if (layers % (pp * vpp) != 0) {
            add(field("--num-layers"), std::to_string(layers) + " layers do not split evenly over " +
                                           std::to_string(pp * vpp) +
                                           " pipeline chunks (Megatron-LM requires it without "
                                           "--decoder-first/last-pipeline-num-layers)");
        }
    }

    void training(Layout& l) {
        auto& t = l.training;
        const auto& mesh = l.parallel.mesh;
        t.micro_batch_size = static_cast<int>(required("--micro-batch-size", 1, kMaxBatch));
        const long long gbs_default = static_cast<long long>(t.micro_batch_size) * mesh.dp;
        t.global_batch_size = static_cast<int>(integer("--global-batch-size", gbs_default, 1, kMaxBatch));
        t.seq_length = static_cast<int>(required("--seq-length", 1, 1ll << 26));

        conflict("--recompute-activations", "--recompute-granularity",
                 "--recompute-activations means --recompute-granularity selective");
        const std::string granularity =
            has("--recompute-activations") ? "selective" : text("--recompute-granularity");
        const std::string method = text("--recompute-method");
        if (granularity.empty()) {
            needs("--recompute-method", "--recompute-granularity", "a recompute setting");
            needs("--recompute-num-layers", "--recompute-granularity", "a recompute setting");
        } else if (granularity == "selective") {
            t.recompute = Recompute::Selective;
            for (const char* f : {"--recompute-method", "--recompute-num-layers"}) {
                if (has(f)) add(field(f), "applies to --recompute-granularity full only");
            }
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
        const std::string strategy = text("--data-parallel-sharding-strategy", "no_shard");
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

        conflict("--bf16", "--fp16", "one training precision");
        if (has("--fp8-format")) {
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
    bool launched_ = false;
    long long nnodes_ = 1;
    long long nproc_ = 1;
};

}  // namespace

ImportResult import_megatron(const std::string& text, const std::string& file,
                             const ImportOptions& options) {
    ImportResult r = MegatronParser(file, options).run(text);
    r.format = ImportFormat::Megatron;
    return r;
}

}  // namespace meshwork
