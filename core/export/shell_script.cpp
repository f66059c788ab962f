#include "core/export/shell_script.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>

#include "core/common/error.h"
#include "core/common/printable.h"
#include "core/export/shell_arith.h"
#include "core/export/shell_lexer.h"
#include "core/export/shell_match.h"
#include "core/export/shell_parse_cache.h"
#include "core/export/shell_value.h"

namespace meshwork {

namespace {

using shell::Budget;
using shell::Node;
using shell::Token;
using shell::Value;

using shell::is_name;
using shell::is_name_char;
bool is_number(const std::string& s) {
    if (s.empty() || s.size() > 18) return false;
    for (char c : s) {
        if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
    }
    return true;
}

enum class Tri { False, True, Unknown };

struct Status {
    Tri tri = Tri::True;
    std::string reason;  // when Unknown
};

struct Var {
    bool array = false;
    std::vector<Value> items;
};

// Control flow, thrown through the tree walk.
struct ExitSignal {
    int line;  // > 0: an error exit
};
struct ReturnSignal {
    Tri status;
};
struct LoopSignal {
    bool is_break;
    long long levels;
};
// An error in $((...)): bash drops the rest of the line it is running (of the script, a
// sourced file, an eval'd string or a child shell's) and goes on with the next line; a
// subshell exits (bash 5.2, checked with bash here: tst_shell_script::arithmetic_semantics).
struct ArithAbort {};

// ---- limits (docs/RELIABILITY.md, "import-args") --------------------------------------------
// Launch scripts call functions a few deep, loop over a handful of sizes, hold kilobytes and
// run in microseconds here; each limit is far above that and far below what would take the
// import past a second or a few hundred MB.
constexpr int kMaxCallDepth = 64;                     // functions, eval, sh -c, source
constexpr long long kMaxLoopIterations = 10000;       // one loop
constexpr std::size_t kMaxValueBytes = 1u << 20;      // one value or word
constexpr std::size_t kMaxCommands = 100000;          // commands recorded on one path
constexpr std::size_t kMaxCommandBytes = 64u << 20;   // their words together
// The work budget of one import (every path explore_shell_script follows shares it). A unit
// is about a byte copied or an automaton state stepped; a command or node costs kNodeUnits.
// Measured (docs/RELIABILITY.md, "import-args"): a script that spends it all, by loops or
// by pattern matching, takes about 1 s on this 2-core machine under load.
constexpr long long kBudgetUnits = 250'000'000;
constexpr long long kNodeUnits = 200;

// An unknown inside text the interpreter re-reads (eval, sh -c, a here-document job): NUL,
// the record's index, NUL. Text from a file, --set or --source can never hold a NUL (the
// lexer refuses it), so only the interpreter writes one.
constexpr char kMarker = '\0';

class Interp : public shell::ArithHost {
public:
    Interp(const std::string& file, const ScriptOptions& options, const std::vector<bool>& choices, Budget& budget,
           shell::ParseCache& parsed)
        : options_(options), choices_(choices), budget_(budget), parsed_(parsed) {
        files_.push_back(file);
    }

    ScriptRun run(const std::string& text) {
        for (const auto& [name, value] : options_.set) {
            if (value.find('\0') != std::string::npos || name.find('\0') != std::string::npos) {
                throw InputError("<flags>", "--set", "a NUL byte in " + printable_text(name));
            }
        }
        try {
            const shell::Parsed& script = parsed_.parse(text, file(), false, 0);
            sbatch(script.sbatch);
            collect_assigned(script.assigned);
            try {
                exec_lines(*script.tree);
            } catch (const ExitSignal& e) {
                run_.exit_line = e.line;
            } catch (const ReturnSignal&) {
            } catch (const LoopSignal&) {
            }
            for (const auto& [name, v] : vars_) {
                auto& words = run_.variables[name];
                const int line = run_.variable_lines.count(name) ? run_.variable_lines.at(name) : 0;
                for (const auto& item : v.items) {
                    for (const auto& w : split_blanks(item)) words.push_back(word(w, line));
                }
            }
        } catch (const shell::BudgetExhausted&) {
            const long long total = budget_.total();
            if (line_ == 0) {  // spent while reading the script, before any line ran
                throw InputError(file(), "script", "the script needs more than " + std::to_string(total) +
                                                       " steps of work to read: import-args stops here");
            }
            fail(line_, "the script needs more than " +
                            (total >= 1000000 ? std::to_string(total / 1000000) + " million" : std::to_string(total)) +
                            " steps of work (a runaway loop, recursion or expansion): import-args stops here");
        }
        for (auto& n : run_.notes) n = printable_text(n);
        for (auto& d : run_.decisions) {
            d.condition = printable_text(d.condition);
            d.reason = printable_text(d.reason);
        }
        return std::move(run_);
    }

private:
    const std::string& file() const { return files_.back(); }
    std::string at(int line) const {
        return (files_.size() > 1 ? std::filesystem::path(file()).filename().string() + " " : "") + "line " +
               std::to_string(line);
    }
    [[noreturn]] void fail(int line, const std::string& message) const {
        throw InputError(file(), "line " + std::to_string(line), printable_text(message));
    }
    void spend(long long units) { budget_.spend(units); }

    // ---- unknown values ----------------------------------------------------------------
    struct Unknown {
        std::string shown;   // as written in the script
        std::string reason;  // a sentence naming the variable or construct and the line
        bool named = false;  // the reason names what --set supplies (a variable, an argument)
    };
    Value unknown(const std::string& shown, const std::string& reason, bool named = false) {
        spend(static_cast<long long>(shown.size() + reason.size()));
        unknowns_.push_back({shown, reason, named});
        return Value::unknown(shown, static_cast<int>(unknowns_.size()) - 1);
    }
    std::string reason_of(const Value& v) const {
        const int id = v.first_unknown();
        return id < 0 ? "" : unknowns_[static_cast<std::size_t>(id)].reason;
    }
    // NAME=VALUE where VALUE has an unnamed unknown part (a command substitution): the part
    // is named after NAME, which --set can supply.
    Value name_unknowns(const std::string& name, Value v, int line) {
        for (auto& s : v.spans) {
            const Unknown u = unknowns_[static_cast<std::size_t>(s.id)];
            if (u.named) continue;
            const Value named = unknown(u.shown, name + " (" + at(line) + ") is set by '" + abbreviated(u.shown) +
                                                     "', which import-args does not run: give its value with --set " +
                                                     name + "=VALUE",
                                        true);
            s.id = named.spans.front().id;
        }
        return v;
    }
    // `v` as text the lexer reads again, its unknowns as markers.
    static std::string encode(const Value& v) {
        std::string out;
        std::size_t i = 0;
        for (const auto& s : v.spans) {
            out += v.text.substr(i, s.at - i);
            out += kMarker + std::to_string(s.id) + kMarker;
            i = s.at + s.size;
        }
        return out + v.text.substr(i);
    }
    // The marker at w[i] (a NUL): appends its unknown to `cur`, returns the index after it.
    std::size_t decode(const std::string& w, std::size_t i, Value& cur) const {
        const auto end = w.find(kMarker, i + 1);
        const std::string digits = w.substr(i + 1, end == std::string::npos ? 0 : end - i - 1);
        if (end == std::string::npos || !is_number(digits) || std::stoul(digits) >= unknowns_.size()) {
            throw std::logic_error("shell interpreter: a malformed marker of an unknown value");
        }
        const auto id = static_cast<int>(std::stoul(digits));
        cur += Value::unknown(unknowns_[static_cast<std::size_t>(id)].shown, id);
        return end + 1;
    }

    ScriptWord word(const Value& v, int line) const {
        ScriptWord w;
        w.text = v.text;
        w.line = line;
        w.unresolved = reason_of(v);
        w.known_tail = v.spans.empty() ? v.text : v.text.substr(v.spans.back().at + v.spans.back().size);
        return w;
    }

    // `v` split at blanks outside its unknown parts (an unquoted $V's fields), appended to the
    // field `cur` (which `has` says exists); each field a blank ends goes to `emit`.
    template <class Emit>
    static void split_at_blanks(const Value& v, Value& cur, bool& has, Emit&& emit) {
        v.for_each_piece(
            [&](const Value& unknown) {
                cur += unknown;
                has = true;
            },
            [&](char c) {
                if (c == ' ' || c == '\t' || c == '\n') {
                    if (has) emit(std::move(cur));
                    cur.clear();
                    has = false;
                    return;
                }
                cur += c;
                has = true;
            });
    }

    static std::vector<Value> split_blanks(const Value& v) {
        std::vector<Value> out;
        Value cur;
        bool has = false;
        split_at_blanks(v, cur, has, [&](Value field) { out.push_back(std::move(field)); });
        if (has) out.push_back(std::move(cur));
        return out;
    }

