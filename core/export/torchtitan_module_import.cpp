// A torchtitan main config module (a Python function returning Trainer.Config) ->
// TorchtitanSettings -> Layout. Nothing is executed: the reader understands the statements a
// config is written with -- `config = base()`, `config.section.field = constant`,
// `ParallelismConfig(...)` / `TrainingConfig(...)` with constant keyword arguments,
// `model_registry("FLAVOR", converters=[...])` and the activation-checkpointing policy -- and
// names the line of anything else that would change the layout.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include "core/common/error.h"
#include "core/export/import_common.h"
#include "core/export/torchtitan_config.h"
#include "core/export/torchtitan_settings.h"

namespace meshwork {

namespace {

// torchtitan/config/configs.py at kTorchtitanMainCommit (docs/export.md).
constexpr const char* kTrainingUsed =
    "num_tokens_per_microbatch_per_dp_rank num_tokens_per_train_step max_context_length "
    "mixed_precision_param enable_cpu_offload";
constexpr const char* kTrainingIgnored =
    "max_norm steps disable_cuda_graphs dtype mixed_precision_reduce gc_freq "
    "gc_debug";
constexpr const char* kParallelismUsed =
    "data_parallel_replicate_degree data_parallel_shard_degree fsdp_reshard_after_forward "
    "tensor_parallel_degree "
    "enable_sequence_parallel pipeline_parallel_degree module_fqns_per_model_part "
    "pipeline_parallel_first_stage_less_layers pipeline_parallel_last_stage_less_layers "
    "pipeline_parallel_layers_per_stage pipeline_parallel_schedule num_pp_microbatches "
    "context_parallel_degree "
    "expert_parallel_degree";
constexpr const char* kParallelismIgnored =
    "enable_fsdp_symm_mem spmd_backend pipeline_parallel_schedule_csv "
    "context_parallel_load_balancer "
    "context_parallel_ptrr_mask_key";
// CompileConfig (torchtitan/config/configs.py:294-312): async TP needs the model compiled.
constexpr const char* kCompileUsed = "enable enable_async_tensor_parallel";
constexpr const char* kCompileIgnored = "backend components";
// Trainer.Config fields (torchtitan/trainer.py) that do not change the layout.
constexpr const char* kTrainerIgnored =
    "hf_assets_path dump_folder profiler metrics tokenizer dataloader optimizer lr_scheduler "
    "checkpoint "
    "comm validator debug override loss";

// One logical statement: comments removed, lines joined while brackets are open.
struct Statement {
    std::string text;
    int line = 0;
    std::vector<int> lines;  // the source line of each character of text
    [[nodiscard]] int line_at(std::size_t offset) const {
        return offset < lines.size() ? lines[offset] : line;
    }
};

std::vector<Statement> statements(const std::string& source) {
    std::vector<Statement> out;
    Statement cur;
    int depth = 0, line = 1;
    char quote = 0;
    bool comment = false;
    const auto add = [&](char c) {
        if (cur.text.empty()) cur.line = line;
        cur.text += c;
        cur.lines.push_back(line);
    };
    for (std::size_t i = 0; i < source.size(); ++i) {
        const char c = source[i];
        if (c == '\n') {
            comment = false;
            if (depth == 0 && quote == 0) {
                if (cur.text.find_first_not_of(" \t\r") != std::string::npos) out.push_back(cur);
                cur = {};
            } else {
                add(' ');
            }
            ++line;
            continue;
        }
        if (comment) continue;
        if (quote != 0) {
            add(c);
            if (c == '\\' && i + 1 < source.size())
                add(source[++i]);
            else if (c == quote)
                quote = 0;
            continue;
        }
        if (c == '#') {
            comment = true;
            continue;
        }
        if (c == '"' || c == '\'') quote = c;
        if (c == '(' || c == '[' || c == '{') ++depth;
        if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
        add(c);
    }
    if (cur.text.find_first_not_of(" \t\r") != std::string::npos) out.push_back(cur);
    return out;
}

std::string trim(const std::string& s) {
    const auto a = s.find_first_not_of(" \t\r");
    if (a == std::string::npos) return "";
    const auto b = s.find_last_not_of(" \t\r,");
    return s.substr(a, b - a + 1);
}

// A constant: int (with _ separators, a product of ints, a leading minus), a string,
// True/False/None.
struct Value {
    enum Kind { Int, Str, Bool, None } kind = None;
    long long i = 0;
    std::string s;
    bool b = false;
};

bool parse_value(const std::string& raw, Value& out) {
    const std::string text = trim(raw);
    if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') &&
        text.back() == text.front()) {
        out.kind = Value::Str;
        out.s = text.substr(1, text.size() - 2);
        return out.s.find(text.front()) == std::string::npos;
    }
    if (text == "True" || text == "False") {
        out.kind = Value::Bool;
        out.b = text == "True";
        return true;
    }
    if (text == "None") {
        out.kind = Value::None;
        return true;
    }
    // Products of integers ("8 * 8192").
    long long product = 1;
    std::stringstream in(text);
    std::string factor;
    bool any = false;
    while (std::getline(in, factor, '*')) {
        std::string digits;
        const std::string f = trim(factor);
        for (std::size_t k = 0; k < f.size(); ++k) {
            const char c = f[k];
            if (c == '_' && k > 0) continue;
            if (c == '-' && k == 0) {
                digits += c;
                continue;
            }
            if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
            digits += c;
        }
        if (digits.empty() || digits == "-" || digits.size() > 12) return false;
        product *= std::stoll(digits);
        if (product > (1ll << 50) || product < -(1ll << 50)) return false;
        any = true;
    }
    if (!any) return false;
    out.kind = Value::Int;
    out.i = product;
    return true;
}

// The top-level comma-separated items of an argument list, with their offsets in it.
std::vector<std::pair<std::string, std::size_t>> split_args(const std::string& args) {
    std::vector<std::pair<std::string, std::size_t>> out;
    std::size_t start = 0;
    int depth = 0;
    char quote = 0;
    const auto flush = [&](std::size_t end) {
        const std::string item = args.substr(start, end - start);
        const auto first = item.find_first_not_of(" \t\r");
        if (first != std::string::npos) out.emplace_back(trim(item), start + first);
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        const char c = args[i];
        if (quote != 0) {
            if (c == quote) quote = 0;
            continue;
        }
        if (c == '"' || c == '\'') quote = c;
        if (c == '(' || c == '[' || c == '{') ++depth;
        if (c == ')' || c == ']' || c == '}') --depth;
        if (c == ',' && depth == 0) {
            flush(i);
            start = i + 1;
        }
    }
    flush(args.size());
    return out;
}

// The text between the bracket that opens at `open` and its match.
std::string call_args(const std::string& text, std::size_t open) {
    int depth = 0;
    char quote = 0;
    for (std::size_t i = open; i < text.size(); ++i) {
        const char c = text[i];
        if (quote != 0) {
            if (c == quote) quote = 0;
            continue;
        }
        if (c == '"' || c == '\'') quote = c;
        if (c == '(') ++depth;
        if (c == ')' && --depth == 0) return text.substr(open + 1, i - open - 1);
    }
    return text.substr(open + 1);
}

class ModuleReader {
  public:
    ModuleReader(std::string file, ImportResult& r) : file_(std::move(file)), r_(r) {}

