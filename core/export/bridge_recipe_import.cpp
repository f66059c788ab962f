// Megatron-Bridge recipe -> the Megatron-LM arguments it stands for -> Layout
// (bridge_recipe_import.h). Facts of Megatron-Bridge used here, at NVIDIA-NeMo/Megatron-Bridge
// 067f987d (docs/export.md, "Megatron-Bridge recipes", keeps them with their lines):
//  - recipes build one ConfigContainer (src/megatron/bridge/training/config.py) whose `model`
//    is a model provider (Megatron-Core's TransformerConfig fields) and whose `train`, `ddp`
//    and `optimizer` sections carry Megatron-LM's argument names;
//  - the mixed-precision recipes by name (training/mixed_precision.py:184-430, registered with
//    their hyphenated names too, :167-181) and the performance recipes' _perf_precision
//    ("bf16", "fp8_cs", "fp8_ds", "fp8_mx", "nvfp4"; perf_recipes/_common.py);
//  - comm_overlap = CommOverlapConfig(tp_comm_overlap=..., overlap_moe_expert_parallel_comm=...,
//    delay_wgrad_compute=...) (training/comm_overlap.py).
#include "core/export/bridge_recipe_import.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <cctype>
#include <cmath>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/cluster/cluster_spec.h"
#include "core/common/resources.h"
#include "core/export/import_common.h"
#include "core/export/megatron_import_parser.h"
#include "core/export/python_source.h"
#include "core/export/text_file.h"
#include "core/model/hf_config.h"

namespace meshwork {

namespace fs = std::filesystem;
using megatron_import_detail::FlagSpec;
using megatron_import_detail::layout_flag;
using megatron_import_detail::MegatronParser;

namespace {

// Calls followed through at most this depth (a recipe, its base, their helpers).
constexpr int kMaxCallDepth = 24;
// Modules read at most (a recipe imports from a handful).
constexpr int kMaxModules = 64;
// Statements read at most, over every call followed (a recipe and its bases read a few
// thousand; a hostile module calling a large helper many times would not end soon).
constexpr long long kMaxStatements = 200000;

struct PyFunction {
    std::string name;
    std::vector<std::pair<std::string, std::optional<PyExpr>>> params;  // name, default
    std::vector<PyStatement> body;
    int line = 0;
};

struct ImportedName {
    std::string module;  // dotted, or with leading dots when relative
    std::string name;
};

struct PyModule {
    std::string file;     // path as read
    std::string display;  // path shown in messages: below the checkout's src/, else as given
    std::map<std::string, PyFunction> functions;
    std::map<std::string, ImportedName> imports;
    std::map<std::string, PyExpr> constants;
};

// Hand-written matching, not std::regex: libstdc++'s regex recurses per character and a long
// statement (an unbalanced bracket joins the rest of a file into one) overflows the stack.
void skip_spaces(const std::string& s, std::size_t& pos) {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
}

std::string first_word(const std::string& s) {
    std::size_t pos = 0;
    return py_take_name(s, pos);
}

bool block_header(const std::string& s) {
    static const char* const kKeywords = "if elif else for while with try except finally async";
    return !s.empty() && s.back() == ':' && list_has_word(kKeywords, first_word(s));
}

// `def NAME(PARAMS) -> TYPE:` (or `async def`): the name and the parameters' text.
bool parse_def(const std::string& s, std::string& name, std::string& params) {
    std::size_t pos = 0;
    std::string word = py_take_name(s, pos);
    if (word == "async") {
        skip_spaces(s, pos);
        word = py_take_name(s, pos);
    }
    if (word != "def" || s.empty() || s.back() != ':') return false;
    skip_spaces(s, pos);
    name = py_take_name(s, pos);
    skip_spaces(s, pos);
    if (name.empty() || pos >= s.size() || s[pos] != '(') return false;
    bool closed = false;
    py_scan(s, pos, [&](std::size_t i, int depth) {
        if (s[i] != ')' || depth != 1) return true;
        params = s.substr(pos + 1, i - pos - 1);
        closed = true;
        return false;
    });
    return closed;
}

std::unique_ptr<PyModule> parse_module(const std::string& text, const std::string& file, const std::string& display) {
    auto m = std::make_unique<PyModule>();
    m->file = file;
    m->display = display;
    const std::vector<PyStatement> sts = py_statements(text);
    for (std::size_t k = 0; k < sts.size(); ++k) {
        const PyStatement& st = sts[k];
        if (st.indent != 0) continue;
        std::string name, params;
        if (parse_def(st.text, name, params)) {
            PyFunction f;
            f.name = name;
            f.line = st.line;
            // Each parameter: its name (after * or **), its annotation dropped, its default.
            for (const std::string& item : py_top_level_items(params)) {
                std::size_t pos = 0;
                skip_spaces(item, pos);
                while (pos < item.size() && item[pos] == '*') ++pos;
                const std::string pname = py_take_name(item, pos);
                if (pname.empty()) continue;
                std::string target, value;
                if (split_py_assignment(item, target, value)) {
                    f.params.emplace_back(pname, parse_py_expr(value));
                } else {
                    f.params.emplace_back(pname, std::nullopt);
                }
            }
            for (std::size_t j = k + 1; j < sts.size() && sts[j].indent > 0; ++j) f.body.push_back(sts[j]);
            m->functions[f.name] = std::move(f);
            continue;
        }
        std::size_t pos = 0;
        if (py_take_name(st.text, pos) == "from") {
            skip_spaces(st.text, pos);
            const std::string module = py_take_name(st.text, pos, true);
            skip_spaces(st.text, pos);
            if (module.empty() || py_take_name(st.text, pos) != "import") continue;
            std::string names = st.text.substr(pos);
            names.erase(std::remove(names.begin(), names.end(), '('), names.end());
            names.erase(std::remove(names.begin(), names.end(), ')'), names.end());
            for (const std::string& item : py_top_level_items(names)) {
                std::stringstream words(item);
                std::string imported, as, alias;
                words >> imported >> as >> alias;
                if (!py_is_identifier(imported)) continue;
                m->imports[as == "as" && py_is_identifier(alias) ? alias : imported] = {module, imported};
            }
            continue;
        }
        std::string target, value;
        if (split_py_assignment(st.text, target, value) && py_is_identifier(target)) {
            m->constants[target] = parse_py_expr(value);
        }
    }
    return m;
}

// The folder holding megatron/bridge above `file` (a checkout's src/), if any.
std::optional<fs::path> bridge_root(const std::string& file) {
    std::error_code ec;
    fs::path dir = fs::absolute(fs::path(file), ec).parent_path();
    for (int up = 0; up < 16 && !dir.empty(); ++up) {
        if (fs::is_directory(dir / "megatron" / "bridge", ec)) return dir;
        if (dir == dir.parent_path()) break;
        dir = dir.parent_path();
    }
    return std::nullopt;
}

// One setting and where it was made.
struct Setting {
    PyExpr value;
    std::string where;  // "perf_recipes/qwen/b200/qwen3_moe.py:199"
    // Made by apply_flex_dispatcher_backend, whose GPU check waits for the cluster.
    bool by_flex_helper = false;
};

// What a name stands for inside a function being read.
struct Binding {
    bool config = false;  // the ConfigContainer being built
    PyExpr value;         // a constant otherwise
    std::string section;  // or one section of it (a helper's `model_cfg` for cfg.model)
    // `value` is a section's constructor call a helper returned (`opt_cfg, scheduler_cfg =
    // distributed_fused_adam_with_cosine_annealing(...)`), its keywords computed there.
    bool constructed = false;
};
using Env = std::map<std::string, Binding>;

// Mixed-precision recipes by name: Megatron-LM's precision arguments, and the recipe's
// grad_reduce_in_fp32, which MixedPrecisionConfig.setup writes over the DDP config's
// (training/mixed_precision.py:113-157, called by training/config.py:2011-2016 at 067f987d):
// bf16_mixed True (:196), fp16_mixed False (:212), every other recipe starts from one of the
// two; _perf_precision sets False (perf_recipes/_common.py:122).
struct Precision {
    const char* name;
    const char* args;  // space-separated
    bool grad_reduce_in_fp32;
};
constexpr Precision kPrecisions[] = {
    // training/mixed_precision.py at 067f987d (line of each def).
    {"bf16_mixed", "--bf16", true},                                                      // :185
    {"fp16_mixed", "--fp16", false},                                                     // :201
    {"bf16_with_fp8_delayed_scaling_mixed", "--bf16 --fp8-format hybrid --fp8-recipe delayed", true},   // :217
    {"fp16_with_fp8_delayed_scaling_mixed", "--fp16 --fp8-format hybrid --fp8-recipe delayed", false},  // :236
    {"bf16_with_mxfp8_mixed", "--bf16 --fp8-format e4m3 --fp8-recipe mxfp8", true},      // :255
    {"fp16_with_mxfp8_mixed", "--fp16 --fp8-format e4m3 --fp8-recipe mxfp8", false},     // :270
    {"bf16_with_fp8_current_scaling_mixed", "--bf16 --fp8-format hybrid --fp8-recipe tensorwise", true},  // :285
    {"nemotron_h_bf16_with_fp8_current_scaling_mixed", "--bf16 --fp8-format hybrid --fp8-recipe tensorwise", true},  // :307
    {"nanov2_bf16_with_fp8_current_scaling_mixed", "--bf16 --fp8-format hybrid --fp8-recipe tensorwise", true},  // :329
    {"fp16_with_fp8_current_scaling_mixed", "--fp16 --fp8-format hybrid --fp8-recipe tensorwise", false},  // :351
    {"bf16_with_fp8_subchannel_scaling_mixed", "--bf16 --fp8-format e4m3 --fp8-recipe blockwise", true},  // :373
    {"fp16_with_fp8_subchannel_scaling_mixed", "--fp16 --fp8-format e4m3 --fp8-recipe blockwise", false},  // :389
    {"bf16_with_nvfp4_mixed", "--bf16 --fp4-format e2m1 --fp4-recipe nvfp4", true},       // :405
    // :421: NVFP4 but for the last 14 layers (first_last_layers_bf16, num_layers_at_end_in_bf16).
    {"nemotron_3_super_bf16_with_nvfp4_mixed", "--bf16 --fp4-format e2m1 --fp4-recipe nvfp4", true},
    // perf_recipes/_common.py _perf_precision(compute_dtype).
    {"bf16", "--bf16", false},
    {"fp8_cs", "--bf16 --fp8-format hybrid --fp8-recipe tensorwise", false},
    {"fp8_ds", "--bf16 --fp8-format hybrid --fp8-recipe delayed", false},
    {"fp8_mx", "--bf16 --fp8-format e4m3 --fp8-recipe mxfp8", false},
    {"nvfp4", "--bf16 --fp4-format e2m1 --fp4-recipe nvfp4", false},
    // MixedPrecisionConfig(...) written out with neither bf16 nor fp16 (RecipeReader::
    // constructed_precision): fp32, Megatron-LM's default.
    {"fp32", "", true},
};

const Precision* precision_named(std::string name) {
    std::replace(name.begin(), name.end(), '-', '_');
    for (const Precision& p : kPrecisions) {
        if (name == p.name) return &p;
    }
    return nullptr;
}

// Python literals the reader makes itself (defaults, computed settings), with their text.
PyExpr bool_expr(bool b) {
    PyExpr v;
    v.kind = PyExpr::Bool;
    v.b = b;
    v.text = b ? "True" : "False";
    return v;
}

PyExpr str_expr(const std::string& s) {
    PyExpr v;
    v.kind = PyExpr::Str;
    v.s = s;
    v.text = "'" + s + "'";
    return v;
}

// A setting's value when it is a Python bool.
std::optional<bool> bool_setting(const std::map<std::string, Setting>& settings, const std::string& key) {
    const auto it = settings.find(key);
    if (it == settings.end() || it->second.value.kind != PyExpr::Bool) return std::nullopt;
    return it->second.value.b;
}

// The names of `a, (b, c)`: split at commas, spaces and parentheses trimmed.
std::vector<std::string> comma_names(const std::string& text) {
    std::vector<std::string> names;
    std::stringstream parts(text);
    std::string name;
    while (std::getline(parts, name, ',')) {
        name.erase(0, name.find_first_not_of(" ()"));
        name.erase(name.find_last_not_of(" ()") + 1);
        names.push_back(name);
    }
    return names;
}

// The last component of a dotted name.
std::string last_name(const std::string& dotted) {
    const auto dot = dotted.rfind('.');
    return dot == std::string::npos ? dotted : dotted.substr(dot + 1);
}

std::string dashed(std::string s) {
    std::replace(s.begin(), s.end(), '_', '-');
    return s;
}

// ConfigContainer's sections whose fields never change the layout (training/config.py:965-1010
// at 067f987d).
constexpr const char* kNonLayoutSections =
    "validation logger tokenizer checkpoint rng dist profiling ft straggler nvrx_straggler "
    "inprocess_restart rerun_state_machine tensor_inspect peft env_vars scheduler "
    "optimizer_config_override_provider";

class RecipeReader {
  public:
    RecipeReader(const std::string& file, const ImportOptions& options, ImportResult& r)
        : file_(file), options_(options), r_(r), root_(bridge_root(file)) {}