    // ---- #SBATCH and the variables SLURM sets from them -----------------------------------
    void sbatch(const std::vector<shell::SbatchLine>& lines) {
        for (const auto& l : lines) {
            std::istringstream in(l.text);
            std::string w;
            std::vector<std::string> words;
            while (in >> w) words.push_back(w);
            for (std::size_t k = 0; k < words.size(); ++k) {
                std::string opt = words[k];
                std::string value;
                if (const auto eq = opt.find('='); eq != std::string::npos) {
                    value = opt.substr(eq + 1);
                    opt = opt.substr(0, eq);
                } else if (opt.rfind("--", 0) != 0 && opt.size() == 2 && k + 1 < words.size()) {
                    value = words[++k];  // -N 4
                } else if (opt.rfind("--", 0) == 0 && k + 1 < words.size() && words[k + 1][0] != '-') {
                    value = words[++k];
                }
                static const std::map<std::string, std::string> kShort = {
                    {"-N", "--nodes"}, {"-n", "--ntasks"}, {"-G", "--gpus"}, {"-p", "--partition"},
                    {"-A", "--account"}, {"-t", "--time"}, {"-J", "--job-name"}};
                if (const auto s = kShort.find(opt); s != kShort.end()) opt = s->second;
                run_.sbatch[opt] = value;
            }
        }
        // What SLURM puts in the job's environment (sbatch(1), "OUTPUT ENVIRONMENT VARIABLES").
        const auto set_from = [&](const char* option, std::initializer_list<const char*> names) {
            const auto it = run_.sbatch.find(option);
            if (it == run_.sbatch.end()) return;
            for (const char* n : names) {
                if (options_.set.count(n) == 0) slurm_env_[n] = it->second;
            }
        };
        set_from("--nodes", {"SLURM_NNODES", "SLURM_JOB_NUM_NODES"});
        set_from("--ntasks-per-node", {"SLURM_NTASKS_PER_NODE"});
        set_from("--gpus-per-node", {"SLURM_GPUS_PER_NODE", "SLURM_GPUS_ON_NODE"});
        set_from("--ntasks", {"SLURM_NTASKS"});
    }

    // Names the script assigns somewhere (shell::assigned_names): unset there means empty,
    // not "from the environment".
    void collect_assigned(const std::vector<std::string>& names) {
        spend(static_cast<long long>(names.size()) + 1);
        assigned_.insert(names.begin(), names.end());
    }

    // ---- variables -------------------------------------------------------------------------
    void assign(const std::string& name, Var v, int line) {
        if (options_.set.count(name) != 0) return;  // --set wins over the script
        std::size_t bytes = 0;
        for (const auto& item : v.items) bytes += item.text.size();
        if (bytes > kMaxValueBytes) {
            fail(line, "the value of " + name + " grows past 1 MiB: a runaway expansion, not a launch script");
        }
        spend(static_cast<long long>(bytes));
        if (allexport_) exported_.insert(name);
        vars_[name] = std::move(v);
        run_.variable_lines[name] = line;
    }

    // The variable `name` as the script sees it: --set, the script's own, positional
    // arguments given with --set, SLURM's variables from #SBATCH; nullptr when unset.
    const Var* value_of(const std::string& name) {
        if (const auto s = options_.set.find(name); s != options_.set.end()) {
            scratch_ = {false, {Value(s->second)}};
            return &scratch_;
        }
        if (is_number(name)) {
            const std::size_t k = std::stoul(name);
            if (k >= 1 && k <= positional_.size()) {
                scratch_ = {false, {positional_[k - 1]}};
                return &scratch_;
            }
            return nullptr;
        }
        if (const auto v = vars_.find(name); v != vars_.end()) return &v->second;
        if (const auto e = slurm_env_.find(name); e != slurm_env_.end()) {
            scratch_ = {false, {Value(e->second)}};
            return &scratch_;
        }
        return nullptr;
    }
    // Unset and never assigned by the script: the environment's (unknown).
    bool from_environment(const std::string& name) const {
        return is_number(name) || assigned_.count(name) == 0;
    }

    // `local NAME`: NAME belongs to the running function from here; its value outside is
    // restored when the function returns (bash's dynamic scoping: callees see it).
    void make_local(const std::string& name) {
        auto& frame = scopes_.back();
        if (frame.count(name) != 0) return;
        const auto it = vars_.find(name);
        frame[name] = it == vars_.end() ? std::nullopt : std::optional<Var>(it->second);
        vars_.erase(name);
        assigned_.insert(name);  // declared: unset inside means empty
    }

    std::size_t vars_bytes() const {
        std::size_t bytes = 0;
        for (const auto& [name, v] : vars_) {
            bytes += name.size() + 16;
            for (const auto& item : v.items) bytes += item.text.size();
        }
        return bytes;
    }

    // ---- expansion -----------------------------------------------------------------------
    enum class Mode {
        Fields,   // a command's words: unquoted expansions are split on blanks
        One,      // an assignment's value: one field
        Pattern,  // a glob or regex: one field, its quoted parts escaped (taken literally)
    };

    struct Nest {
        Nest(int& depth, int limit, const Interp& in, int line, const char* what) : depth_(depth) {
            if (++depth_ > limit) in.fail(line, std::string(what) + " nested more than " + std::to_string(limit) + " deep");
        }
        ~Nest() { --depth_; }
        Nest(const Nest&) = delete;
        Nest& operator=(const Nest&) = delete;
        int& depth_;
    };

    // Expands the raw word `w`.
    std::vector<Value> expand(const std::string& w, Mode mode, int line) {
        const Nest nest(expand_depth_, shell::kMaxNesting, *this, line, "expansions");
        spend(static_cast<long long>(w.size()) + 1);
        const bool split = mode == Mode::Fields;
        const bool pattern = mode == Mode::Pattern;
        std::vector<Value> out;
        std::size_t out_bytes = 0;
        Value cur;
        const auto check = [&] {
            if (cur.text.size() + out_bytes > kMaxValueBytes) {
                fail(line, "a word grows past 1 MiB: a runaway expansion, not a launch script");
            }
        };
        const auto emit = [&](Value field) {
            out_bytes += field.text.size() + 1;
            check();
            spend(static_cast<long long>(field.text.size()));
            out.push_back(std::move(field));
        };
        // A quoted character: literal, escaped in a pattern.
        const auto quoted_char = [&](char c) {
            if (pattern && std::isalnum(static_cast<unsigned char>(c)) == 0 && static_cast<unsigned char>(c) < 0x80) cur += '\\';
            cur += c;
        };
        const auto quoted_value = [&](const Value& v) {
            if (!pattern) {
                cur += v;
                return;
            }
            v.for_each_piece([&](const Value& unknown) { cur += unknown; }, quoted_char);
        };
        bool has = false;  // the current field exists (a quoted empty string counts)
        const auto push_split = [&](const Value& value) {
            if (!split) {
                cur += value;
                if (!value.empty()) has = true;
                return;
            }
            split_at_blanks(value, cur, has, emit);
        };
        std::size_t i = 0;
        while (i < w.size()) {
            check();
            const char c = w[i];
            if (c == kMarker) {
                i = decode(w, i, cur);
                has = true;
                continue;
            }
            if (c == '\\') {
                if (i + 1 < w.size()) {
                    if (pattern) cur += '\\';
                    cur += w[i + 1];
                }
                has = true;
                i += 2;
                continue;
            }
            if (c == '\'') {
                const auto end = std::min(w.find('\'', i + 1), w.size());
                for (std::size_t k = i + 1; k < end;) {
                    if (w[k] == kMarker) {
                        k = decode(w, k, cur);
                        continue;
                    }
                    quoted_char(w[k++]);
                }
                has = true;
                i = end + 1;
                continue;
            }
            if (c == '"') {
                ++i;
                bool at_only = true;
                bool any = false;
                while (i < w.size() && w[i] != '"') {
                    const char d = w[i];
                    if (d == kMarker) {
                        i = decode(w, i, cur);
                        at_only = false;
                        continue;
                    }
                    if (d == '\\' && i + 1 < w.size()) {
                        const char e = w[i + 1];
                        if (e == '\n') {
                        } else if (e == '"' || e == '\\' || e == '$' || e == '`') {
                            quoted_char(e);
                        } else {
                            quoted_char(d);
                            quoted_char(e);
                        }
                        at_only = false;
                        i += 2;
                        continue;
                    }
                    if (d == '$' || d == '`') {
                        const std::size_t len = dollar_length(w, i);
                        const Expansion x = expand_dollar(w.substr(i, len), line);
                        i += len;
                        if (x.multi) {  // "$@", "${A[@]}": one field per item
                            any = true;
                            for (std::size_t k = 0; k < x.items.size(); ++k) {
                                quoted_value(x.items[k]);
                                if (k + 1 < x.items.size()) {
                                    emit(std::move(cur));
                                    cur.clear();
                                }
                                has = true;
                            }
                        } else {
                            at_only = false;
                            if (!x.items.empty()) quoted_value(x.items.front());
                        }
                        check();
                        continue;
                    }
                    quoted_char(d);
                    at_only = false;
                    ++i;
                }
                ++i;
                if (!at_only || !any) has = true;
                continue;
            }
            if (c == '$' || c == '`') {
                const std::size_t len = dollar_length(w, i);
                const Expansion x = expand_dollar(w.substr(i, len), line);
                i += len;
                for (std::size_t k = 0; k < x.items.size(); ++k) {
                    push_split(x.items[k]);
                    if (x.multi && k + 1 < x.items.size() && split) {
                        if (has) emit(std::move(cur));
                        cur.clear();
                        has = false;
                    } else if (x.multi && k + 1 < x.items.size()) {
                        cur += ' ';
                    }
                    check();
                }
                continue;
            }
            cur += c;
            has = true;
            ++i;
        }
        if (has) emit(std::move(cur));
        if (!split) {
            Value joined;
            for (std::size_t k = 0; k < out.size(); ++k) {
                if (k > 0) joined += ' ';
                joined += out[k];
            }
            return {joined};
        }
        return out;
    }
    Value expand_one(const std::string& w, int line) { return expand(w, Mode::One, line).front(); }