    std::string at(int line, const std::string& what) const {
        return what + " (line " + std::to_string(line) + ")";
    }

    // section.field = constant, from an assignment or a keyword argument.
    void set(const std::string& section, const std::string& field, const std::string& raw,
             int line) {
        const std::string key = section + "." + field;
        const char* used = section == "training"  ? kTrainingUsed
                           : section == "compile" ? kCompileUsed
                                                  : kParallelismUsed;
        const char* ignored = section == "training"  ? kTrainingIgnored
                              : section == "compile" ? kCompileIgnored
                                                     : kParallelismIgnored;
        if (list_has_word(ignored, field)) {
            r_.ignored.push_back({at(line, key), key + " = " + trim(raw),
                                  "torchtitan setting that does not change the layout"});
            return;
        }
        if (!list_has_word(used, field))
            throw InputError(file_, at(line, key), "unknown torchtitan main setting");
        Value v;
        if (!parse_value(raw, v)) {
            throw InputError(
                file_, at(line, key),
                "'" + trim(raw) +
                    "' is not a constant: Meshwork reads configs without running them");
        }
        values_[key] = {v, line};
    }

    // The keyword arguments of a call whose argument text starts at `offset` of `st`.
    void keyword_args(const std::string& section, const std::string& args, const Statement& st,
                      std::size_t offset) {
        for (const auto& [item, at_offset] : split_args(args)) {
            const int line = st.line_at(offset + at_offset);
            const auto eq = item.find('=');
            if (eq == std::string::npos) {
                throw InputError(file_, at(line, section), "'" + item + "': expected field=value");
            }
            set(section, trim(item.substr(0, eq)), item.substr(eq + 1), line);
        }
    }