    void read(const std::string& text) {
        PyModule& entry = add_module(parse_module(text, file_, file_));
        std::vector<std::string> candidates;
        for (const auto& [name, f] : entry.functions) {
            if (returns_config(f)) candidates.push_back(name);
        }
        std::string chosen;
        if (options_.config_function) {
            if (entry.functions.count(*options_.config_function) == 0) {
                throw InputError("<flags>", "--config",
                                 "no function " + *options_.config_function + "() in " + file_ + listing(candidates));
            }
            chosen = *options_.config_function;
        } else if (candidates.size() == 1) {
            chosen = candidates.front();
        } else {
            throw InputError(file_, "def ... -> ConfigContainer",
                             candidates.empty() ? "no recipe function (a def that builds and returns a ConfigContainer)"
                                                : std::to_string(candidates.size()) +
                                                      " recipe functions: pass --config NAME" + listing(candidates));
        }
        function_ = chosen;
        Env env;
        if (!run(entry, entry.functions.at(chosen), env, 0)) {
            throw InputError(file_, chosen + "()",
                             "does not return a ConfigContainer that the reader can follow (line " +
                                 std::to_string(entry.functions.at(chosen).line) + ")");
        }
    }

    [[nodiscard]] const std::map<std::string, Setting>& settings() const { return settings_; }
    [[nodiscard]] const std::string& function() const { return function_; }
    [[nodiscard]] const std::optional<Setting>& model_source() const { return model_; }
    [[nodiscard]] const std::optional<Setting>& precision() const { return precision_; }
    [[nodiscard]] bool in_checkout() const { return root_.has_value(); }
    // Whether the recipe gave the section a config (a constructor call), not None.
    [[nodiscard]] bool built(const std::string& section) const { return built_sections_.count(section) != 0; }

  private:
    static std::string listing(const std::vector<std::string>& names) {
        if (names.empty()) return "";
        std::string s = " (";
        for (std::size_t k = 0; k < names.size(); ++k) s += (k ? ", " : "") + names[k];
        return s + ")";
    }

    // A recipe function: public, without parameters, returning something after building a
    // config (it calls ConfigContainer or sets a `.model.` or `.train.` field).
    static bool returns_config(const PyFunction& f) {
        bool returns = false, builds = false;
        for (const PyStatement& st : f.body) {
            if (st.text.rfind("return ", 0) == 0) returns = true;
            if (st.text.find("ConfigContainer(") != std::string::npos || st.text.find(".model.") != std::string::npos ||
                st.text.find(".train.") != std::string::npos)
                builds = true;
        }
        return returns && builds && !f.name.empty() && f.name[0] != '_' && f.params.empty();
    }

    PyModule& add_module(std::unique_ptr<PyModule> m) {
        const std::string key = m->file;
        auto& slot = modules_[key];
        slot = std::move(m);
        return *slot;
    }

    // The module a dotted import names, read once; null when it is outside the checkout.
    PyModule* module(const PyModule& from, const std::string& dotted) {
        fs::path path;
        if (!dotted.empty() && dotted[0] == '.') {
            std::size_t dots = 0;
            while (dots < dotted.size() && dotted[dots] == '.') ++dots;
            path = fs::path(from.file).parent_path();
            for (std::size_t k = 1; k < dots; ++k) path = path.parent_path();
            std::string rest = dotted.substr(dots);
            std::replace(rest.begin(), rest.end(), '.', '/');
            path /= rest;
        } else if (root_ && dotted.rfind("megatron.bridge", 0) == 0) {
            std::string rel = dotted;
            std::replace(rel.begin(), rel.end(), '.', '/');
            path = *root_ / rel;
        } else {
            return nullptr;
        }
        std::error_code ec;
        fs::path file = path;
        file += ".py";
        if (!fs::is_regular_file(file, ec)) file = path / "__init__.py";
        if (!fs::is_regular_file(file, ec)) return nullptr;
        const std::string key = file.string();
        if (auto it = modules_.find(key); it != modules_.end()) return it->second.get();
        if (static_cast<int>(modules_.size()) >= kMaxModules) return nullptr;
        const std::string text = read_text_input(key);
        std::string display = key;
        if (root_) {
            const fs::path rel = fs::relative(file, *root_, ec);
            if (!ec && !rel.empty()) display = rel.string();
        }
        return &add_module(parse_module(text, key, display));
    }

    // A name's function: defined in `m`, or imported into it (followed through re-exports).
    std::pair<PyModule*, const PyFunction*> function_of(PyModule& m, const std::string& name, int hops = 0) {
        if (hops > 8) return {nullptr, nullptr};
        if (auto it = m.functions.find(name); it != m.functions.end()) return {&m, &it->second};
        auto imp = m.imports.find(name);
        if (imp == m.imports.end()) return {nullptr, nullptr};
        PyModule* other = module(m, imp->second.module);
        if (other == nullptr) return {nullptr, nullptr};
        return function_of(*other, imp->second.name, hops + 1);
    }

    // A constant's value: a local, a module constant, or an imported one.
    std::optional<PyExpr> constant_of(PyModule& m, const Env& env, const std::string& name, int hops = 0) {
        if (hops > 8) return std::nullopt;
        if (auto it = env.find(name); it != env.end()) {
            if (!it->second.config && it->second.section.empty() && it->second.value.literal()) return it->second.value;
            return std::nullopt;
        }
        if (auto v = setting_value(env, name)) return v;
        if (auto it = m.constants.find(name); it != m.constants.end()) {
            if (it->second.literal()) return it->second;
            if (it->second.kind == PyExpr::Name) return constant_of(m, {}, it->second.s, hops + 1);
            return std::nullopt;
        }
        auto imp = m.imports.find(name);
        if (imp == m.imports.end()) return std::nullopt;
        PyModule* other = module(m, imp->second.module);
        if (other == nullptr) return std::nullopt;
        return constant_of(*other, {}, imp->second.name, hops + 1);
    }

    // `e` with names replaced by the constants they stand for (lists element-wise), and an
    // expression computed when evaluate() can.
    PyExpr resolved(PyModule& m, const Env& env, const PyExpr& e) {
        if (e.kind == PyExpr::Name) {
            if (auto v = constant_of(m, env, e.s)) return *v;
            return e;
        }
        if (e.kind == PyExpr::List) {
            PyExpr out = e;
            for (PyExpr& item : out.items) item = resolved(m, env, item);
            return out;
        }
        const bool computed = e.kind == PyExpr::BinOp || e.kind == PyExpr::Compare || e.kind == PyExpr::Cond ||
                              e.kind == PyExpr::Subscript || (e.kind == PyExpr::Call && !e.object);
        if (computed) {
            if (auto v = evaluate(m, env, e, 0)) return *v;
        }
        return e;
    }

    // Canonical text of a literal: dict keys and `in` operands compare by it.
    static std::string repr(const PyExpr& v) {
        switch (v.kind) {
            case PyExpr::None: return "None";
            case PyExpr::Bool: return v.b ? "True" : "False";
            case PyExpr::Int: return std::to_string(v.i);
            case PyExpr::Float: {
                std::ostringstream o;
                o << v.f;
                return o.str();
            }
            case PyExpr::Str: return "'" + v.s + "'";
            case PyExpr::List: {
                std::string out = "[";
                for (std::size_t k = 0; k < v.items.size(); ++k) out += (k ? ", " : "") + repr(v.items[k]);
                return out + "]";
            }
            default: return "?" + v.text;
        }
    }

    static std::optional<bool> truthy(const PyExpr& v) {
        switch (v.kind) {
            case PyExpr::None: return false;
            case PyExpr::Bool: return v.b;
            case PyExpr::Int: return v.i != 0;
            case PyExpr::Float: return v.f != 0;
            case PyExpr::Str: return !v.s.empty();
            case PyExpr::List: return !v.items.empty();
            case PyExpr::Dict: return !v.items.empty();
            default: return std::nullopt;
        }
    }