    static std::size_t dollar_length(const std::string& w, std::size_t i) {
        if (w[i] == '`') {
            std::size_t j = i + 1;
            while (j < w.size() && w[j] != '`') j += w[j] == '\\' ? 2 : 1;
            return std::min(j + 1, w.size()) - i;
        }
        if (i + 1 >= w.size()) return 1;
        const char n = w[i + 1];
        if (n == '{' || n == '(') {
            const char close = n == '{' ? '}' : ')';
            int depth = 0;
            std::size_t j = i + 1;
            while (j < w.size()) {
                if (w[j] == '\\') {
                    j += 2;
                    continue;
                }
                if (w[j] == '\'' && n == '(') {
                    j = w.find('\'', j + 1);
                    if (j == std::string::npos) return w.size() - i;
                    ++j;
                    continue;
                }
                if (w[j] == n) ++depth;
                if (w[j] == close && --depth == 0) return j + 1 - i;
                ++j;
            }
            return w.size() - i;
        }
        if (std::isdigit(static_cast<unsigned char>(n)) != 0) return 2;
        if (is_name_char(n)) {
            std::size_t j = i + 1;
            while (j < w.size() && is_name_char(w[j])) ++j;
            return j - i;
        }
        if (n == '@' || n == '*' || n == '#' || n == '?' || n == '$' || n == '!' || n == '-') return 2;
        return 1;
    }

    struct Expansion {
        std::vector<Value> items;
        bool multi = false;  // "$@"-like: items are separate fields
    };

    static Expansion one(Value s) { return {{std::move(s)}, false}; }
    // "$*", "${A[*]}": the items joined by a blank (the first character of the default IFS).
    static Value joined(const std::vector<Value>& items) {
        Value out;
        for (std::size_t k = 0; k < items.size(); ++k) {
            if (k > 0) out += ' ';
            out += items[k];
        }
        return out;
    }

    Expansion expand_dollar(const std::string& x, int line) {
        if (x == "$") return one(Value("$"));
        if (x[0] == '`' || (x.size() > 2 && x[1] == '(' && x[2] != '(')) {
            return one(unknown(x, "'" + abbreviated(x) + "' (" + at(line) +
                                      ") is a command substitution, which import-args does not run"));
        }
        if (x.size() > 4 && x[1] == '(' && x[2] == '(') return one(arithmetic(x.substr(3, x.size() - 5), x, line));
        if (x.size() > 2 && x[1] == '{') return braced(x.substr(2, x.size() - 3), x, line);
        return parameter(x.substr(1), x, line);
    }

    static std::string abbreviated(const std::string& s) {
        std::string one_line;
        for (char c : s) one_line += c == '\n' ? ' ' : c;
        return printable_text(one_line.size() > 60 ? one_line.substr(0, 57) + "..." : one_line);
    }

    // The reason a variable the script never sets is unknown.
    std::string env_reason(const std::string& name, const std::string& shown_text, int line) const {
        if (is_number(name)) {
            return "'" + abbreviated(shown_text) + "' (" + at(line) + ") is the script's argument " + name +
                   ": give its value with --set " + name + "=VALUE";
        }
        return "'" + abbreviated(shown_text) + "' (" + at(line) + "): " + name +
               " is not set in the script (its value comes from the environment): give it with --set " +
               name + "=VALUE";
    }
    Value env_unknown(const std::string& name, const std::string& shown_text, int line) {
        return unknown(shown_text, env_reason(name, shown_text, line), true);
    }

    // $NAME, $1, $@ ... `name` without the '$'.
    Expansion parameter(const std::string& name, const std::string& shown_text, int line) {
        if (name == "@") return {positional_, true};
        if (name == "*") return one(joined(positional_));
        if (name == "#") return one(Value(std::to_string(positional_.size())));
        if (name == "?") {
            if (last_status_.tri == Tri::Unknown) {
                return one(unknown(shown_text, "'$?' (" + at(line) + ") is the status of a command whose outcome is not known"));
            }
            return one(Value(last_status_.tri == Tri::True ? "0" : "1"));
        }
        if (name == "0") return one(Value(file()));
        if (name == "$" || name == "!" || name == "-") {
            return one(unknown(shown_text, "'" + shown_text + "' (" + at(line) + ") is a process value"));
        }
        if (const Var* v = value_of(name)) return one(v->items.empty() ? Value() : v->items.front());
        if (from_environment(name)) return one(env_unknown(name, shown_text, line));
        return one(Value());
    }

    Expansion braced(const std::string& inner, const std::string& shown_text, int line) {
        bool length = false;
        std::size_t i = 0;
        if (!inner.empty() && inner[0] == '#' && inner.size() > 1) {
            length = true;
            i = 1;
        }
        std::size_t j = i;
        while (j < inner.size() && is_name_char(inner[j])) ++j;
        if (j == i && j < inner.size() && (inner[j] == '@' || inner[j] == '*')) ++j;
        const std::string name = inner.substr(i, j - i);
        std::string index;
        if (j < inner.size() && inner[j] == '[') {
            const auto close = inner.find(']', j);
            if (close == std::string::npos) return unsupported(shown_text, line);
            index = inner.substr(j + 1, close - j - 1);
            j = close + 1;
        }
        const std::string rest = inner.substr(j);
        if (name.empty()) return unsupported(shown_text, line);
        if (name == "@" || name == "*") {
            if (!rest.empty()) return unsupported(shown_text, line);
            return parameter(name, shown_text, line);
        }
        const Var* v = value_of(name);
        const bool env = v == nullptr && from_environment(name);  // the environment's, unknown
        const Var var = v != nullptr ? *v : Var{};
        if (length) {
            if (!rest.empty()) return unsupported(shown_text, line);
            if (env) return one(env_unknown(name, shown_text, line));
            if (v == nullptr) return one(Value("0"));
            if (index == "@" || index == "*") return one(Value(std::to_string(var.items.size())));
            const Value& first = var.items.empty() ? Value() : var.items.front();
            if (!first.known()) return one(first);
            return one(Value(std::to_string(first.text.size())));
        }
        // The value, as items.
        Expansion value;
        bool set = v != nullptr;
        bool empty = true;
        if (v != nullptr) {
            if (index == "@") {
                value.items = var.items;
                value.multi = true;
            } else if (index == "*") {
                value = one(joined(var.items));
            } else if (!index.empty()) {
                const Value e = arithmetic(index, shown_text, line);
                if (!e.known()) return one(e);
                const long long k = std::stoll(e.text);
                set = k >= 0 && static_cast<std::size_t>(k) < var.items.size();
                value = one(set ? var.items[static_cast<std::size_t>(k)] : Value());
            } else {
                value = one(var.items.empty() ? Value() : var.items.front());
            }
            for (const auto& it : value.items) empty = empty && it.empty();
        }
        if (rest.empty()) {
            if (env) return one(env_unknown(name, shown_text, line));
            return value;
        }
        std::string op;
        for (const char* o : {":-", ":=", ":+", ":?", "-", "=", "+", "?"}) {
            if (rest.rfind(o, 0) == 0) {
                op = o;
                break;
            }
        }
        if (op.empty()) {
            // ${V#p} ${V##p} ${V%p} ${V%%p} ${V/p/r} ${V//p/r} ${V:off[:len]} ${V,,} ${V^^}
            if (env) return one(env_unknown(name, shown_text, line));
            if (value.multi || value.items.size() > 1) return unsupported(shown_text, line);
            const Value text = value.items.empty() ? Value() : value.items.front();
            if (!text.known()) return one(text);
            std::string out;
            if (transform(text.text, rest, line, out)) return one(Value(out));
            return unsupported(shown_text, line);
        }
        const std::string word_raw = rest.substr(op.size());
        const bool colon = op[0] == ':';
        const bool use_default = !set || (colon && empty);
        const char kind = op.back();
        if (kind == '-' || kind == '=') {
            // The default is taken as written: an unset variable is the script's default.
            if (!use_default) return value;
            const Value d = expand_one(word_raw, line);
            if (kind == '=') assign(name, {false, {d}}, line);
            return one(d);
        }
        if (kind == '+') {
            if (env) return one(env_unknown(name, shown_text, line));
            if (use_default) return one(Value());
            return one(expand_one(word_raw, line));
        }
        // ${VAR?message}: an error when unset.
        if (env) return one(env_unknown(name, shown_text, line));
        return value;
    }