    // Reads the config function `chosen` (or the module's only one) into `s`.
    void read(const std::string& text, const std::optional<std::string>& chosen, bool model_given,
              TorchtitanSettings& s) {
        static const std::regex def(R"(^def\s+(\w+)\s*\(([^)]*)\)\s*(->\s*([\w.]+))?\s*:)");
        static const std::regex registry_import(
            R"(^\s*from\s+torchtitan\.models\.(\w+)\s+import\s+(.*))");
        static const std::regex base_import(
            R"(^\s*from\s+torchtitan\.models\.(\w+)\.config_registry\s+import\s+(.*))");
        static const std::regex local_registry(
            R"(^\s*from\s+\.\s+import\s+(.*)\bmodel_registry\b)");
        std::string function;
        for (const auto& st : statements(text)) {
            const bool top = !st.text.empty() && st.text[0] != ' ' && st.text[0] != '\t';
            std::smatch m;
            if (top) {
                function.clear();
                if (std::regex_search(st.text, m, def)) {
                    function = m[1];
                    if (m[4] == "Trainer.Config" && trim(m[2]).empty())
                        config_functions_.push_back(function);
                    bodies_[function] = {};
                    def_line_[function] = st.line;
                    continue;
                }
                if (std::regex_search(st.text, m, base_import)) {
                    for (const auto& [name, offset] : split_args(strip_parens(m[2])))
                        base_module_[name] = m[1];
                } else if (std::regex_search(st.text, m, registry_import)) {
                    const std::string names = m[2];
                    if (names.find("model_registry") != std::string::npos) registry_model_ = m[1];
                    if (names.find("config_registry") != std::string::npos)
                        base_module_["config_registry"] = m[1];
                } else if (std::regex_search(st.text, m, local_registry)) {
                    // `from . import model_registry` in torchtitan/models/NAME/*.py: the package
                    // is the folder the module lives in.
                    registry_model_ =
                        std::filesystem::path(file_).parent_path().filename().string();
                    local_registry_ = true;
                }
                continue;
            }
            if (!function.empty()) bodies_[function].push_back(st);
        }
        if (chosen) {
            if (std::find(config_functions_.begin(), config_functions_.end(), *chosen) ==
                config_functions_.end()) {
                throw InputError(
                    "<flags>", "--config",
                    "no function " + *chosen + "() -> Trainer.Config in " + file_ + listing());
            }
        } else if (config_functions_.size() != 1) {
            throw InputError(file_, "def ... -> Trainer.Config",
                             config_functions_.empty()
                                 ? "no config function (def NAME() -> Trainer.Config:)"
                                 : std::to_string(config_functions_.size()) +
                                       " config functions: pass --config NAME" + listing());
        }
        const std::string name = chosen.value_or(config_functions_.front());
        if (registry_model_) {
            s.model_name = *registry_model_;
            s.where["model.name"] = local_registry_
                                        ? "from . import model_registry (the module's folder)"
                                        : "from torchtitan.models." + *registry_model_;
        }
        read_function(name, 0, s);
        if (!base_.empty()) {
            // The layout fields the imported base may set and this module does not.
            std::string missing;
            for (const char* key :
                 {"training.max_context_length", "training.num_tokens_per_microbatch_per_dp_rank",
                  "training.num_tokens_per_train_step", "training.mixed_precision_param",
                  "parallelism.data_parallel_replicate_degree",
                  "parallelism.data_parallel_shard_degree", "parallelism.tensor_parallel_degree",
                  "parallelism.pipeline_parallel_degree", "parallelism.context_parallel_degree",
                  "parallelism.expert_parallel_degree"}) {
                const std::string k(key);
                const bool replaced = std::find(replaced_.begin(), replaced_.end(),
                                                k.substr(0, k.find('.'))) != replaced_.end();
                if (!replaced && values_.count(k) == 0)
                    missing += (missing.empty() ? "" : ", ") + k;
            }
            if (!missing.empty()) {
                r_.notes.push_back(missing + ": not set by " + name + "(); " + base_ +
                                   "() may set them, which Meshwork does not read: taken at "
                                   "torchtitan's defaults");
            }
        }
        if (!flavor_seen_ && !model_given) {
            throw InputError(
                file_, at(def_line_[name], name + "()"),
                "the model is not named here (no model_registry(\"FLAVOR\")" +
                    (base_.empty() ? std::string(")") : " and it comes from " + base_ + "())") +
                    ": pass --model PRESET|config.json");
        }
        apply(s);
    }