    // Values the evaluator builds hold at most this many nodes (a layout table holds a few
    // hundred): `[[0] * 100000] * 100000` or a name doubled in a loop of assignments stops here.
    static constexpr std::size_t kMaxValueNodes = 100000;

    // Nodes of a value, counted up to `limit` (then limit + 1).
    static std::size_t nodes(const PyExpr& v, std::size_t limit = kMaxValueNodes) {
        std::size_t n = 1;
        for (const PyExpr& item : v.items) {
            n += nodes(item, limit);
            if (n > limit) return limit + 1;
        }
        for (const PyKeyword& k : v.keywords) {
            n += nodes(k.second, limit);
            if (n > limit) return limit + 1;
        }
        return n;
    }

    static std::optional<PyExpr> list_of(std::vector<PyExpr> items) {
        PyExpr l;
        l.kind = PyExpr::List;
        l.items = std::move(items);
        if (nodes(l) > kMaxValueNodes) return std::nullopt;
        l.text = repr(l);
        return l;
    }

    // The value of `e` when constants give it without running anything with effects: names,
    // list and dict literals, + and * on numbers, strings and lists, the comparisons, `A if C
    // else B`, subscripts, list()/tuple(), and calls of the recipe's own functions whose bodies
    // assign names and return a value (how Bridge's recipes look up a pipeline layout by PP and
    // VP). nullopt otherwise.
    std::optional<PyExpr> evaluate(PyModule& m, const Env& env, const PyExpr& e, int depth) {
        if (depth > kMaxCallDepth) return std::nullopt;
        switch (e.kind) {
            case PyExpr::None:
            case PyExpr::Bool:
            case PyExpr::Int:
            case PyExpr::Float:
            case PyExpr::Str: return e;
            case PyExpr::Name: return constant_of(m, env, e.s);
            case PyExpr::List: {
                std::vector<PyExpr> items;
                for (const PyExpr& item : e.items) {
                    auto v = evaluate(m, env, item, depth + 1);
                    if (!v) return std::nullopt;
                    items.push_back(std::move(*v));
                }
                return list_of(std::move(items));
            }
            case PyExpr::Dict: {
                PyExpr d;
                d.kind = PyExpr::Dict;
                for (std::size_t k = 0; k < e.items.size() && k < e.keywords.size(); ++k) {
                    auto key = evaluate(m, env, e.items[k], depth + 1);
                    auto value = evaluate(m, env, e.keywords[k].second, depth + 1);
                    if (!key || !value) return std::nullopt;
                    d.items.push_back(*key);
                    d.keywords.push_back(PyKeyword{repr(*key), std::move(*value)});
                }
                d.text = e.text;
                return d;
            }
            case PyExpr::BinOp: return binary(m, env, e, depth);
            case PyExpr::Compare: return compare(m, env, e, depth);
            case PyExpr::Cond: {
                const auto cond = evaluate(m, env, e.items[1], depth + 1);
                const auto yes = cond ? truthy(*cond) : std::nullopt;
                if (!yes) return std::nullopt;
                return evaluate(m, env, e.items[*yes ? 0 : 2], depth + 1);
            }
            case PyExpr::Subscript: {
                const auto object = evaluate(m, env, *e.object, depth + 1);
                const auto index = evaluate(m, env, e.items.front(), depth + 1);
                if (!object || !index) return std::nullopt;
                if (object->kind == PyExpr::Dict) {
                    for (const PyKeyword& k : object->keywords) {
                        if (k.first == repr(*index)) return k.second;
                    }
                    return std::nullopt;  // a KeyError in Python
                }
                if (object->kind == PyExpr::List && index->kind == PyExpr::Int) {
                    const long long n = static_cast<long long>(object->items.size());
                    const long long i = index->i < 0 ? index->i + n : index->i;
                    if (i >= 0 && i < n) return object->items[static_cast<std::size_t>(i)];
                }
                return std::nullopt;
            }
            case PyExpr::Call: return call_value(m, env, e, depth);
            default: return std::nullopt;
        }
    }

    std::optional<PyExpr> binary(PyModule& m, const Env& env, const PyExpr& e, int depth) {
        if (e.s == "or" || e.s == "and") {
            // Python's value: `a or b` is a when a is true, else b; `a and b` the reverse.
            auto a = evaluate(m, env, e.items[0], depth + 1);
            const auto yes = a ? truthy(*a) : std::nullopt;
            if (!yes) return std::nullopt;
            if (*yes == (e.s == "or")) return a;
            return evaluate(m, env, e.items[1], depth + 1);
        }
        auto a = evaluate(m, env, e.items[0], depth + 1);
        auto b = evaluate(m, env, e.items[1], depth + 1);
        if (!a || !b) return std::nullopt;
        const char op = e.s.empty() ? '?' : e.s[0];
        const bool numbers = (a->kind == PyExpr::Int || a->kind == PyExpr::Float) &&
                             (b->kind == PyExpr::Int || b->kind == PyExpr::Float);
        if (numbers) {
            std::optional<PyExpr> r = py_number_op(op, *a, *b);
            if (r) r->text = repr(*r);
            return r;
        }
        if (op == '+' && a->kind == PyExpr::Str && b->kind == PyExpr::Str) {
            PyExpr r = *a;
            r.s += b->s;
            r.text = repr(r);
            return r;
        }
        if (op == '+' && a->kind == PyExpr::List && b->kind == PyExpr::List) {
            std::vector<PyExpr> items = a->items;
            items.insert(items.end(), b->items.begin(), b->items.end());
            return list_of(std::move(items));
        }
        if (op == '*' && (a->kind == PyExpr::List) != (b->kind == PyExpr::List) &&
            (a->kind == PyExpr::Int || b->kind == PyExpr::Int)) {
            const PyExpr& l = a->kind == PyExpr::List ? *a : *b;
            const long long times = a->kind == PyExpr::Int ? a->i : b->i;
            // A layout table holds a few hundred entries; more is not a recipe.
            if (times < 0 || static_cast<double>(times) * static_cast<double>(nodes(l)) > kMaxValueNodes) return std::nullopt;
            std::vector<PyExpr> items;
            for (long long k = 0; k < times; ++k) items.insert(items.end(), l.items.begin(), l.items.end());
            return list_of(std::move(items));
        }
        return std::nullopt;
    }

    std::optional<PyExpr> compare(PyModule& m, const Env& env, const PyExpr& e, int depth) {
        auto a = evaluate(m, env, e.items[0], depth + 1);
        auto b = evaluate(m, env, e.items[1], depth + 1);
        if (!a || !b) return std::nullopt;
        if (e.s == "is" || e.s == "is not") {
            // Identity: read for None (and booleans) only.
            const bool none = a->kind == PyExpr::None || b->kind == PyExpr::None;
            const bool bools = a->kind == PyExpr::Bool && b->kind == PyExpr::Bool;
            if (!none && !bools) return std::nullopt;
            const bool same = none ? a->kind == b->kind : a->b == b->b;
            return bool_expr(e.s == "is" ? same : !same);
        }
        if (e.s == "==" || e.s == "!=") return bool_expr((repr(*a) == repr(*b)) == (e.s == "=="));
        bool found = false;
        if (b->kind == PyExpr::List) {
            for (const PyExpr& item : b->items) found = found || repr(item) == repr(*a);
        } else if (b->kind == PyExpr::Dict) {
            for (const PyKeyword& k : b->keywords) found = found || k.first == repr(*a);
        } else if (b->kind == PyExpr::Str && a->kind == PyExpr::Str) {
            found = b->s.find(a->s) != std::string::npos;
        } else {
            return std::nullopt;
        }
        return bool_expr(e.s == "in" ? found : !found);
    }

    // list(x) / tuple(x), or a function of the recipe's modules run on constant arguments:
    // its assignments to names and its return; blocks (if, for, try) are not run.
    std::optional<PyExpr> call_value(PyModule& m, const Env& env, const PyExpr& call, int depth) {
        if (call.object || depth > kMaxCallDepth) return std::nullopt;
        if (call.s == "getattr" && call.items.size() >= 2 && call.items[0].kind == PyExpr::Name &&
            call.items[1].kind == PyExpr::Str) {
            // getattr(model_cfg, "field", default) on a config section: the recipe's setting
            // when it made one; the default stands only for a field the provider lacks, which
            // the reader cannot tell, so nothing otherwise.
            return setting_value(env, call.items[0].s + "." + call.items[1].s);
        }
        if ((call.s == "list" || call.s == "tuple") && call.items.size() == 1 && call.keywords.empty()) {
            auto v = evaluate(m, env, call.items.front(), depth + 1);
            if (v && v->kind == PyExpr::List) return v;
            return std::nullopt;
        }
        auto [callee_module, f] = function_of(m, call.s);
        if (f == nullptr || f->body.empty()) return std::nullopt;
        Env local;
        for (std::size_t k = 0; k < f->params.size(); ++k) {
            const std::string& name = f->params[k].first;
            std::optional<PyExpr> arg;
            if (k < call.items.size()) arg = evaluate(m, env, call.items[k], depth + 1);
            for (const PyKeyword& kw : call.keywords) {
                if (kw.first == name) arg = evaluate(m, env, kw.second, depth + 1);
            }
            if (!arg && f->params[k].second) arg = evaluate(*callee_module, {}, *f->params[k].second, depth + 1);
            if (!arg) return std::nullopt;
            local[name] = Binding{false, *arg, {}, false};
        }
        const int body_indent = f->body.front().indent;
        for (const PyStatement& st : f->body) {
            if (++statements_read_ > kMaxStatements) return std::nullopt;
            if (st.indent != body_indent || block_header(st.text)) continue;
            if (st.text.rfind("return", 0) == 0 && (st.text.size() == 6 || st.text[6] == ' ')) {
                return evaluate(*callee_module, local, parse_py_expr(st.text.substr(6)), depth + 1);
            }
            std::string target, value;
            if (!split_py_assignment(st.text, target, value) || !py_is_identifier(target)) continue;
            if (auto v = evaluate(*callee_module, local, parse_py_expr(value), depth + 1)) {
                local[target] = Binding{false, *v, {}, false};
            } else {
                local.erase(target);
            }
        }
        return std::nullopt;
    }

    std::string where(const PyModule& m, int line) const { return m.display + ":" + std::to_string(line); }