    // The string operators of a braced expansion on a known value; false when not one.
    bool transform(const std::string& v, const std::string& rest, int line, std::string& out) {
        const auto pattern = [&](const std::string& raw, std::string& p) {
            const Value pv = expand(raw, Mode::Pattern, line).front();
            p = pv.text;
            return pv.known();
        };
        if (rest == ",," || rest == "^^" || rest == "," || rest == "^") {
            out = v;
            const std::size_t n = rest.size() == 2 ? out.size() : std::min<std::size_t>(1, out.size());
            for (std::size_t k = 0; k < n; ++k) {
                const auto c = static_cast<unsigned char>(out[k]);
                out[k] = static_cast<char>(rest[0] == ',' ? std::tolower(c) : std::toupper(c));
            }
            return true;
        }
        if (rest[0] == '#' || rest[0] == '%') {
            const bool longest = rest.size() > 1 && rest[1] == rest[0];
            std::string pat;
            if (!pattern(rest.substr(longest ? 2 : 1), pat)) return false;
            out = v;
            if (rest[0] == '#') {
                const std::size_t len = shell::Glob(pat).prefix(v, longest, budget_);
                if (len != std::string::npos) out = v.substr(len);
            } else {
                const std::string rv(v.rbegin(), v.rend());
                const std::size_t len = shell::Glob(pat).reversed().prefix(rv, longest, budget_);
                if (len != std::string::npos) out = v.substr(0, v.size() - len);
            }
            return true;
        }
        if (rest[0] == '/') {
            std::string body = rest.substr(1);
            const bool all = !body.empty() && body[0] == '/';
            const bool anchor_start = !all && !body.empty() && body[0] == '#';
            const bool anchor_end = !all && !body.empty() && body[0] == '%';
            if (all || anchor_start || anchor_end) body = body.substr(1);
            const auto slash = body.find('/');
            std::string pat;
            if (!pattern(body.substr(0, slash), pat)) return false;
            const Value rep_v = slash == std::string::npos ? Value() : expand_one(body.substr(slash + 1), line);
            if (!rep_v.known()) return false;
            const std::string& rep = rep_v.text;
            const shell::Glob glob(pat);
            out.clear();
            if (pat.empty()) {
                out = v;
                return true;
            }
            if (anchor_start) {
                const std::size_t len = glob.prefix(v, true, budget_);
                out = len == std::string::npos ? v : rep + v.substr(len);
                return true;
            }
            if (anchor_end) {
                const std::string rv(v.rbegin(), v.rend());
                const std::size_t len = glob.reversed().prefix(rv, true, budget_);
                out = len == std::string::npos ? v : v.substr(0, v.size() - len) + rep;
                return true;
            }
            bool replaced = false;
            for (std::size_t i = 0; i < v.size();) {
                std::size_t len = std::string::npos;
                if (all || !replaced) len = glob.prefix(std::string_view(v).substr(i), true, budget_);
                if (len != std::string::npos && len > 0) {
                    out += rep;
                    i += len;
                    replaced = true;
                } else {
                    out += v[i++];
                }
                if (out.size() > kMaxValueBytes) fail(line, "a word grows past 1 MiB: a runaway expansion, not a launch script");
            }
            return true;
        }
        if (rest[0] == ':' && rest.size() > 1) {
            const auto colon = rest.find(':', 1);
            const Value off_v = arithmetic(rest.substr(1, colon == std::string::npos ? std::string::npos : colon - 1), rest, line);
            const Value len_v = colon == std::string::npos ? Value() : arithmetic(rest.substr(colon + 1), rest, line);
            if (!off_v.known() || !len_v.known()) return false;
            const auto size = static_cast<long long>(v.size());
            long long off = std::stoll(off_v.text);
            if (off < 0) off = size + off < 0 ? size + 1 : size + off;  // bash: a negative offset past the start is empty
            if (off > size) {
                out.clear();
                return true;
            }
            long long len = len_v.text.empty() ? size - off : std::stoll(len_v.text);
            if (len < 0) len = std::max<long long>(0, size - off + len);
            out = v.substr(static_cast<std::size_t>(off), static_cast<std::size_t>(std::min(len, size - off)));
            return true;
        }
        return false;
    }

    Expansion unsupported(const std::string& shown_text, int line) {
        return one(unknown(shown_text, "'" + abbreviated(shown_text) + "' (" + at(line) +
                                           ") is a parameter expansion import-args does not "
                                           "interpret: give the variable's value with --set"));
    }

    // ---- arithmetic (shell_arith.h) ------------------------------------------------------------
    // The expression is expanded as inside double quotes first (a " inside is removed), as
    // bash does, then evaluated.
    shell::ArithOutcome evaluate(const std::string& expr_raw, int line) {
        return evaluate_expanded(expand_one("\"" + expr_raw + "\"", line), line);
    }
    shell::ArithOutcome evaluate_expanded(const Value& expr, int line) {
        const int saved = arith_line_;
        arith_line_ = line;
        shell::ArithOutcome r = shell::eval_arith(expr, *this);
        arith_line_ = saved;
        if (r.kind == shell::ArithOutcome::Limit) fail(line, r.message);
        return r;
    }
    // $((...)): its value; an error stops the script, as bash stops it.
    Value arithmetic(const std::string& expr_raw, const std::string& shown_text, int line) {
        const shell::ArithOutcome r = evaluate(expr_raw, line);
        if (r.kind == shell::ArithOutcome::Ok) return Value(std::to_string(r.value));
        if (r.kind == shell::ArithOutcome::Unknown) {
            const Unknown& u = unknowns_[static_cast<std::size_t>(r.unknown)];
            return unknown(shown_text, u.reason, u.named);
        }
        run_.notes.push_back(at(line) + ": '" + abbreviated(shown_text) + "': " + r.message +
                             ": bash drops the rest of this line");
        throw ArithAbort{};
    }
    // ((...)), let, the test of for ((;;)): true when non-zero; an error is a failed command.
    Status arith_status(const std::string& expr_raw, int line) {
        return arith_status(evaluate(expr_raw, line), expr_raw, line);
    }
    Status arith_status(const shell::ArithOutcome& r, const std::string& expr_raw, int line) {
        if (r.kind == shell::ArithOutcome::Ok) return {r.value != 0 ? Tri::True : Tri::False, ""};
        if (r.kind == shell::ArithOutcome::Unknown) return {Tri::Unknown, unknowns_[static_cast<std::size_t>(r.unknown)].reason};
        run_.notes.push_back(at(line) + ": '" + abbreviated(expr_raw) + "': " + r.message + " (the command fails, as in bash)");
        return {Tri::False, ""};
    }

    Value arith_get(const std::string& name, bool indexed, long long index) override {
        const Var* v = value_of(name);
        if (v == nullptr) {
            if (from_environment(name)) return env_unknown(name, name, arith_line_);
            return {};
        }
        if (!indexed) return v->items.empty() ? Value() : v->items.front();
        if (index < 0 || static_cast<std::size_t>(index) >= v->items.size()) return {};
        return v->items[static_cast<std::size_t>(index)];
    }
    void arith_set(const std::string& name, bool indexed, long long index, const shell::ArithValue& a) override {
        Value value = a.unknown >= 0 ? Value::unknown(unknowns_[static_cast<std::size_t>(a.unknown)].shown, a.unknown)
                                     : Value(std::to_string(a.v));
        if (!indexed) {
            assign(name, {false, {std::move(value)}}, arith_line_);
            return;
        }
        set_element(name, index, std::move(value), false, arith_line_);
    }
    void arith_spend(long long units) override { spend(units); }

    void set_element(const std::string& array, long long k, Value value, bool append, int line) {
        Var v;
        if (const Var* old = value_of(array)) v = *old;
        v.array = true;
        if (k < 0 || k > kMaxLoopIterations) {
            fail(line, array + "[" + std::to_string(k) + "]: an index past " + std::to_string(kMaxLoopIterations) +
                           " (import-args holds arrays as lists)");
        }
        const auto idx = static_cast<std::size_t>(k);
        if (v.items.size() <= idx) v.items.resize(idx + 1);
        if (append) v.items[idx] += value;
        else v.items[idx] = std::move(value);
        assign(array, std::move(v), line);
    }

    // ---- execution -----------------------------------------------------------------------
    Status exec(const Node& n) {
        spend(kNodeUnits);
        line_ = n.line;
        Status s = exec_node(n);
        line_ = n.line;
        last_status_ = s;
        return s;
    }