  private:
    std::string listing() const {
        std::string names;
        for (const auto& f : config_functions_) names += (names.empty() ? " (" : ", ") + f;
        return names.empty() ? "" : names + ")";
    }

    static std::string strip_parens(std::string s) {
        for (char& c : s) {
            if (c == '(' || c == ')') c = ' ';
        }
        return s;
    }

    // One config function's statements; a base function of the same module is read first.
    void read_function(const std::string& name, int depth, TorchtitanSettings& s) {
        static const std::regex base_call(R"(^\s*config\s*=\s*([\w.]+)\s*\(\s*\)\s*$)");
        static const std::regex assign(R"(^\s*config\.(\w+)\.(\w+)\s*=(?!=))");
        static const std::regex replace(R"(^\s*config\.(\w+)\s*=(?!=))");
        static const std::regex section_call(
            R"(\b(parallelism|training|compile)\s*=\s*(ParallelismConfig|TrainingConfig|CompileConfig)\s*\()");
        static const std::regex ac_kwarg(
            R"(\bactivation_checkpoint\s*=\s*(None|\w+\.Config\s*\([^)]*\)))");
        static const std::regex registry(R"(\bmodel_registry\s*\(\s*(["'])([^"']*)\1)");
        if (depth > 16)
            throw InputError(file_, at(def_line_[name], name + "()"),
                             "config functions call each other in a cycle");
        for (const auto& st : bodies_[name]) {
            std::smatch m;
            const std::string& t = st.text;
            if (std::regex_search(t, m, base_call)) {
                std::string base = m[1];
                std::string module;
                if (base.rfind("config_registry.", 0) == 0) {
                    base = base.substr(std::string("config_registry.").size());
                    module = base_module_.count("config_registry") != 0
                                 ? base_module_["config_registry"]
                                 : "";
                } else if (base_module_.count(base) != 0) {
                    module = base_module_[base];
                }
                if (bodies_.count(base) != 0 && module.empty()) {
                    read_function(base, depth + 1, s);
                    continue;
                }
                base_ = base;
                // A shipped config function of a flavor Meshwork knows names the model.
                const std::string pkg = module.empty() ? s.model_name : module;
                if (const TorchtitanFlavor* f = torchtitan_flavor_of_main_config(pkg, base);
                    f != nullptr && !flavor_seen_) {
                    s.model_name = f->name;
                    s.flavor = f->flavor;
                    s.where["model.flavor"] = at(st.line, base + "()");
                    flavor_seen_ = true;
                }
                continue;
            }
            bool used = false;
            if (std::regex_search(t, m, registry)) {
                s.flavor = m[2];
                s.where["model.flavor"] = at(st.line, "model_registry(\"" + s.flavor + "\")");
                s.fp8 = t.find("Float8LinearConverter") != std::string::npos ||
                        t.find("Float8GroupedExpertsConverter") != std::string::npos;
                // Float8LinearConverter.Config(recipe_name="rowwise") (float8.py:58 at b5bcd76c).
                static const std::regex recipe(R"(recipe_name\s*=\s*["']([A-Za-z_]+)["'])");
                std::smatch rm;
                if (std::regex_search(t, rm, recipe)) {
                    s.fp8_recipe_name = rm[1];
                    s.where["float8.recipe_name"] = at(st.line, "recipe_name=\"" + s.fp8_recipe_name + "\"");
                }
                flavor_seen_ = true;
                used = true;
            }
            if (std::regex_search(t, m, ac_kwarg)) {
                ac(m[1], st.line, s);
                used = true;
            }
            for (auto it = std::sregex_iterator(t.begin(), t.end(), section_call);
                 it != std::sregex_iterator(); ++it) {
                const std::string section = (*it)[1];
                replaced_.push_back(section);
                const auto open = static_cast<std::size_t>(it->position(0) + it->length(0) - 1);
                keyword_args(section, call_args(t, open), st, open + 1);
                used = true;
            }
            if (std::regex_search(t, m, assign)) {
                const std::string section = m[1], field = m[2];
                if (section == "training" || section == "parallelism" || section == "compile") {
                    set(section, field, m.suffix().str(), st.line);
                } else if (section == "model_spec") {
                    throw InputError(file_, at(st.line, "config.model_spec." + field),
                                     "changes the model inside the spec: Meshwork reads "
                                     "model_registry(\"FLAVOR\") only");
                } else if (list_has_word(kTrainerIgnored, section)) {
                    r_.ignored.push_back({at(st.line, "config." + section + "." + field), trim(t),
                                          "torchtitan setting that does not change the layout"});
                } else {
                    throw InputError(file_, at(st.line, "config." + section),
                                     "unknown Trainer.Config field");
                }
                continue;
            }
            if (std::regex_search(t, m, replace)) {
                const std::string field = m[1], value = trim(m.suffix().str());
                if (field == "activation_checkpoint") {
                    ac(value, st.line, s);
                } else if (field == "model_spec") {
                    if (value.find("model_registry") == std::string::npos) {
                        throw InputError(file_, at(st.line, "config.model_spec"),
                                         "expected model_registry(\"FLAVOR\", ...)");
                    }
                } else if (field == "parallelism" || field == "training" || field == "compile") {
                    // `config.parallelism = ParallelismConfig(...)` was read above as a call.
                    const std::string cls = field == "parallelism" ? "ParallelismConfig"
                                            : field == "training"  ? "TrainingConfig"
                                                                   : "CompileConfig";
                    if (value.rfind(cls + "(", 0) != 0) {
                        throw InputError(file_, at(st.line, "config." + field),
                                         "expected " + cls + "(...) with constants");
                    }
                } else if (list_has_word(kTrainerIgnored, field)) {
                    r_.ignored.push_back({at(st.line, "config." + field), trim(t),
                                          "torchtitan setting that does not change the layout"});
                } else {
                    throw InputError(file_, at(st.line, "config." + field),
                                     "unknown Trainer.Config field");
                }
                continue;
            }
            // A call that is handed the config may change anything: say that it was not followed.
            static const std::regex hands_config(R"(\(\s*config\b)");
            if (!used && std::regex_search(t, hands_config)) {
                r_.notes.push_back(
                    at(st.line, name + "()") + ": '" + trim(t).substr(0, 80) +
                    "' is not followed (Meshwork reads assignments and constructor calls)");
            }
        }
    }

    void ac(const std::string& value, int line, TorchtitanSettings& s) {
        s.where["activation_checkpoint.mode"] = at(line, "activation_checkpoint");
        if (value == "None")
            s.ac_mode = "none";
        else if (value.rfind("FullAC.Config", 0) == 0)
            s.ac_mode = "full";
        else if (value.rfind("SelectiveAC.Config", 0) == 0)
            s.ac_mode = "selective";
        else if (value.rfind("MemoryBudgetAC.Config", 0) == 0) {
            s.ac_mode = "selective";
            r_.notes.push_back("MemoryBudgetAC read as selective recompute");
        } else {
            throw InputError(file_, at(line, "activation_checkpoint"),
                             "'" + value +
                                 "': expected None, FullAC.Config(), SelectiveAC.Config() or "
                                 "MemoryBudgetAC.Config()");
        }
        s.ac_option = "op";
    }

    const Value* get(const std::string& key, Value::Kind kind, TorchtitanSettings& s) {
        const auto it = values_.find(key);
        if (it == values_.end()) return nullptr;
        const auto& [v, line] = it->second;
        s.where[key] = at(line, key);
        if (v.kind != kind) {
            throw InputError(file_, s.where[key],
                             kind == Value::Int   ? "expected an integer"
                             : kind == Value::Str ? "expected a string"
                                                  : "expected True or False");
        }
        return &v;
    }
    void integer(const std::string& key, long long& out, TorchtitanSettings& s) {
        if (const Value* v = get(key, Value::Int, s)) out = v->i;
    }
    void string(const std::string& key, std::string& out, TorchtitanSettings& s) {
        if (const Value* v = get(key, Value::Str, s)) out = v->s;
    }

    void apply(TorchtitanSettings& s) {
        s.base_unread = !base_.empty();
        integer("parallelism.data_parallel_replicate_degree", s.replicate, s);
        integer("parallelism.data_parallel_shard_degree", s.shard, s);
        string("parallelism.fsdp_reshard_after_forward", s.reshard, s);
        integer("parallelism.tensor_parallel_degree", s.tp, s);
        if (const Value* v = get("parallelism.enable_sequence_parallel", Value::Bool, s))
            s.sequence_parallel = v->b;
        if (const Value* v = get("compile.enable_async_tensor_parallel", Value::Bool, s)) {
            s.async_tp = v->b;
            s.where["async_tp"] = s.where["compile.enable_async_tensor_parallel"];
        }
        if (const Value* v = get("compile.enable", Value::Bool, s)) s.compile_enable = v->b;
        if (const Value* v = get("training.enable_cpu_offload", Value::Bool, s)) s.cpu_offload = v->b;
        integer("parallelism.pipeline_parallel_degree", s.pp, s);
        string("parallelism.pipeline_parallel_schedule", s.schedule, s);
        integer("parallelism.context_parallel_degree", s.cp, s);
        integer("parallelism.expert_parallel_degree", s.ep, s);
        integer("parallelism.pipeline_parallel_first_stage_less_layers", s.first_less, s);
        integer("parallelism.pipeline_parallel_last_stage_less_layers", s.last_less, s);
        if (values_.count("parallelism.pipeline_parallel_layers_per_stage") != 0 &&
            values_.at("parallelism.pipeline_parallel_layers_per_stage").first.kind !=
                Value::None) {
            long long per = 0;
            integer("parallelism.pipeline_parallel_layers_per_stage", per, s);
            s.layers_per_stage = per;
        }
        if (values_.count("parallelism.module_fqns_per_model_part") != 0 &&
            values_.at("parallelism.module_fqns_per_model_part").first.kind != Value::None) {
            throw InputError(
                file_,
                at(values_.at("parallelism.module_fqns_per_model_part").second,
                   "parallelism.module_fqns_per_model_part"),
                "explicit module lists are not imported: use pipeline_parallel_layers_per_stage");
        }
        string("training.mixed_precision_param", s.precision, s);
        long long seq = 2048, mb_tokens = 16384, step_tokens = -1, micro_batches = 1;
        integer("training.max_context_length", seq, s);
        integer("training.num_tokens_per_microbatch_per_dp_rank", mb_tokens, s);
        integer("training.num_tokens_per_train_step", step_tokens, s);
        integer("parallelism.num_pp_microbatches", micro_batches, s);
        if (seq < 1)
            throw InputError(file_, s.at("training.max_context_length"), "must be at least 1");
        if (micro_batches < 1)
            throw InputError(file_, s.at("parallelism.num_pp_microbatches"), "must be at least 1");
        // Meshwork's batches are in sequences of max_context_length tokens.
        if (mb_tokens < seq || mb_tokens % seq != 0) {
            throw InputError(file_, s.at("training.num_tokens_per_microbatch_per_dp_rank"),
                             std::to_string(mb_tokens) + " tokens are not a whole number of " +
                                 std::to_string(seq) +
                                 "-token sequences (training.max_context_length)");
        }
        if (step_tokens != -1 && (step_tokens < seq || step_tokens % seq != 0)) {
            throw InputError(file_, s.at("training.num_tokens_per_train_step"),
                             std::to_string(step_tokens) + " tokens are not a whole number of " +
                                 std::to_string(seq) +
                                 "-token sequences (training.max_context_length)");
        }
        s.seq_len = seq;
        s.where["training.seq_len"] = s.at("training.max_context_length");
        const long long mb = mb_tokens / seq;
        s.pp_micro_batch = mb;
        s.local_batch = s.pp > 1 ? mb * micro_batches : mb;
        s.where["training.local_batch_size"] =
            s.at("training.num_tokens_per_microbatch_per_dp_rank");
        s.where["parallelism.pipeline_parallel_microbatch_size"] =
            s.at("training.num_tokens_per_microbatch_per_dp_rank");
        s.global_batch = step_tokens == -1 ? -1 : step_tokens / seq;
        s.where["training.global_batch_size"] = s.at("training.num_tokens_per_train_step");
    }

    std::string file_;
    ImportResult& r_;
    std::string base_;
    std::vector<std::string> config_functions_;
    std::map<std::string, std::vector<Statement>> bodies_;
    std::map<std::string, int> def_line_;
    std::map<std::string, std::string>
        base_module_;                            // imported base function -> torchtitan.models.NAME
    std::optional<std::string> registry_model_;  // the package whose model_registry is imported
    bool local_registry_ = false;
    bool flavor_seen_ = false;
    std::vector<std::string> replaced_;
    std::map<std::string, std::pair<Value, int>> values_;
};

}  // namespace

bool is_torchtitan_module(const std::string& text) {
    return (text.find("from torchtitan") != std::string::npos ||
            text.find("import torchtitan") != std::string::npos) &&
           text.find("Trainer.Config") != std::string::npos;
}

ImportResult import_torchtitan_module(const std::string& text, const std::string& file,
                                      const ImportOptions& options) {
    ImportResult r;
    r.format = ImportFormat::Torchtitan;
    TorchtitanSettings s;
    s.target = TorchtitanTarget::Main;
    s.shard = -1;
    s.ac_mode = "selective";  // Trainer.Config's default policy is SelectiveAC
    s.ac_option = "op";
    ModuleReader reader(file, r);
    reader.read(text, options.config_function, options.model.has_value(), s);
    layout_from_torchtitan(s, file, options, r);
    return r;
}

}  // namespace meshwork