    bool is_config(const Env& env, const std::string& name) const {
        auto it = env.find(name);
        return it != env.end() && it->second.config;
    }

    // The config section `name` stands for: "model" for `cfg.model` or for a helper's
    // parameter bound to it; empty otherwise.
    std::string section_of(const Env& env, const std::string& name) const {
        const auto dot = name.find('.');
        if (dot != std::string::npos) {
            const std::string section = name.substr(dot + 1);
            return is_config(env, name.substr(0, dot)) && section.find('.') == std::string::npos ? section : "";
        }
        auto it = env.find(name);
        return it != env.end() ? it->second.section : "";
    }

    // The value the recipe gave `cfg.section.field` (or `model_cfg.field` for a section bound
    // to a name), when it gave one that is a literal.
    std::optional<PyExpr> setting_value(const Env& env, const std::string& dotted) const {
        const auto dot = dotted.rfind('.');
        if (dot == std::string::npos) return std::nullopt;
        const std::string section = section_of(env, dotted.substr(0, dot));
        if (section.empty()) return std::nullopt;
        auto it = settings_.find(section + "." + dotted.substr(dot + 1));
        // apply_flex_dispatcher_backend's settings wait for the cluster's GPU check.
        if (it == settings_.end() || !it->second.value.literal() || it->second.by_flex_helper) return std::nullopt;
        return it->second.value;
    }

    void set(const std::string& key, PyExpr value, const std::string& at, bool by_flex_helper = false) {
        settings_[key] = {std::move(value), at, by_flex_helper};
    }

    // Forgets what was set in `section` (a section given whole, or set to None).
    void clear_section(const std::string& section) {
        const std::string prefix = section + ".";
        for (auto it = settings_.begin(); it != settings_.end();) {
            it = it->first.rfind(prefix, 0) == 0 ? settings_.erase(it) : std::next(it);
        }
    }

    // `cfg.section = value`.
    void set_section(PyModule& m, const Env& env, const std::string& section, const PyExpr& raw, int line) {
        const std::string at = where(m, line);
        if (raw.kind == PyExpr::Name) {
            if (auto it = env.find(raw.s); it != env.end() && it->second.constructed) {
                // A constructor a helper returned: its keywords were computed there.
                clear_section(section);
                for (const auto& [field, value] : it->second.value.keywords) set(section + "." + field, value, at);
                built_sections_.insert(section);
                return;
            }
        }
        const PyExpr v = resolved(m, env, raw);
        if (section == "model") {
            if (v.kind == PyExpr::None) {
                model_.reset();  // ConfigContainer(model=None): set by the recipe later
                return;
            }
            if (v.kind == PyExpr::Call && v.object && v.object->kind == PyExpr::Call &&
                last_name(v.object->s) == "from_hf_pretrained" && !v.object->items.empty()) {
                PyExpr id = resolved(m, env, v.object->items.front());
                if (id.kind == PyExpr::Str) {
                    model_ = Setting{id, at};
                    return;
                }
            }
            if (v.kind == PyExpr::Call && last_name(v.s) == "from_hf_pretrained" && !v.items.empty()) {
                PyExpr id = resolved(m, env, v.items.front());
                if (id.kind == PyExpr::Str) {
                    model_ = Setting{id, at};
                    return;
                }
            }
            PyExpr provider;
            provider.kind = PyExpr::Other;
            provider.text = v.text;
            model_ = Setting{provider, at};
            if (v.kind == PyExpr::Call) keywords(m, env, "model", v, line);
            return;
        }
        if (section == "mixed_precision") {
            if (v.kind == PyExpr::Call && last_name(v.s) == "MixedPrecisionConfig") {
                constructed_precision(m, env, v, at, line);
                return;
            }
            std::string name;
            if (v.kind == PyExpr::Str) name = v.s;
            if (v.kind == PyExpr::Call) name = precision_call(m, env, v, 0);
            PyExpr n;
            n.kind = PyExpr::Str;
            n.s = name.empty() ? v.text : name;
            n.text = v.text;
            precision_ = Setting{n, at};
            // The recipe's later field settings (cfg.mixed_precision.fp8_recipe = ...) refine it.
            clear_section("mixed_precision");
            return;
        }
        if (v.kind == PyExpr::None) {
            clear_section(section);
            built_sections_.erase(section);
            return;
        }
        if (v.kind == PyExpr::Call) {
            // A section built whole: its constructor's defaults replace what was set before.
            clear_section(section);
            keywords(m, env, section, v, line);
            built_sections_.insert(section);
            return;
        }
        r_.ignored.push_back({at, "cfg." + section + " = " + raw.text,
                              section == "env_vars" ? "environment variables: not part of the layout"
                                                    : "not a constructor call: not read"});
    }

    // `cfg.mixed_precision = MixedPrecisionConfig(bf16=True, ...)` written out rather than named
    // (recipes/kimi/h100/kimi_k2.py:174, recipes/deepseek/h100/deepseek_v3.py): the base recipe
    // of its bf16 or fp16 flag, then its fields as the recipe's field settings. The dataclass's
    // defaults (training/mixed_precision.py:40-66 at 067f987d): fp32, fp16 and bf16 False, fp8
    // and fp4 None, fp8_recipe "tensorwise", fp4_recipe "nvfp4", grad_reduce_in_fp32 True.
    void constructed_precision(PyModule& m, const Env& env, const PyExpr& call, const std::string& at, int line) {
        clear_section("mixed_precision");
        keywords(m, env, "mixed_precision", call, line);
        const auto flag = [&](const char* field) {
            const auto it = settings_.find(std::string("mixed_precision.") + field);
            return it != settings_.end() && it->second.value.kind == PyExpr::Bool && it->second.value.b;
        };
        const auto stated = [&](const char* field) {
            const auto it = settings_.find(std::string("mixed_precision.") + field);
            return it != settings_.end() && it->second.value.kind == PyExpr::Str;
        };
        PyExpr n;
        n.kind = PyExpr::Str;
        n.text = call.text;
        n.s = flag("fp16") ? "fp16_mixed" : flag("bf16") ? "bf16_mixed" : "fp32";
        precision_ = Setting{n, at};
        settings_.erase("mixed_precision.bf16");
        settings_.erase("mixed_precision.fp16");
        settings_.erase("mixed_precision.fp32");
        const auto default_recipe = [&](const char* format, const char* recipe, const char* value) {
            if (!stated(format) || settings_.count(std::string("mixed_precision.") + recipe) != 0) return;
            set(std::string("mixed_precision.") + recipe, str_expr(value), at);
        };
        // The dataclass's default, not bf16_mixed's or fp16_mixed's.
        if (settings_.count("mixed_precision.grad_reduce_in_fp32") == 0) {
            set("mixed_precision.grad_reduce_in_fp32", bool_expr(true), at);
        }
        default_recipe("fp8", "fp8_recipe", "tensorwise");
        default_recipe("fp4", "fp4_recipe", "nvfp4");
    }

    // The recipe name a precision call stands for: a recipe function by name, a lookup by a
    // constant name (_perf_precision("fp8_mx"), get_mixed_precision_config("bf16_mixed")), or a
    // helper of the recipe's whose body starts from one of those.
    std::string precision_call(PyModule& m, const Env& env, const PyExpr& call, int depth) {
        const std::string name = last_name(call.s);
        if ((name == "_perf_precision" || name == "get_mixed_precision_config" || name == "get_precision_config") &&
            !call.items.empty()) {
            const PyExpr arg = resolved(m, env, call.items.front());
            if (arg.kind == PyExpr::Str) return arg.s;
        }
        if (precision_named(name) != nullptr || depth > 4) return name;
        auto [callee_module, f] = function_of(m, call.s);
        if (f == nullptr) return name;
        for (const PyStatement& st : f->body) {
            std::string target, value;
            if (!split_py_assignment(st.text, target, value) && st.text.rfind("return ", 0) == 0) value = st.text.substr(7);
            const PyExpr e = parse_py_expr(value);
            if (e.kind != PyExpr::Call || e.object) continue;
            const std::string inner = precision_call(*callee_module, {}, e, depth + 1);
            if (precision_named(inner) != nullptr) return inner;
        }
        return name;
    }

    void keywords(PyModule& m, const Env& env, const std::string& section, const PyExpr& call, int line) {
        for (const auto& [field, value] : call.keywords) set(section + "." + field, resolved(m, env, value), where(m, line));
    }

    // Binds a call's arguments to `f`'s parameters; a config argument binds as the config.
    Env bind(PyModule& caller, const Env& env, const PyExpr& call, const PyFunction& f, int depth) {
        Env callee;
        const auto bind_one = [&](const std::string& param, const PyExpr& arg) {
            Binding b;
            if (arg.kind == PyExpr::Name && is_config(env, arg.s)) {
                b.config = true;
            } else if (arg.kind == PyExpr::Name && !section_of(env, arg.s).empty()) {
                b.section = section_of(env, arg.s);
            } else if (arg.kind == PyExpr::Call && config_call(caller, env, arg, depth + 1)) {
                b.config = true;
            } else {
                b.value = resolved(caller, env, arg);
            }
            callee[param] = b;
        };
        for (std::size_t k = 0; k < call.items.size() && k < f.params.size(); ++k) bind_one(f.params[k].first, call.items[k]);
        for (const auto& [name, arg] : call.keywords) {
            for (const auto& p : f.params) {
                if (p.first == name) bind_one(name, arg);
            }
        }
        for (const auto& [name, def] : f.params) {
            if (callee.count(name) == 0 && def) callee[name] = Binding{false, *def, {}, false};
        }
        return callee;
    }

    // A call that yields a config: ConfigContainer(...), or a function that returns one.
    bool config_call(PyModule& m, const Env& env, const PyExpr& call, int depth) {
        if (call.kind != PyExpr::Call || call.object) return false;
        if (last_name(call.s) == "ConfigContainer") {
            settings_.clear();
            model_.reset();
            for (const auto& [section, value] : call.keywords) set_section(m, env, section, value, line_);
            return true;
        }
        auto [callee_module, f] = function_of(m, call.s);
        if (f == nullptr || depth > kMaxCallDepth) return false;
        Env callee = bind(m, env, call, *f, depth);
        const int saved = line_;
        const bool ok = run(*callee_module, *f, callee, depth + 1);
        line_ = saved;
        return ok;
    }