    Status exec_node(const Node& n) {
        switch (n.kind) {
            case Node::List: {
                Status s;
                for (const auto& k : n.kids) {
                    if (k->background) {  // cmd &: a subshell; the script goes on
                        subshell(*k);
                        s = {};
                    } else {
                        s = exec(*k);
                    }
                }
                return s;
            }
            case Node::AndOr: return exec_and_or(n);
            case Node::Pipeline: {
                Status s;
                if (n.kids.size() == 1) {
                    s = exec(*n.kids[0]);
                } else {
                    // Every element of a pipeline runs in a subshell (bash without lastpipe).
                    for (const auto& k : n.kids) s = subshell(*k);
                }
                if (n.negate) s.tri = s.tri == Tri::True ? Tri::False : s.tri == Tri::False ? Tri::True : Tri::Unknown;
                return s;
            }
            case Node::If: return exec_if(n);
            case Node::For: return exec_for(n);
            case Node::ArithFor: return exec_arith_for(n);
            case Node::While:
                run_.notes.push_back(at(n.line) + ": a while/until loop, not followed (import-args runs no loops on unknown conditions)");
                return {};
            case Node::Case: return exec_case(n);
            case Node::Subshell: return subshell(*n.kids[0]);
            case Node::Group: return exec(*n.kids[0]);
            case Node::Function:
                functions_[n.name] = n.kids[0].get();
                return {};
            case Node::Arith: return arith_status(n.arith.front(), n.line);
            case Node::Simple: return exec_simple(n);
        }
        return {};
    }

    // The top-level list of a script, a sourced file, an eval'd string or a child shell:
    // an arithmetic error drops the rest of its line.
    Status exec_lines(const Node& root) {
        spend(kNodeUnits);
        Status s;
        bool dropping = false;
        for (const auto& k : root.kids) {
            if (dropping && k->continues_line) continue;
            dropping = false;
            try {
                if (k->background) {
                    subshell(*k);
                    s = {};
                } else {
                    s = exec(*k);
                }
            } catch (const ArithAbort&) {
                dropping = true;
                s = {Tri::False, ""};
                last_status_ = s;
            }
        }
        return s;
    }

    // Runs `n` as bash runs a subshell: nothing it sets reaches the script; `exit` ends only it.
    Status subshell(const Node& n) {
        spend(static_cast<long long>(vars_bytes()));
        const auto saved_vars = vars_;
        const auto saved_lines = run_.variable_lines;
        const auto saved_functions = functions_;
        const auto saved_positional = positional_;
        const auto saved_scopes = scopes_;
        const auto saved_assigned = assigned_;
        const int saved_depth = depth_;
        const int saved_loops = loop_depth_;
        Status s;
        try {
            s = exec(n);
        } catch (const ExitSignal& e) {
            s = {e.line > 0 ? Tri::False : Tri::True, ""};
        } catch (const ReturnSignal& r) {
            s = {r.status, ""};
        } catch (const LoopSignal&) {
            s = {};
        } catch (const ArithAbort&) {
            s = {Tri::False, ""};
        }
        vars_ = saved_vars;
        run_.variable_lines = saved_lines;
        functions_ = saved_functions;
        positional_ = saved_positional;
        scopes_ = saved_scopes;
        assigned_ = saved_assigned;
        depth_ = saved_depth;
        loop_depth_ = saved_loops;
        return s;
    }

    // The branch of an unknown condition: the caller's choice, recorded.
    bool decide(int line, const std::string& condition, const std::string& reason) {
        const std::size_t k = run_.decisions.size();
        const bool taken = k < choices_.size() ? choices_[k] : true;
        run_.decisions.push_back({file(), line, condition, reason, taken});
        return taken;
    }

    Status exec_and_or(const Node& n) {
        Status s = exec(*n.kids[0]);
        for (std::size_t k = 0; k < n.ops.size(); ++k) {
            const bool and_op = n.ops[k] == "&&";
            bool run_right = false;
            if (s.tri == Tri::Unknown) {
                const bool held = decide(n.line, "the command before '" + n.ops[k] + "'", s.reason);
                run_right = and_op ? held : !held;
                s.tri = held ? Tri::True : Tri::False;
            } else {
                run_right = and_op ? s.tri == Tri::True : s.tri == Tri::False;
            }
            if (run_right) s = exec(*n.kids[k + 1]);
        }
        return s;
    }

    Status exec_if(const Node& n) {
        const std::size_t clauses = (n.kids.size() - (n.has_else ? 1 : 0)) / 2;
        for (std::size_t c = 0; c < clauses; ++c) {
            const Node& cond = *n.kids[2 * c];
            const Status s = exec(cond);
            bool held = s.tri == Tri::True;
            if (s.tri == Tri::Unknown) held = decide(cond.line, cond.source, s.reason);
            if (held) return exec(*n.kids[2 * c + 1]);
        }
        if (n.has_else) return exec(*n.kids.back());
        return {};
    }

    // The body of a loop, once; false when `break` ends the loop.
    bool loop_body(const Node& body, Status& s) {
        try {
            s = exec(body);
        } catch (const LoopSignal& sig) {
            if (sig.levels > 1) throw LoopSignal{sig.is_break, sig.levels - 1};
            return !sig.is_break;
        }
        return true;
    }

    Status exec_for(const Node& n) {
        std::vector<Value> items;
        if (n.has_in) {
            for (const auto& w : n.words) {
                for (auto& f : expand(w.text, Mode::Fields, w.line)) items.push_back(std::move(f));
            }
        } else {
            items = positional_;
        }
        // Its words unknown, the loop's body runs once with the variable unknown: a launch
        // inside (one job per seed or data partition) is still found, and the variable is
        // asked for only where it reaches a layout argument.
        std::string why;
        for (const auto& it : items) {
            why = reason_of(it);
            if (!why.empty()) break;
        }
        if (!why.empty()) {
            run_.notes.push_back(at(n.line) + ": the for-loop over unknown words ran once with " + n.name +
                                 " unknown (" + why + ")");
            items = {unknown("$" + n.name,
                             n.name + ", the variable of the for-loop on line " + std::to_string(n.line) +
                                 " over unknown words (" + why + ")",
                             /*named=*/true)};
        }
        if (static_cast<long long>(items.size()) > kMaxLoopIterations) {
            fail(n.line, "a for-loop over more than " + std::to_string(kMaxLoopIterations) + " words");
        }
        const Nest loop(loop_depth_, 1 << 20, *this, n.line, "loops");
        Status s;
        for (const auto& it : items) {
            assign(n.name, {false, {it}}, n.line);
            if (!loop_body(*n.kids[0], s)) break;
        }
        return s;
    }

    Status exec_arith_for(const Node& n) {
        const Nest loop(loop_depth_, 1 << 20, *this, n.line, "loops");
        if (!n.arith[0].empty()) arith_status(n.arith[0], n.line);
        Status s;
        for (long long k = 0;; ++k) {
            const bool has_test = n.arith[1].find_first_not_of(" \t\n") != std::string::npos;
            const Status test = has_test ? arith_status(n.arith[1], n.line) : Status{};
            if (test.tri == Tri::Unknown) {
                run_.notes.push_back(at(n.line) + ": the for ((...)) loop on an unknown condition was not run (" +
                                     test.reason + ")");
                return {};
            }
            if (test.tri == Tri::False) break;
            if (k >= kMaxLoopIterations) {
                fail(n.line, "a for ((...)) loop past " + std::to_string(kMaxLoopIterations) + " iterations");
            }
            if (!loop_body(*n.kids[0], s)) break;
            if (!n.arith[2].empty()) arith_status(n.arith[2], n.line);
        }
        return s;
    }

    Status exec_case(const Node& n) {
        const Value word_v = expand_one(n.name, n.line);
        const std::string r = reason_of(word_v);
        for (std::size_t c = 0; c < n.patterns.size(); ++c) {
            bool matched = false;
            std::string why = r;
            for (const auto& p : n.patterns[c]) {
                const Value pat = expand(p, Mode::Pattern, n.line).front();
                if (!why.empty()) continue;
                if (!pat.known()) {
                    why = reason_of(pat);
                    continue;
                }
                matched = matched || shell::Glob(pat.text).matches(word_v.text, budget_);
            }
            if (!matched && !why.empty()) {
                std::string cond = n.name + " matches";
                for (const auto& p : n.patterns[c]) cond += " " + p;
                matched = decide(n.line, cond, why);
            }
            if (matched) return exec(*n.kids[c]);
        }
        return {};
    }

    bool is_assignment(const Token& t) const {
        if (t.kind == Token::Array) return true;
        if (t.kind != Token::Word) return false;
        const auto eq = t.text.find('=');
        if (eq == std::string::npos || eq == 0) return false;
        std::string name = t.text.substr(0, eq);
        if (!name.empty() && name.back() == '+') name.pop_back();
        // NAME[index]=value sets one element of an array.
        if (const auto open = name.find('['); open != std::string::npos && name.back() == ']') {
            name = name.substr(0, open);
        }
        return is_name(name);
    }
    static std::string assigned_name(const Token& t) {
        if (t.kind == Token::Array) return t.text;
        std::string name = t.text.substr(0, t.text.find('='));
        if (!name.empty() && name.back() == '+') name.pop_back();
        return name.substr(0, name.find('['));
    }