    // Reads `f`'s body; true when it returns the config.
    bool run(PyModule& m, const PyFunction& f, Env& env, int depth) {
        if (depth > kMaxCallDepth) return false;
        if (f.body.empty()) return false;
        const PyFunction* saved_function = current_;
        current_ = &f;
        const bool returned = run_body(m, f, env, depth);
        current_ = saved_function;
        return returned;
    }

    bool run_body(PyModule& m, const PyFunction& f, Env& env, int depth) {
        return run_block(m, f.body, 0, f.body.size(), env, depth) == Flow::ReturnedConfig;
    }

    // How a block of statements ended: ran to its end, or a `return` (of the config or not).
    enum class Flow { Next, Returned, ReturnedConfig };

    // The condition of an `if`/`elif` header, or "True" for `else:`; empty for other blocks.
    static std::string branch_condition(const std::string& header, bool& continues_chain) {
        const std::string word = first_word(header);
        continues_chain = word == "elif" || word == "else";
        if (word == "else") return "True";
        if (word != "if" && word != "elif") return "";
        return header.substr(word.size(), header.size() - word.size() - 1);
    }

    // Statements [begin, end) of `body` at the indent of body[begin]. An if/elif/else chain
    // runs the branch its condition picks when the condition is computed from constants (the
    // function's arguments, its module's constants, settings the recipe made); a block it
    // cannot decide, and for/while/with/try blocks, are not run: their config settings are
    // listed (conditional()).
    Flow run_block(PyModule& m, const std::vector<PyStatement>& body, std::size_t begin, std::size_t end, Env& env,
                   int depth) {
        if (begin >= end) return Flow::Next;
        const int indent = body[begin].indent;
        enum class Chain { None, Taken, Open, Unknown } chain = Chain::None;
        for (std::size_t i = begin; i < end; ++i) {
            const PyStatement& st = body[i];
            line_ = st.line;
            if (++statements_read_ > kMaxStatements) {
                throw InputError(file_, where(m, st.line),
                                 "more than " + std::to_string(kMaxStatements) +
                                     " statements read through the recipe's calls: not a recipe import-args reads");
            }
            if (block_header(st.text)) {
                std::size_t block_end = i + 1;
                while (block_end < end && body[block_end].indent > indent) ++block_end;
                if (first_word(st.text) == "try") {
                    // The try body runs; what it computes only where the reader cannot
                    // (where Python may raise into the except clause) is not set
                    // (assign()). The except, else and finally clauses are not run.
                    ++try_depth_;
                    const Flow flow = run_block(m, body, i + 1, block_end, env, depth);
                    --try_depth_;
                    if (flow != Flow::Next) return flow;
                    chain = Chain::None;
                    i = block_end - 1;
                    continue;
                }
                bool continues_chain = false;
                const std::string condition = branch_condition(st.text, continues_chain);
                if (!continues_chain) chain = Chain::None;
                std::optional<bool> taken;
                std::string reason;
                if (condition.empty() || (continues_chain && chain == Chain::None)) {
                    reason = "conditions are not evaluated";
                } else if (chain == Chain::Taken) {
                    taken = false;
                    reason = "an earlier branch of the chain is taken";
                } else if (chain == Chain::Unknown) {
                    reason = "an earlier condition of the chain is not computed";
                } else {
                    taken = truthy(resolved(m, env, parse_py_expr(condition)));
                    reason = taken ? "the condition is false here" : "the condition is not computed from constants";
                }
                if (taken && *taken) {
                    chain = Chain::Taken;
                    const Flow flow = run_block(m, body, i + 1, block_end, env, depth);
                    if (flow != Flow::Next) return flow;
                } else {
                    if (!condition.empty()) chain = taken ? (chain == Chain::Taken ? Chain::Taken : Chain::Open) : Chain::Unknown;
                    for (std::size_t k = i + 1; k < block_end; ++k) conditional(m, env, body[k], st.text, st.line, reason);
                }
                i = block_end - 1;
                continue;
            }
            chain = Chain::None;
            if (st.text.rfind("return", 0) == 0) {
                const std::string what = st.text.size() > 6 ? st.text.substr(6) : "";
                const PyExpr e = parse_py_expr(what);
                if (e.kind == PyExpr::Name && is_config(env, e.s)) return Flow::ReturnedConfig;
                if (e.kind == PyExpr::Call && config_call(m, env, e, depth)) return Flow::ReturnedConfig;
                return Flow::Returned;
            }
            std::string target, value;
            if (split_py_assignment(st.text, target, value)) {
                assign(m, env, target, parse_py_expr(value), st.line, depth);
                continue;
            }
            const PyExpr e = parse_py_expr(st.text);
            if (e.kind == PyExpr::Call && !e.object) call_statement(m, env, e, st.line, depth);
        }
        return Flow::Next;
    }

    // `a, b = helper(...)` where the helper builds section configs and returns them
    // (recipes/utils/optimizer_utils.py: `optimizer = OptimizerConfig(...)`, `scheduler =
    // SchedulerConfig(...)`, `return optimizer, scheduler`): each name bound to its
    // constructor, keywords computed with the helper's arguments and defaults; a keyword the
    // reader cannot compute keeps its text only (it never resolves against the caller's names).
    void unpack_constructed(PyModule& m, Env& env, const std::string& targets, const PyExpr& call, int depth) {
        const std::vector<std::string> names = comma_names(targets);
        for (const std::string& n : names) env.erase(n);
        if (call.kind != PyExpr::Call || call.object || depth > kMaxCallDepth) return;
        auto [callee_module, f] = function_of(m, call.s);
        if (f == nullptr || f->body.empty()) return;
        Env local = bind(m, env, call, *f, depth);
        std::map<std::string, PyExpr> built;
        const int indent = f->body.front().indent;
        for (const PyStatement& st : f->body) {
            if (st.indent != indent) continue;
            std::string target, value;
            if (split_py_assignment(st.text, target, value) && py_is_identifier(target)) {
                const PyExpr e = parse_py_expr(value);
                if (e.kind == PyExpr::Call && !e.object && last_name(e.s).size() > 6 &&
                    last_name(e.s).compare(last_name(e.s).size() - 6, 6, "Config") == 0) {
                    PyExpr c = e;
                    for (auto& [field, v] : c.keywords) {
                        v = resolved(*callee_module, local, v);
                        if (!v.literal()) {
                            PyExpr opaque;
                            opaque.kind = PyExpr::Other;
                            opaque.text = v.text;
                            v = opaque;
                        }
                    }
                    built[target] = c;
                } else {
                    local[target] = Binding{false, resolved(*callee_module, local, e), {}, false};
                }
                continue;
            }
            if (st.text.rfind("return ", 0) != 0) continue;
            const std::vector<std::string> returned = comma_names(st.text.substr(7));
            for (std::size_t k = 0; k < returned.size() && k < names.size(); ++k) {
                if (auto it = built.find(returned[k]); it != built.end()) env[names[k]] = Binding{false, it->second, {}, true};
            }
            return;
        }
    }

    void assign(PyModule& m, Env& env, const std::string& target, const PyExpr& value, int line, int depth) {
        if (target.find(',') != std::string::npos) {
            unpack_constructed(m, env, target, value, depth);
            return;
        }
        const auto dot = target.find('.');
        if (dot == std::string::npos) {
            if (value.kind == PyExpr::Call && config_call(m, env, value, depth)) {
                env[target] = Binding{true, {}, {}, false};
            } else if (value.kind == PyExpr::Call && !value.object && used_as_config(target)) {
                // A base config the reader cannot find: the recipe's own settings still count.
                env[target] = Binding{true, {}, {}, false};
                r_.warnings.push_back(where(m, line) + ": the base config " + value.s +
                                      "() was not found (" +
                                      (root_ ? std::string("not in the checkout") : std::string("the recipe is not inside a Megatron-Bridge checkout")) +
                                      "): what it sets is not read; Megatron-LM's defaults stand for it");
            } else if (value.kind == PyExpr::Name && is_config(env, value.s)) {
                env[target] = Binding{true, {}, {}, false};
            } else if (value.kind == PyExpr::Name && !section_of(env, value.s).empty()) {
                env[target] = Binding{false, {}, section_of(env, value.s), false};
            } else {
                env[target] = Binding{false, resolved(m, env, value), {}, false};
            }
            return;
        }
        const std::string base = target.substr(0, dot);
        if (const std::string section = section_of(env, base); !section.empty() && base.find('.') == std::string::npos) {
            const std::string field = target.substr(dot + 1);
            if (field.find('.') != std::string::npos) {
                r_.ignored.push_back({where(m, line), target + " = " + value.text, "a nested setting: not read"});
                return;
            }
            set_made(section + "." + field, target + " = " + value.text, resolved(m, env, value), where(m, line));
            return;
        }
        if (!is_config(env, base)) return;
        const std::string path = target.substr(dot + 1);
        const auto second = path.find('.');
        if (second == std::string::npos) {
            set_section(m, env, path, value, line);
            return;
        }
        if (path.find('.', second + 1) != std::string::npos) {
            r_.ignored.push_back({where(m, line), target + " = " + value.text, "a nested setting: not read"});
            return;
        }
        set_made(path, target + " = " + value.text, resolved(m, env, value), where(m, line));
    }

    // A setting an assignment makes; inside a try body, one whose value is not computed is
    // not made (Python may have raised before it).
    void set_made(const std::string& key, const std::string& shown, PyExpr value, const std::string& at) {
        if (try_depth_ > 0 && !value.literal()) {
            r_.ignored.push_back({at, shown, "inside a try block, not computed (Python may raise there): not read"});
            return;
        }
        set(key, std::move(value), at);
    }

    // Megatron-Bridge's apply_flex_dispatcher_backend(model_config, backend)
    // (training/flex_dispatcher_backend.py:33-85): for an MoE model and backend "deepep" or
    // "hybridep", the flex dispatcher with that backend (:83-85), or alltoall where the GPU
    // cannot run it (:27-30; DeepEP on Ampere, Hopper, B200 and B300, :60-62; HybridEP on
    // compute capability 8, 9 and 10, :71). The GPU check waits for the cluster
    // (Setting::by_flex_helper).
    void flex_backend(PyModule& m, const Env& env, const PyExpr& call, int line) {
        PyExpr backend;
        if (call.items.size() > 1) {
            const PyExpr& arg = call.items[1];
            backend = resolved(m, env, arg);
            const auto dot = arg.s.find('.');
            if (arg.kind == PyExpr::Name && dot != std::string::npos && is_config(env, arg.s.substr(0, dot))) {
                auto it = settings_.find(arg.s.substr(dot + 1));
                backend = it != settings_.end() ? it->second.value : PyExpr{};
            }
        }
        if (backend.kind != PyExpr::Str || (backend.s != "deepep" && backend.s != "hybridep")) return;
        const std::string at = where(m, line) + " (apply_flex_dispatcher_backend)";
        PyExpr flex;
        flex.kind = PyExpr::Str;
        flex.s = "flex";
        flex.text = "\"flex\"";
        set("model.moe_token_dispatcher_type", flex, at, true);
        set("model.moe_flex_dispatcher_backend", backend, at, true);
    }

    // Whether the function being read sets `name.<section>...` (a config it got from a call).
    bool used_as_config(const std::string& name) const {
        static const char* const kSections = "model train ddp optimizer mixed_precision comm_overlap dataset";
        if (current_ == nullptr) return false;
        for (const PyStatement& st : current_->body) {
            if (st.text.rfind(name + ".", 0) != 0) continue;
            std::size_t pos = name.size() + 1;
            if (list_has_word(kSections, py_take_name(st.text, pos))) return true;
        }
        return false;
    }

    // `helper(cfg, ...)`: followed when the helper is found; named when it is not.
    void call_statement(PyModule& m, Env& env, const PyExpr& call, int line, int depth) {
        bool passes = false, passes_section = false;
        const auto section_of_config = [&](const PyExpr& a) { return a.kind == PyExpr::Name && !section_of(env, a.s).empty(); };
        for (const PyExpr& a : call.items) {
            passes = passes || (a.kind == PyExpr::Name && is_config(env, a.s));
            passes_section = passes_section || section_of_config(a);
        }
        for (const auto& [k, a] : call.keywords) {
            passes = passes || (a.kind == PyExpr::Name && is_config(env, a.s));
            passes_section = passes_section || section_of_config(a);
        }
        if (last_name(call.s) == "apply_flex_dispatcher_backend" && !call.items.empty() &&
            section_of_config(call.items.front())) {
            flex_backend(m, env, call, line);
            return;
        }
        if (!passes && !passes_section) return;
        auto [callee_module, f] = function_of(m, call.s);
        if (f == nullptr && !passes) {
            // A helper handed one section (set_..._layout(cfg.model)) that is not in the
            // module or the checkout.
            r_.ignored.push_back({where(m, line), call.text, "a helper given a section of the config, not found: not read"});
            r_.warnings.push_back(where(m, line) + ": " + call.s + "() is given part of the config and was not read");
            return;
        }
        if (f == nullptr) {
            r_.ignored.push_back({where(m, line), call.text,
                                  "a helper the reader cannot find (outside the module" +
                                      std::string(root_ ? " and the checkout" : "; the recipe is not inside a Megatron-Bridge checkout") +
                                      "): what it sets is not read"});
            r_.warnings.push_back(where(m, line) + ": " + call.s + "() is given the config and was not read");
            return;
        }
        Env callee = bind(m, env, call, *f, depth);
        const int saved = line_;
        run(*callee_module, *f, callee, depth + 1);
        line_ = saved;
    }

    // A statement inside an if/for/with block: conditions are not evaluated; a config setting
    // there is listed.
    void conditional(PyModule& m, const Env& env, const PyStatement& st, const std::string& header, int header_line,
                     const std::string& reason) {
        std::string target, value;
        if (!split_py_assignment(st.text, target, value)) return;
        const auto dot = target.find('.');
        if (dot == std::string::npos || (!is_config(env, target.substr(0, dot)) && section_of(env, target.substr(0, dot)).empty()))
            return;
        r_.ignored.push_back({where(m, st.line), target + " = " + value,
                              "inside '" + header + "' (line " + std::to_string(header_line) + "): " + reason +
                                  ", the setting is not read"});
    }

    const std::string& file_;
    const ImportOptions& options_;
    ImportResult& r_;
    std::optional<fs::path> root_;
    std::map<std::string, std::unique_ptr<PyModule>> modules_;
    std::map<std::string, Setting> settings_;
    std::optional<Setting> model_;
    std::optional<Setting> precision_;
    std::string function_;
    int line_ = 0;
    const PyFunction* current_ = nullptr;  // the function being read
    long long statements_read_ = 0;
    std::set<std::string> built_sections_;  // sections given a constructor (built())
    int try_depth_ = 0;  // try bodies being run
};

// The Hugging Face repository a bundled model preset was made from: its "_source" starts
// with it ("openai/gpt-oss-120b (https://...)").
std::optional<std::string> preset_for_repository(const std::string& repo) {
    const auto lower = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
        return s;
    };
    for (const std::string& name : list_presets(PresetKind::Model)) {
        const std::string path = resolve_preset_path(PresetKind::Model, name, "<presets>", "model");
        std::ifstream in(path);
        const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
        if (!j.is_object() || !j.contains("_source") || !j["_source"].is_string()) continue;
        const std::string source = j["_source"].get<std::string>();
        const std::string id = source.substr(0, source.find(' '));
        if (lower(id) == lower(repo)) return name;
        // The repository's earlier names, which Hugging Face redirects and recipes still use
        // (meta-llama/Meta-Llama-3.1-405B, recipes/llama/h100/llama3.py:1207 at 067f987d).
        if (j.contains("_renamed_from") && j["_renamed_from"].is_array()) {
            for (const auto& old_name : j["_renamed_from"]) {
                if (old_name.is_string() && lower(old_name.get<std::string>()) == lower(repo)) return name;
            }
        }
    }
    return std::nullopt;
}

std::string value_text(const PyExpr& v) {
    switch (v.kind) {
        case PyExpr::Str: return v.s;
        case PyExpr::Int: return std::to_string(v.i);
        case PyExpr::Float: {
            std::ostringstream o;
            o << v.f;
            return o.str();
        }
        case PyExpr::Bool: return v.b ? "true" : "false";
        case PyExpr::List: {
            std::string s;
            for (const PyExpr& e : v.items) s += (s.empty() ? "" : " ") + value_text(e);
            return s;
        }
        default: return v.text;
    }
}

// Bridge fields whose Megatron-LM argument has another name.
std::string flag_for(const std::string& section, const std::string& field) {
    if (section == "dataset" && field == "seq_length") return "--seq-length";
    // TransformerConfig's field; Megatron-LM's argument sets it from
    // --num-virtual-stages-per-pipeline-rank (arguments.py:976-977 at d98e8a64).
    if (section == "model" && field == "virtual_pipeline_model_parallel_size") return "--num-virtual-stages-per-pipeline-rank";
    return "--" + dashed(field);
}

}  // namespace

bool is_bridge_recipe(const std::string& text) {
    // A line `from megatron.bridge...` or `import megatron.bridge...`.
    bool imports_bridge = false;
    std::stringstream in(text);
    std::string line;
    while (!imports_bridge && std::getline(in, line)) {
        std::size_t pos = 0;
        skip_spaces(line, pos);
        const std::string word = py_take_name(line, pos);
        if (word != "from" && word != "import") continue;
        skip_spaces(line, pos);
        const std::string module = py_take_name(line, pos, true);
        imports_bridge = module == "megatron.bridge" || module.rfind("megatron.bridge.", 0) == 0;
    }
    if (!imports_bridge) return false;
    if (text.find("ConfigContainer") != std::string::npos) return true;
    for (const char* section : {".model.", ".train.", ".ddp.", ".mixed_precision", ".comm_overlap"}) {
        if (text.find(section) != std::string::npos) return true;
    }
    return false;
}