    void do_assignment(const Token& t) {
        if (t.kind == Token::Array) {
            Var v;
            v.array = true;
            if (t.append) {
                if (const Var* old = value_of(t.text)) v.items = old->items;
            }
            for (const auto& item : t.items) {
                for (auto& f : expand(item, Mode::Fields, t.line)) v.items.push_back(name_unknowns(t.text, f, t.line));
            }
            assign(t.text, std::move(v), t.line);
            return;
        }
        const auto eq = t.text.find('=');
        std::string name = t.text.substr(0, eq);
        const bool append = name.back() == '+';
        if (append) name.pop_back();
        if (const auto open = name.find('['); open != std::string::npos) {
            // One element: a numeric index (associative keys are not followed: the array
            // becomes unknown from here, named).
            const std::string array = name.substr(0, open);
            const Value index = arithmetic(name.substr(open + 1, name.size() - open - 2), name, t.line);
            Value value = expand_one(t.text.substr(eq + 1), t.line);
            if (!index.known()) {
                assign(array,
                       {true, {unknown(name, array + " (" + at(t.line) + ") is indexed by '" + name +
                                                 "', which import-args does not follow: give it with --set " + array + "=VALUE",
                                       true)}},
                       t.line);
                return;
            }
            set_element(array, std::stoll(index.text), std::move(value), append, t.line);
            return;
        }
        Value value = name_unknowns(name, expand_one(t.text.substr(eq + 1), t.line), t.line);
        Var v{false, {value}};
        if (append) {
            if (const Var* old = value_of(name)) {
                v = *old;
                if (v.items.empty()) v.items.emplace_back();
                v.items.front() += value;
            }
        }
        assign(name, std::move(v), t.line);
    }

    // export, declare, typeset, local, readonly: their NAME=VALUE words are assignments;
    // declare/typeset/local inside a function make the names local to it.
    Status declaration(const Node& n, std::size_t k, const std::string& cmd) {
        bool local = cmd == "local" || ((cmd == "declare" || cmd == "typeset") && !scopes_.empty());
        bool integer = false;
        bool exported = cmd == "export";
        if (cmd == "local" && scopes_.empty()) {
            run_.notes.push_back(at(n.line) + ": 'local' outside a function fails in bash; its assignments were not made");
            return {Tri::False, ""};
        }
        for (std::size_t a = k + 1; a < n.words.size(); ++a) {
            const Token& t = n.words[a];
            if (t.kind == Token::Word && !t.text.empty() && t.text[0] == '-') {
                if (t.text.find('g') != std::string::npos && cmd != "local") local = false;
                if (t.text.find('i') != std::string::npos) integer = true;
                if (t.text.find('x') != std::string::npos) exported = true;
                continue;
            }
            const bool assignment = is_assignment(t);
            const std::string name = assignment ? assigned_name(t) : expand_one(t.text, t.line).text;
            if (!is_name(name)) continue;
            if (local) make_local(name);
            if (exported) exported_.insert(name);
            if (!assignment) continue;
            if (integer && t.kind == Token::Word) {  // declare -i X=2*3: the value is arithmetic
                assign(name, {false, {arithmetic(t.text.substr(t.text.find('=') + 1), t.text, t.line)}}, t.line);
            } else {
                do_assignment(t);
            }
            if (cmd == "export" && t.kind == Token::Word) {
                const Var* v = value_of(name);
                run_.exports.emplace_back(n.line, name + "=" + (v != nullptr && !v->items.empty() ? v->items.front().text : ""));
            }
        }
        return {};
    }

    Status exec_simple(const Node& n) {
        std::size_t k = 0;
        std::vector<std::string> env;
        while (k < n.words.size() && is_assignment(n.words[k])) ++k;
        if (k == n.words.size()) {
            for (const auto& t : n.words) do_assignment(t);
            return {};
        }
        for (std::size_t a = 0; a < k; ++a) env.push_back(n.words[a].text);
        const Value cmd_value = expand_one(n.words[k].text, n.words[k].line);
        const std::string cmd_name = cmd_value.known() ? cmd_value.text : "";
        if (cmd_name == "export" || cmd_name == "declare" || cmd_name == "typeset" || cmd_name == "local" ||
            cmd_name == "readonly") {
            return declaration(n, k, cmd_name);
        }
        std::vector<Value> fields;
        for (std::size_t a = k; a < n.words.size(); ++a) {
            if (n.words[a].kind == Token::Array) continue;
            for (auto& f : expand(n.words[a].text, Mode::Fields, n.words[a].line)) fields.push_back(std::move(f));
        }
        if (fields.empty()) return {};
        const std::string name = fields[0].known() ? fields[0].text : "";
        const auto text_of = [&](std::size_t a) { return a < fields.size() && fields[a].known() ? fields[a].text : ""; };
        if (name == "unset") {
            bool functions = false;
            for (std::size_t a = 1; a < fields.size(); ++a) {
                const std::string f = text_of(a);
                if (f == "-f") functions = true;
                if (f.empty() || f[0] == '-' || options_.set.count(f) != 0) continue;
                if (functions) functions_.erase(f);
                else vars_.erase(f);
            }
            return {};
        }
        if (name == "exit") {
            // `exit` and `exit 0` end the script normally; another status is an error exit.
            const bool error_exit = fields.size() > 1 && text_of(1) != "0";
            throw ExitSignal{error_exit ? n.line : 0};
        }
        if (name == "return") {
            if (scopes_.empty() && files_.size() == 1) return {Tri::False, ""};  // bash: an error, goes on
            throw ReturnSignal{fields.size() > 1 && text_of(1) != "0" ? Tri::False : Tri::True};
        }
        if (name == "break" || name == "continue") {
            if (loop_depth_ == 0) return {};
            long long levels = 1;
            if (fields.size() > 1 && is_number(text_of(1))) levels = std::max(1LL, std::stoll(text_of(1)));
            throw LoopSignal{name == "break", levels};
        }
        if (name == "let") {
            Status s{Tri::False, ""};
            // Its words are expanded already: no second expansion ($ left in them is an error).
            for (std::size_t a = 1; a < fields.size(); ++a) {
                s = arith_status(evaluate_expanded(fields[a], n.line), fields[a].text, n.line);
            }
            return s;
        }
        if (name == "set") {  // set -- WORDS: the positional arguments; set -a / +a: allexport
            for (std::size_t a = 1; a < fields.size(); ++a) {
                const std::string o = text_of(a);
                if (o.size() > 1 && (o[0] == '-' || o[0] == '+') && o[1] != '-' && o.find('a') != std::string::npos) {
                    allexport_ = o[0] == '-';
                }
                if (text_of(a) == "--") {
                    positional_.assign(fields.begin() + static_cast<std::ptrdiff_t>(a) + 1, fields.end());
                    break;
                }
            }
            return {};
        }
        if (name == "read" || name == "mapfile" || name == "readarray" ||
            (name == "printf" && text_of(1) == "-v")) {
            // Values from input (or formatting) import-args does not run: unknown, named.
            for (std::size_t a = 1; a < fields.size(); ++a) {
                const std::string v = text_of(a);
                if (!is_name(v)) continue;
                if (name == "printf" && a != 2) continue;
                assign(v, {false, {unknown(v, v + " (" + at(n.line) + ") is set by '" + name +
                                                  "', which import-args does not run: give its value with --set " + v + "=VALUE",
                                          true)}},
                       n.line);
                assigned_.insert(v);
            }
            return {Tri::Unknown, "'" + name + "' (" + at(n.line) + ") reads input import-args does not have"};
        }
        // Builtins without an effect on what is launched.
        if (name == ":" || name == "true" || name == "cd" || name == "pushd" || name == "popd" || name == "echo" ||
            name == "printf" || name == "wait" || name == "sleep" || name == "shopt" || name == "trap" ||
            name == "ulimit" || name == "umask") {
            return {};
        }
        if (name == "false") return {Tri::False, ""};
        if (name == "shift") {
            long long count = 1;
            if (fields.size() > 1 && is_number(text_of(1))) count = std::stoll(text_of(1));
            if (count > static_cast<long long>(positional_.size())) return {Tri::False, ""};
            positional_.erase(positional_.begin(), positional_.begin() + count);
            return {};
        }
        if (name == "test" || name == "[" || name == "[[") return test(n, k);
        if (name == "." || name == "source") return source(fields, n.line);
        if (name == "eval") {
            std::string text;
            for (std::size_t a = 1; a < fields.size(); ++a) text += (a > 1 ? " " : "") + encode(fields[a]);
            return nested(text, n.line, false);
        }
        // A shell started on a string or on a here-document (a job script for sbatch): a
        // child process, which changes none of the script's variables.
        const auto shell_name = [&](std::size_t a) {
            const std::string base = std::filesystem::path(text_of(a)).filename().string();
            return base == "sh" || base == "bash";
        };
        // The word after a shell's options that holds its -c string: bash -x -c S, bash -ec S,
        // bash -o pipefail -c S (bash reads -c as a flag and takes the first operand as S).
        const auto command_string_at = [&](std::size_t a) -> std::size_t {
            bool has_c = false;
            std::size_t j = a + 1;
            for (; j < fields.size(); ++j) {
                const std::string& o = text_of(j);
                if (o == "--") return has_c && j + 1 < fields.size() ? j + 1 : fields.size();
                if (o.size() < 2 || (o[0] != '-' && o[0] != '+')) break;
                if (o[1] == '-') continue;  // --norc, --login, --noprofile
                if (o == "-o" || o == "+o" || o == "-O" || o == "+O") {
                    ++j;  // the option's name
                    continue;
                }
                has_c = has_c || (o[0] == '-' && o.find('c') != std::string::npos);
            }
            return has_c && j < fields.size() ? j : fields.size();
        };
        for (std::size_t a = 0; a + 2 < fields.size(); ++a) {
            if (!shell_name(a)) continue;
            if (const std::size_t at_string = command_string_at(a); at_string < fields.size()) {
                // bash -c STRING NAME ARGS...: $0 is NAME, $1... the ARGS.
                const std::vector<Value> args(
                    fields.begin() + static_cast<std::ptrdiff_t>(std::min(at_string + 2, fields.size())), fields.end());
                return child(fields, a, encode(fields[at_string]), args, n.line, false);
            }
        }
        if (n.has_heredoc) {
            const std::string base = std::filesystem::path(name).filename().string();
            std::size_t at_shell = fields.size();
            for (std::size_t a = 0; a < fields.size(); ++a) {
                if (shell_name(a)) {
                    at_shell = a;
                    break;
                }
            }
            if (base == "sbatch" || at_shell < fields.size()) {
                const std::string body = n.heredoc_quoted ? n.heredoc_body : encode(heredoc(n.heredoc_body, n.line));
                return child(fields, at_shell < fields.size() ? at_shell : fields.size(), body, {}, n.line, base == "sbatch");
            }
        }
        if (const auto f = functions_.find(name); f != functions_.end()) return call(*f->second, fields, n.line);
        ScriptCommand c;
        c.env = env;
        c.file = file();
        c.line = n.line;
        std::vector<Value> all = prefix_;
        all.insert(all.end(), fields.begin(), fields.end());
        for (const auto& f : all) {
            command_bytes_ += f.text.size() + 16;
            c.words.push_back(word(f, n.line));
        }
        if (run_.commands.size() >= kMaxCommands || command_bytes_ > kMaxCommandBytes) {
            fail(n.line, "more than " + std::to_string(kMaxCommands) + " commands or 64 MiB of their words: a runaway script");
        }
        run_.commands.push_back(std::move(c));
        return {};  // commands are taken to succeed, as the script's author intends
    }