ImportResult import_bridge_recipe(const std::string& text, const std::string& file, const ImportOptions& options) {
    ImportResult r;
    RecipeReader reader(file, options, r);
    reader.read(text);
    if (!reader.in_checkout()) {
        r.notes.push_back(file + " is not inside a Megatron-Bridge checkout (no megatron/bridge above it): only its own "
                                 "module was read; base configs and helpers imported from megatron.bridge are named where "
                                 "they are called");
    }

    // The model: --model, else the preset made from the repository the recipe names.
    ImportOptions opts = options;
    ModelSpec model;
    std::string model_name;  // --model's, or the preset's
    if (options.model) {
        model = load_model(*options.model, "<flags>", "--model");
        model_name = *options.model;
    } else {
        const auto& src = reader.model_source();
        if (!src) {
            throw InputError(file, reader.function() + "() cfg.model",
                             "the recipe does not set cfg.model (its base was not read): pass --model PRESET|config.json");
        }
        if (src->value.kind != PyExpr::Str) {
            throw InputError(file, src->where + " cfg.model",
                             "'" + src->value.text + "': a model provider, not read: pass --model PRESET|config.json");
        }
        const auto preset = preset_for_repository(src->value.s);
        if (!preset) {
            throw InputError(file, src->where + " cfg.model",
                             "AutoBridge.from_hf_pretrained(\"" + src->value.s + "\"): no bundled preset is made from that "
                             "repository: pass --model with its config.json");
        }
        model = load_model(*preset, "<flags>", "--model");
        model_name = *preset;
        r.notes.push_back("model: the bundled preset " + *preset + ", made from " + src->value.s + " (" + src->where + ")");
    }

    // The world: --gpus/--nodes, else the "<N>gpu" of the recipe's name (Bridge names its
    // recipes by GPU count and GPU: qwen3_30b_a3b_pretrain_8gpu_b200_bf16_config).
    std::vector<std::string> name_parts;
    {
        std::stringstream parts(reader.function());
        std::string part;
        while (std::getline(parts, part, '_')) name_parts.push_back(part);
    }
    for (const std::string& part : name_parts) {
        if (options.gpus || options.nodes || part.size() < 4 || part.size() > 9 || part.compare(part.size() - 3, 3, "gpu") != 0)
            continue;
        const std::string digits = part.substr(0, part.size() - 3);
        if (!std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) continue;
        opts.gpus = std::stoi(digits);
        r.notes.push_back("world size " + digits + " GPUs from the recipe's name " + reader.function() +
                          "(): pass --gpus for another");
        break;
    }
    const std::map<std::string, std::string> cluster_of_gpu = {
        {"h100", "dgx-h100"}, {"h200", "dgx-h200"}, {"b200", "dgx-b200"},
        {"gb200", "gb200-nvl72"}, {"b300", "dgx-b300"}, {"gb300", "gb300-nvl72"}};
    for (const std::string& part : name_parts) {
        const auto it = cluster_of_gpu.find(part);
        if (options.cluster || it == cluster_of_gpu.end()) continue;
        opts.cluster = it->second;
        r.notes.push_back("cluster " + it->second + " from the recipe's name (" + part + "): pass --cluster for another");
        break;
    }
    // GPUs Megatron-Bridge has performance recipes for (the folders of perf_recipes/*/ at
    // 067f987d) that no bundled cluster preset describes: the recipe is priced on the default
    // cluster only with a warning that says so (import-args prints it before a validation
    // error the assumed GPU causes, such as fp4 on an H100).
    static const char* const kGpusWithoutPreset = "vr200 r100";
    std::string gpu_without_preset;
    for (const std::string& part : name_parts) {
        if (!options.cluster && !opts.cluster && list_has_word(kGpusWithoutPreset, part)) gpu_without_preset = part;
    }
    if (!gpu_without_preset.empty()) {
        r.warnings.push_back("the recipe " + reader.function() + "() is for " + gpu_without_preset +
                             " GPUs, which no bundled cluster describes: priced on the default dgx-h100 (pass "
                             "--cluster with a cluster JSON for " + gpu_without_preset + ")");
    }

    // apply_flex_dispatcher_backend's GPU check and MoE check, now that the cluster is known.
    std::map<std::string, Setting> settings = reader.settings();
    const auto flex = settings.find("model.moe_token_dispatcher_type");
    const auto backend = settings.find("model.moe_flex_dispatcher_backend");
    if (flex != settings.end() && backend != settings.end() && flex->second.by_flex_helper) {
        const std::string cluster_name = opts.cluster.value_or("dgx-h100");
        std::string gpu;
        try {
            gpu = load_cluster(cluster_name, "<flags>", "--cluster").gpu.kind;
        } catch (const InputError&) {
        }
        const bool gb = gpu.rfind("gb200", 0) == 0 || gpu.rfind("gb300", 0) == 0;
        const bool amd = gpu.rfind("mi", 0) == 0;
        const bool runs = backend->second.value.s == "deepep" ? !gb && !amd : !amd;
        if (!model.is_moe()) {
            settings.erase(flex);
            settings.erase(backend);
        } else if (!runs) {
            r.notes.push_back(flex->second.where + ": " + backend->second.value.s + " does not run on " + gpu +
                              ": Megatron-Bridge falls back to the alltoall dispatcher (training/flex_dispatcher_backend.py:27-30)");
            flex->second.value.s = "alltoall";
            settings.erase(backend);
        }
    }

    // CommOverlapConfig.setup, before validate() (training/config.py:2026-2029,
    // comm_overlap.py:636-642 and :562-583 at 067f987d): with the DDP config's distributed
    // optimizer, its overlap_grad_reduce and overlap_param_gather become the
    // CommOverlapConfig's where that states them, else on with more than one data-parallel
    // rank; without it, the CommOverlapConfig's are not used.
    {
        const auto int_setting = [&](const std::string& key) {
            const auto it = settings.find(key);
            return it != settings.end() && it->second.value.kind == PyExpr::Int ? it->second.value.i : 1LL;
        };
        const bool distributed = bool_setting(settings, "ddp.use_distributed_optimizer").value_or(false);
        const long long model_ranks = int_setting("model.tensor_model_parallel_size") *
                                      int_setting("model.pipeline_model_parallel_size") *
                                      int_setting("model.context_parallel_size");
        const bool world_known = opts.gpus && model_ranks > 0 && *opts.gpus % model_ranks == 0;
        for (const char* field : {"overlap_grad_reduce", "overlap_param_gather"}) {
            const std::string own = std::string("comm_overlap.") + field;
            const std::string ddp = std::string("ddp.") + field;
            const auto stated = settings.find(own);
            if (!reader.built("comm_overlap") || !distributed) {
                if (stated != settings.end()) {
                    r.ignored.push_back({stated->second.where, "cfg." + own + " = " + stated->second.value.text,
                                         "CommOverlapConfig sets the DDP overlaps only with the distributed optimizer "
                                         "(training/comm_overlap.py:636-642)"});
                    settings.erase(stated);
                }
                continue;
            }
            Setting value;
            if (stated != settings.end() && stated->second.value.kind == PyExpr::Bool) {
                value = stated->second;
            } else if (world_known) {
                const long long dp = *opts.gpus / model_ranks;
                value.value = bool_expr(dp > 1);
                value.where = "CommOverlapConfig.setup with " + std::to_string(dp) +
                              " data-parallel ranks (training/comm_overlap.py:576-579)";
            } else {
                continue;
            }
            if (stated != settings.end()) settings.erase(stated);
            if (const auto d = settings.find(ddp); d != settings.end() && d->second.value.text != value.value.text) {
                r.ignored.push_back({d->second.where, "cfg." + ddp + " = " + d->second.value.text,
                                     std::string("CommOverlapConfig.setup writes ") + field + " = " + value.value.text +
                                         " over it (" + value.where + ")"});
            }
            settings[ddp] = value;
        }
    }

    // ConfigContainer.validate() makes the DDP and optimizer configs agree: either one's
    // use_distributed_optimizer, or overlap_param_gather, turns it on for both
    // (training/config.py:1504, :2111-2136 at 067f987d; _sft_common leaves the DDP's unset and
    // its optimizer helper sets True, recipes/utils/optimizer_utils.py:150).
    for (const char* field : {"use_distributed_optimizer", "overlap_param_gather"}) {
        const auto optimizer = settings.find(std::string("optimizer.") + field);
        if (optimizer == settings.end()) continue;
        if (bool_setting(settings, std::string("optimizer.") + field).value_or(false) &&
            !bool_setting(settings, std::string("ddp.") + field).value_or(false)) {
            settings[std::string("ddp.") + field] = optimizer->second;
        }
        r.ignored.push_back({optimizer->second.where, std::string("cfg.optimizer.") + field + " = " + optimizer->second.value.text,
                             std::string("one setting with cfg.ddp.") + field + ": either turns it on (training/config.py:2111-2136)"});
        settings.erase(std::string("optimizer.") + field);
    }

    // Megatron-Core gathers parameters beside the forward whether or not the gradient
    // reduction overlaps the backward (no such assert in megatron/core/distributed at d98e8a64;
    // Megatron-LM's argument parser is what refuses it); a layout overlaps the gather only
    // with the reduction overlapped, so the gather is priced unoverlapped, with a warning.
    if (bool_setting(settings, "ddp.overlap_param_gather").value_or(false) &&
        !bool_setting(settings, "ddp.overlap_grad_reduce").value_or(false)) {
        const auto gather = settings.find("ddp.overlap_param_gather");
        r.warnings.push_back(gather->second.where + ": the parameter gather overlaps the forward while the gradient "
                             "reduction does not overlap the backward, which a layout cannot say: priced with neither "
                             "overlapped");
        r.ignored.push_back({gather->second.where, "cfg.ddp.overlap_param_gather = True",
                             "without overlap_grad_reduce: not a layout's combination"});
        settings.erase(gather);
    }

    // The loss: Megatron-Core computes it with Transformer Engine's parallel cross entropy when
    // loss fusion is on and its implementation is "te" (d98e8a64 models/common/language_module/
    // language_module.py:173-196; Megatron-LM's own argument parser refuses that pair, Bridge
    // does not). Bridge's GPT provider fuses by default (models/gpt_provider.py:205 at 067f987d),
    // Megatron-Core's implementation default is "native" (the vocabulary-parallel kernel).
    const auto loss_impl = settings.find("model.cross_entropy_fusion_impl");
    const bool te_loss = bool_setting(settings, "model.cross_entropy_loss_fusion").value_or(true) &&
                         loss_impl != settings.end() && loss_impl->second.value.kind == PyExpr::Str &&
                         loss_impl->second.value.s == "te";

    // The settings as Megatron-LM arguments.
    std::vector<ScriptWord> words;
    const auto word = [&](const std::string& arg, const std::string& origin) {
        ScriptWord w;
        w.text = arg;
        w.known_tail = arg;
        w.origin = origin;
        words.push_back(w);
    };
    word("python", file);
    word("pretrain_gpt.py", file);
    // Bridge's seq_length lives in the model and the dataset; the model's wins.
    std::set<std::string> seen_flags;
    std::optional<Setting> grad_reduce_in_fp32;  // cfg.mixed_precision.grad_reduce_in_fp32, when set
    for (const auto& [key, s] : settings) {
        const auto dot = key.find('.');
        const std::string section = key.substr(0, dot);
        const std::string field = key.substr(dot + 1);
        const std::string shown = "cfg." + key + " = " + s.value.text;
        if (list_has_word(kNonLayoutSections, section) ||
            (section != "model" && section != "train" && section != "ddp" && section != "optimizer" &&
             section != "comm_overlap" && section != "dataset" && section != "mixed_precision")) {
            r.ignored.push_back({s.where, shown, "Megatron-Bridge " + section + " setting: not part of the layout"});
            continue;
        }
        if (section == "dataset" && (field != "seq_length" || settings.count("model.seq_length"))) {
            r.ignored.push_back({s.where, shown,
                                 field == "seq_length" ? "the model's seq_length is the one read"
                                                       : "dataset setting: not part of the layout"});
            continue;
        }
        if (section == "mixed_precision") {
            if (field == "fp8_recipe" || field == "fp8" || field == "fp4" || field == "fp4_recipe") {
                if (s.value.kind == PyExpr::None || (s.value.kind == PyExpr::Bool && !s.value.b)) continue;
                const std::string flag = "--" + dashed(field == "fp8" ? "fp8_format" : field == "fp4" ? "fp4_format" : field);
                word(flag, s.where + " cfg." + key);
                word(value_text(s.value), s.where + " cfg." + key);
                seen_flags.insert(flag);
                continue;
            }
            if (field == "grad_reduce_in_fp32") {
                if (s.value.kind == PyExpr::Bool) grad_reduce_in_fp32 = Setting{s.value, s.where};
                continue;
            }
            r.ignored.push_back({s.where, shown, "mixed-precision detail: not part of the layout"});
            continue;
        }
        if (section == "comm_overlap" && field == "tp_comm_overlap" && s.value.kind == PyExpr::Bool && s.value.b) {
            // CommOverlapConfig turns TP overlap off below TP 2 and without sequence
            // parallelism, with a warning (training/comm_overlap.py:442-451).
            const auto tp = settings.find("model.tensor_model_parallel_size");
            const auto sp = settings.find("model.sequence_parallel");
            const bool tp_ok = tp != settings.end() && tp->second.value.kind == PyExpr::Int && tp->second.value.i >= 2;
            const bool sp_ok = sp != settings.end() && sp->second.value.kind == PyExpr::Bool && sp->second.value.b;
            if (!tp_ok || !sp_ok) {
                r.ignored.push_back({s.where, shown,
                                     std::string("Megatron-Bridge turns TP overlap off ") +
                                         (tp_ok ? "without sequence parallelism" : "below tensor-parallel size 2") +
                                         " (training/comm_overlap.py:442-451)"});
                continue;
            }
        }
        if (section == "model" && (field == "cross_entropy_loss_fusion" || field == "cross_entropy_fusion_impl")) {
            continue;  // the loss, read above (te_loss)
        }
        if (section == "model" && field == "cpu_offloading_num_layers") {
            // Megatron-Core offloads only with TransformerConfig.cpu_offloading on; its
            // argument parser turns that on from the layer count (arguments.py:1950-1951 at
            // d98e8a64), which a Bridge config does not pass through.
            const auto on = settings.find("model.cpu_offloading");
            if (on == settings.end() || on->second.value.kind != PyExpr::Bool || !on->second.value.b) {
                r.ignored.push_back({s.where, shown, "cfg.model.cpu_offloading is not on: no layer is offloaded"});
                continue;
            }
        }
        if (section == "model" && field == "virtual_pipeline_model_parallel_size") {
            // A stated pipeline layout gives the virtual stages itself (Megatron-LM derives vpp
            // from it, arguments.py:944-952 at d98e8a64, and refuses both flags together).
            const auto layout = settings.find("model.pipeline_model_parallel_layout");
            if (layout != settings.end() && layout->second.value.kind != PyExpr::None) {
                r.ignored.push_back({s.where, shown, "the recipe's pipeline_model_parallel_layout gives the virtual stages"});
                continue;
            }
        }
        if (s.value.kind == PyExpr::List && s.value.items.empty()) continue;  // [] : nothing, the default
        // MixedPrecisionConfig.setup writes each of its fields over the model's, optimizer's
        // and DDP config's field of that name (training/config.py:2011-2016,
        // mixed_precision.py:113-157; its fields :40-75).
        static const char* const kMixedPrecisionFields =
            "fp32 fp16 bf16 params_dtype pipeline_dtype autocast_dtype autocast_enabled grad_reduce_in_fp32 fp8 "
            "fp8_recipe first_last_layers_bf16 fp8_margin fp8_amax_history_len fp8_amax_compute_algo fp8_wgrad "
            "fp8_dot_product_attention fp8_multi_head_attention fp8_param fp8_param_gather fp4 fp4_recipe fp4_param "
            "fp4_param_gather loss_scale initial_loss_scale min_loss_scale loss_scale_window hysteresis "
            "num_layers_at_start_in_bf16 num_layers_at_end_in_bf16 reuse_grad_buf_for_mxfp8_param_ag";
        if ((section == "model" || section == "optimizer" || section == "ddp") && list_has_word(kMixedPrecisionFields, field)) {
            r.ignored.push_back({s.where, shown,
                                 "the mixed-precision config's " + field + " is written over this one "
                                 "(training/config.py:2011-2016, mixed_precision.py:138-157)"});
            continue;
        }
        const std::string flag = flag_for(section, field);
        // The architecture: the layout's model is --model's or the preset's. Megatron-Core's
        // TransformerConfig spells some fields other than its arguments (num_moe_experts is
        // --num-experts, gated_linear_unit --swiglu, ...).
        static const char* const kProviderArchitecture =
            "num_moe_experts gated_linear_unit share_embeddings_and_output_weights activation_func "
            "add_bias_linear layernorm_zero_centered_gamma moe_router_pre_softmax yarn_rotary_scaling_factor "
            "yarn_original_max_position_embeddings yarn_beta_fast yarn_beta_slow yarn_mscale yarn_mscale_all_dim "
            "yarn_correction_range_round_to_int moe_router_num_groups moe_router_group_topk moe_router_topk_scaling_factor";
        if (section == "model" && (megatron_import_detail::model_architecture_flag(flag) ||
                                   list_has_word(kProviderArchitecture, field))) {
            r.ignored.push_back({s.where, shown,
                                 "model architecture: the layout's model is " + model_name +
                                     "; the recipe's value is not applied"});
            continue;
        }
        const FlagSpec* spec = layout_flag(flag);
        if (s.value.kind == PyExpr::None) continue;  // the default
        if (s.value.kind == PyExpr::Bool) {
            if (s.value.b) {
                if (spec != nullptr && !spec->takes_value) {
                    word(flag, s.where + " cfg." + key);
                    continue;
                }
            } else {
                const FlagSpec* no = layout_flag("--no-" + dashed(field));
                if (no != nullptr && !no->takes_value) {
                    word("--no-" + dashed(field), s.where + " cfg." + key);
                    continue;
                }
                if (spec != nullptr) continue;  // off: Megatron-LM's default for a store_true flag
            }
            if (spec == nullptr) r.ignored.push_back({s.where, shown, "Megatron-Bridge setting that does not change the layout"});
            continue;
        }
        if (spec == nullptr) {
            r.ignored.push_back({s.where, shown, "Megatron-Bridge setting that does not change the layout"});
            continue;
        }
        if (!s.value.literal()) {
            throw InputError(file, s.where + " cfg." + key,
                             "'" + s.value.text + "' is not a constant: Meshwork reads recipes without running them");
        }
        if (flag == "--pipeline-model-parallel-layout" && s.value.kind == PyExpr::List) {
            // The list form Megatron-Core's PipelineParallelLayerLayout takes, one list of
            // layer names per model chunk, written as the argument's string
            // (transformer/pipeline_parallel_layer_layout.py at d98e8a64: "embedding" E,
            // "decoder" t, "mtp" m, "loss" L, chunks separated by '|').
            std::string layout_text;
            for (std::size_t k = 0; k < s.value.items.size(); ++k) {
                const PyExpr& chunk = s.value.items[k];
                if (k > 0) layout_text += '|';
                for (const PyExpr& layer : chunk.items) {
                    const std::string& n = layer.s;
                    layout_text += n == "embedding" ? "E" : n == "decoder" ? "t" : n == "mtp" ? "m" : n == "loss" ? "L" : "?" + n;
                }
            }
            if (seen_flags.insert(flag).second) {
                word(flag, s.where + " cfg." + key);
                word(layout_text, s.where + " cfg." + key);
            }
            continue;
        }
        if (seen_flags.count(flag) != 0) continue;
        seen_flags.insert(flag);
        word(flag, s.where + " cfg." + key);
        if (s.value.kind == PyExpr::List && spec->many) {
            for (const PyExpr& e : s.value.items) word(value_text(e), s.where + " cfg." + key);
        } else {
            word(value_text(s.value), s.where + " cfg." + key);
        }
    }
    // The precision recipe.
    if (const auto& p = reader.precision()) {
        const Precision* known = precision_named(p->value.s);
        if (known == nullptr) {
            throw InputError(file, p->where + " cfg.mixed_precision",
                             "'" + p->value.text + "': not a mixed-precision recipe of Megatron-Bridge 067f987d "
                             "(training/mixed_precision.py, perf_recipes/_common.py _perf_precision)");
        }
        if (std::string(known->name) == "nemotron_3_super_bf16_with_nvfp4_mixed") {
            r.warnings.push_back(p->where + ": " + p->value.s +
                                 ": its last 14 layers train in bf16 (num_layers_at_end_in_bf16); a layout has one "
                                 "precision, and every layer is priced as NVFP4");
        }
        std::stringstream in(known->args);
        std::string a;
        std::vector<std::string> args;
        while (in >> a) args.push_back(a);
        for (std::size_t k = 0; k < args.size(); ++k) {
            const bool value = k + 1 < args.size() && args[k + 1].rfind("--", 0) != 0;
            if (seen_flags.count(args[k]) != 0) {
                if (value) ++k;
                continue;
            }
            word(args[k], p->where + " cfg.mixed_precision");
            if (value) word(args[++k], p->where + " cfg.mixed_precision");
        }
        // Gradients reduce in the training type below fp32 unless the recipe keeps fp32;
        // Megatron-LM reduces fp16 training's in fp16 already (no flag).
        const bool fp32 = grad_reduce_in_fp32 ? grad_reduce_in_fp32->value.b : known->grad_reduce_in_fp32;
        if (!fp32 && std::string(known->args).rfind("--bf16", 0) == 0) {
            word("--grad-reduce-in-bf16", grad_reduce_in_fp32 ? grad_reduce_in_fp32->where + " cfg.mixed_precision.grad_reduce_in_fp32"
                                                              : p->where + " cfg.mixed_precision");
        }
    } else {
        r.notes.push_back("cfg.mixed_precision not set by what was read: Megatron-Bridge's default bf16_mixed");
        word("--bf16", file);
        if (grad_reduce_in_fp32 && !grad_reduce_in_fp32->value.b) {
            word("--grad-reduce-in-bf16", grad_reduce_in_fp32->where + " cfg.mixed_precision.grad_reduce_in_fp32");
        }
    }

    ScriptRun run;
    ScriptCommand command;
    command.file = file;
    command.words = words;
    run.commands.push_back(command);
    MegatronParser parser(file, opts);
    parser.use_model(model);
    ImportResult m = parser.run(run);
    m.format = ImportFormat::Bridge;
    for (auto& i : r.ignored) m.ignored.push_back(std::move(i));
    for (auto& n : r.notes) m.notes.push_back(std::move(n));
    for (auto& w : r.warnings) m.warnings.push_back(std::move(w));
    if (te_loss) {
        // Transformer Engine's cross entropy as v2.18 computes it, the TE that Megatron-Bridge pins
        // at 067f987d (uv.lock: transformer-engine 2.18.0+e7c550c5): an fp32 gradient beside the
        // logits (training.cross_entropy "te"). An older TE writes the gradient over the logits.
        m.layout.training.cross_entropy = CrossEntropy::Te;
        m.notes.push_back(loss_impl->second.where + ": cfg.model.cross_entropy_fusion_impl = 'te': Transformer Engine's "
                          "cross entropy as of v2.18 (training.cross_entropy te); a release that pinned an older "
                          "Transformer Engine wrote the gradient over the logits: set training.cross_entropy te-inplace");
    }
    m.notes.push_back("read as Megatron-LM arguments: recipe " + reader.function() + "() and the base configs and helpers "
                      "it calls");
    if (options.description.empty()) {
        m.layout.description = "Imported from " + file + " (Megatron-Bridge recipe " + reader.function() + "())";
    }
    return m;
}

}  // namespace meshwork