    Status call(const Node& body, const std::vector<Value>& fields, int line) {
        const Nest nest(depth_, kMaxCallDepth, *this, line, "function calls, eval, sh -c and source");
        const auto saved = positional_;
        positional_.assign(fields.begin() + 1, fields.end());
        scopes_.emplace_back();
        Status s;
        try {
            s = exec(body);
        } catch (const ReturnSignal& r) {
            s = {r.status, ""};
        }
        for (auto& [name, old] : scopes_.back()) {  // the caller's values come back
            if (old) vars_[name] = std::move(*old);
            else vars_.erase(name);
        }
        scopes_.pop_back();
        positional_ = saved;
        return s;
    }

    // A here-document's body as bash expands it for an unquoted delimiter: parameters,
    // command substitutions and arithmetic; a backslash escapes only $ ` \ and a newline.
    Value heredoc(const std::string& body, int line) {
        Value out;
        for (std::size_t i = 0; i < body.size();) {
            const char c = body[i];
            if (c == '\\' && i + 1 < body.size() &&
                (body[i + 1] == '$' || body[i + 1] == '`' || body[i + 1] == '\\' || body[i + 1] == '\n')) {
                if (body[i + 1] != '\n') out += body[i + 1];
                i += 2;
                continue;
            }
            if (c == '$' || c == '`') {
                const std::size_t len = dollar_length(body, i);
                const Expansion x = expand_dollar(body.substr(i, len), line);
                for (std::size_t k = 0; k < x.items.size(); ++k) {
                    if (k > 0) out += ' ';
                    out += x.items[k];
                }
                i += len;
                if (out.text.size() > kMaxValueBytes) fail(line, "a here-document grows past 1 MiB");
                continue;
            }
            out += c;
            ++i;
        }
        spend(static_cast<long long>(out.text.size()));
        return out;
    }

    // `[srun ...] bash -c STRING`, `sbatch <<EOF`: STRING's commands run in a child shell,
    // under the words before the shell (srun's options are the world size). The child sees
    // the environment: exported variables, not the script's other variables or functions.
    Status child(const std::vector<Value>& fields, std::size_t at_shell, const std::string& text,
                 const std::vector<Value>& args, int line, bool job) {
        const auto saved_prefix = prefix_;
        if (!job) prefix_.insert(prefix_.end(), fields.begin(), fields.begin() + static_cast<std::ptrdiff_t>(at_shell));
        Status s;
        spend(static_cast<long long>(vars_bytes()));
        const auto saved_vars = vars_;
        const auto saved_lines = run_.variable_lines;
        const auto saved_functions = functions_;
        const auto saved_positional = positional_;
        const auto saved_scopes = scopes_;
        const int saved_loops = loop_depth_;
        scopes_.clear();
        loop_depth_ = 0;
        positional_ = args;
        functions_.clear();
        for (auto it = vars_.begin(); it != vars_.end();) {
            it = exported_.count(it->first) != 0 ? std::next(it) : vars_.erase(it);
        }
        const auto saved_exported = exported_;
        const bool saved_allexport = allexport_;
        try {
            s = nested(text, line, job);
        } catch (const ExitSignal& e) {
            s = {e.line > 0 ? Tri::False : Tri::True, ""};
        } catch (const ReturnSignal& r) {
            s = {r.status, ""};
        } catch (const LoopSignal&) {
            s = {};
        }
        vars_ = saved_vars;
        run_.variable_lines = saved_lines;
        functions_ = saved_functions;
        positional_ = saved_positional;
        scopes_ = saved_scopes;
        loop_depth_ = saved_loops;
        prefix_ = saved_prefix;
        exported_ = saved_exported;
        allexport_ = saved_allexport;
        return s;
    }

    // eval's text (or a child shell's), read as script text on the line that runs it.
    Status nested(const std::string& text, int line, bool job) {
        const Nest nest(depth_, kMaxCallDepth, *this, line, "function calls, eval, sh -c and source");
        const shell::Parsed& p = parsed_.parse(text, file(), true, line);
        if (job) sbatch(p.sbatch);
        collect_assigned(p.assigned);
        return exec_lines(*p.tree);
    }

    Status source(const std::vector<Value>& fields, int line) {
        if (fields.size() < 2) fail(line, "'" + fields[0].text + "' without a file");
        const Value& target = fields[1];
        std::string base = target.text;
        if (const auto slash = base.find_last_of('/'); slash != std::string::npos) base = base.substr(slash + 1);
        const auto it = options_.sources.find(base);
        if (it == options_.sources.end()) {
            run_.notes.push_back(at(line) + ": the sourced file " + target.text +
                                 " was not read (give it with --source " + base + "=PATH)");
            return {};
        }
        const Nest nest(depth_, kMaxCallDepth, *this, line, "function calls, eval, sh -c and source");
        // The file the user named: a regular file, at most kMaxImportBytes, UTF-8.
        const std::string* text = nullptr;
        try {
            text = &parsed_.file_text(it->second);
        } catch (const InputError& e) {
            fail(line, "--source " + base + "=" + it->second + ": " + e.issues().front().message);
        }
        files_.push_back(it->second);
        const shell::Parsed& p = parsed_.parse(*text, file(), false, 0);
        collect_assigned(p.assigned);
        Status s;
        try {
            s = exec_lines(*p.tree);
        } catch (const ReturnSignal& r) {  // `return` ends a sourced file
            s = {r.status, ""};
        }
        files_.pop_back();
        return s;
    }

    // ---- [ ... ], [[ ... ]], test -----------------------------------------------------------
    Status test(const Node& n, std::size_t k) {
        const bool dbl = n.words[k].text == "[[";
        std::vector<Value> args;
        std::vector<std::string> raws;
        for (std::size_t a = k + 1; a < n.words.size(); ++a) {
            const std::string& raw = n.words[a].text;
            if (dbl) {
                if (raw == "&&" || raw == "||" || raw == "(" || raw == ")" || raw == "!" || raw == "<" || raw == ">") {
                    args.emplace_back(raw);
                } else {
                    // The right side of == != =~ is a pattern: its quoted parts are literal.
                    const std::string prev = raws.empty() ? "" : raws.back();
                    const bool pattern = prev == "==" || prev == "=" || prev == "!=" || prev == "=~";
                    args.push_back(expand(raw, pattern ? Mode::Pattern : Mode::One, n.line).front());
                }
                raws.push_back(raw);
            } else {
                for (auto& f : expand(raw, Mode::Fields, n.line)) args.push_back(std::move(f));
            }
        }
        if (!args.empty() && args.back().known() && (args.back().text == "]" || args.back().text == "]]")) args.pop_back();
        std::size_t i = 0;
        Status s = test_or(args, i, dbl, n.line);
        if (i != args.size() && s.tri != Tri::Unknown) {
            return {Tri::False, ""};  // a malformed test fails in bash too
        }
        return s;
    }
    static bool is_op(const std::vector<Value>& a, std::size_t i, const char* op) {
        return i < a.size() && a[i].known() && a[i].text == op;
    }
    Status test_or(const std::vector<Value>& a, std::size_t& i, bool dbl, int line) {
        const Nest nest(test_depth_, shell::kMaxNesting, *this, line, "test expressions");
        Status l = test_and(a, i, dbl, line);
        while (is_op(a, i, dbl ? "||" : "-o")) {
            ++i;
            const Status r = test_and(a, i, dbl, line);
            if (l.tri == Tri::True || r.tri == Tri::True) l = {Tri::True, ""};
            else if (l.tri == Tri::Unknown) {}
            else l = r;
        }
        return l;
    }
    Status test_and(const std::vector<Value>& a, std::size_t& i, bool dbl, int line) {
        Status l = test_not(a, i, dbl, line);
        while (is_op(a, i, dbl ? "&&" : "-a")) {
            ++i;
            const Status r = test_not(a, i, dbl, line);
            if (l.tri == Tri::False || r.tri == Tri::False) l = {Tri::False, ""};
            else if (l.tri == Tri::Unknown) {}
            else l = r;
        }
        return l;
    }
    Status test_not(const std::vector<Value>& a, std::size_t& i, bool dbl, int line) {
        const Nest nest(test_depth_, shell::kMaxNesting, *this, line, "test expressions");
        if (is_op(a, i, "!") && i + 1 < a.size()) {
            ++i;
            Status s = test_not(a, i, dbl, line);
            if (s.tri != Tri::Unknown) s.tri = s.tri == Tri::True ? Tri::False : Tri::True;
            return s;
        }
        return test_primary(a, i, dbl, line);
    }
    Status test_primary(const std::vector<Value>& a, std::size_t& i, bool dbl, int line) {
        if (i >= a.size()) return {Tri::False, ""};
        if (is_op(a, i, "(")) {
            ++i;
            Status s = test_or(a, i, dbl, line);
            if (is_op(a, i, ")")) ++i;
            return s;
        }
        static const std::set<std::string> kBinary = {"=", "==", "!=", "<", ">", "-eq", "-ne", "-lt",
                                                      "-le", "-gt", "-ge", "=~", "-nt", "-ot", "-ef"};
        if (i + 2 < a.size() && a[i + 1].known() && kBinary.count(a[i + 1].text) != 0) {
            const Value& l = a[i];
            const std::string op = a[i + 1].text;
            const Value& r = a[i + 2];
            i += 3;
            for (const Value* v : {&l, &r}) {
                if (const std::string why = reason_of(*v); !why.empty()) return {Tri::Unknown, why};
            }
            if (op == "=" || op == "==" || op == "!=") {
                const bool eq = dbl ? shell::Glob(r.text).matches(l.text, budget_) : l.text == r.text;
                return {bool_tri(op == "!=" ? !eq : eq), ""};
            }
            if (op == "=~" && dbl) {  // POSIX extended regular expressions, in linear time
                bool valid = true;
                const bool found = shell::ere_search(r.text, l.text, budget_, valid);
                return {bool_tri(valid && found), ""};  // bash: an invalid pattern fails the test
            }
            if (op == "<") return {bool_tri(l.text < r.text), ""};
            if (op == ">") return {bool_tri(l.text > r.text), ""};
            if (op[0] == '-' && op.size() == 3 && op != "-nt" && op != "-ot" && op != "-ef") {
                long long x = 0;
                long long y = 0;
                if (dbl) {  // [[ ]]: the operands are arithmetic expressions
                    for (auto [v, out] : {std::pair{&l, &x}, std::pair{&r, &y}}) {
                        const shell::ArithOutcome o = evaluate_expanded(*v, line);
                        if (o.kind == shell::ArithOutcome::Unknown) {
                            return {Tri::Unknown, unknowns_[static_cast<std::size_t>(o.unknown)].reason};
                        }
                        if (o.kind != shell::ArithOutcome::Ok) return {Tri::False, ""};
                        *out = o.value;
                    }
                } else if (!integer(l.text, x) || !integer(r.text, y)) {
                    return {Tri::False, ""};  // bash: "integer expression expected", the test fails
                }
                if (op == "-eq") return {bool_tri(x == y), ""};
                if (op == "-ne") return {bool_tri(x != y), ""};
                if (op == "-lt") return {bool_tri(x < y), ""};
                if (op == "-le") return {bool_tri(x <= y), ""};
                if (op == "-gt") return {bool_tri(x > y), ""};
                if (op == "-ge") return {bool_tri(x >= y), ""};
            }
            return {Tri::Unknown, "'" + abbreviated(l.text + " " + op + " " + r.text) + "' (" + at(line) +
                                      ") compares files on the machine that runs it"};
        }
        if (a[i].known() && a[i].text.size() == 2 && a[i].text[0] == '-' && i + 1 < a.size()) {
            const std::string op = a[i].text;
            const Value& v = a[i + 1];
            i += 2;
            if (const std::string why = reason_of(v); !why.empty()) return {Tri::Unknown, why};
            if (op == "-z" || op == "-n") return {bool_tri(op == "-z" ? v.text.empty() : !v.text.empty()), ""};
            if (op == "-v") {
                if (value_of(v.text) != nullptr) return {Tri::True, ""};
                if (!from_environment(v.text)) return {Tri::False, ""};
            }
            return {Tri::Unknown, "'" + abbreviated(op + " " + v.text) + "' (" + at(line) +
                                      ") tests the machine that runs the script"};
        }
        const Value& v = a[i++];
        if (const std::string why = reason_of(v); !why.empty()) return {Tri::Unknown, why};
        return {bool_tri(!v.text.empty()), ""};
    }
    static Tri bool_tri(bool b) { return b ? Tri::True : Tri::False; }
    static bool integer(const std::string& s, long long& out) {
        std::size_t b = s.find_first_not_of(' ');
        if (b == std::string::npos) return false;
        const std::string t = s.substr(b);
        try {
            std::size_t used = 0;
            out = std::stoll(t, &used);
            return used == t.size();
        } catch (const std::exception&) {
            return false;
        }
    }

    const ScriptOptions& options_;
    const std::vector<bool>& choices_;
    Budget& budget_;
    shell::ParseCache& parsed_;  // every text read as bash, parsed once per import
    std::vector<std::string> files_;
    std::map<std::string, Var> vars_;
    std::map<std::string, std::string> slurm_env_;
    std::set<std::string> assigned_;
    std::vector<Value> positional_;
    std::vector<Unknown> unknowns_;
    // Into the trees of parsed_, which outlives every path.
    std::map<std::string, const Node*> functions_;
    std::vector<Value> prefix_;  // words a `srun ... sh -c STRING` puts before STRING's commands
    // One frame per running function: the names made local, with the value each had before.
    std::vector<std::map<std::string, std::optional<Var>>> scopes_;
    std::set<std::string> exported_;  // export NAME, declare -x: what a child shell sees
    bool allexport_ = false;          // set -a: every assignment exports
    Var scratch_;
    Status last_status_;
    int depth_ = 0;         // function calls, eval, sh -c, source
    int expand_depth_ = 0;  // ${a:-${b:-...}}
    int test_depth_ = 0;    // [[ ! ( ... ) ]]
    int loop_depth_ = 0;    // for-loops around the running command (break, continue)
    int line_ = 0;          // the line running (for the budget's message)
    int arith_line_ = 0;    // the line of the arithmetic being evaluated
    std::size_t command_bytes_ = 0;
    ScriptRun run_;
};

ScriptRun run_with_budget(const std::string& text, const std::string& file, const ScriptOptions& options,
                          const std::vector<bool>& choices, Budget& budget, shell::ParseCache& parsed) {
    return Interp(file, options, choices, budget, parsed).run(text);
}

}  // namespace

ScriptRun run_shell_script(const std::string& text, const std::string& file,
                           const ScriptOptions& options, const std::vector<bool>& choices) {
    Budget budget(options.work_budget > 0 ? options.work_budget : kBudgetUnits);
    shell::ParseCache parsed(budget);
    return run_with_budget(text, file, options, choices, budget, parsed);
}

void explore_shell_script(const std::string& text, const std::string& file,
                          const ScriptOptions& options, int max_runs,
                          const std::function<void(const ScriptRun&)>& visit) {
    Budget budget(options.work_budget > 0 ? options.work_budget : kBudgetUnits);  // one for every path
    shell::ParseCache parsed(budget);  // so is every text read: parsed once, on the first path
    std::vector<bool> choices;
    for (int runs = 0;; ++runs) {
        const ScriptRun run = run_with_budget(text, file, options, choices, budget, parsed);
        if (runs >= max_runs) {
            std::string list;
            for (const auto& d : run.decisions) list += "\n  line " + std::to_string(d.line) + ": " + d.reason;
            throw InputError(file, "script",
                             "more than " + std::to_string(max_runs) +
                                 " paths through conditions on unknown values; give the values with "
                                 "--set:" + list);
        }
        visit(run);
        // The next path: the last decision still on its first branch flips; later ones reset.
        std::vector<bool> taken;
        for (const auto& d : run.decisions) taken.push_back(d.taken);
        while (!taken.empty() && !taken.back()) taken.pop_back();
        if (taken.empty()) return;
        taken.back() = false;
        choices = taken;
    }
}

}  // namespace meshwork
