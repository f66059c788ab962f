#include "core/export/shell_script.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "core/common/error.h"
#include "core/export/shell_lexer.h"

namespace meshwork {

namespace {

using shell::Node;
using shell::Token;

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool is_name(const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
    for (char c : s) {
        if (!is_name_char(c)) return false;
    }
    return true;
}
bool is_number(const std::string& s) {
    if (s.empty()) return false;
    for (char c : s) {
        if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
    }
    return true;
}

// An unknown part of a value is kept in the text as this token, so that it survives
// assignments, word splitting and eval; the reason is looked up when it reaches a word.
constexpr const char* kUnknownPrefix = "${__meshwork_unknown_";

enum class Tri { False, True, Unknown };

struct Status {
    Tri tri = Tri::True;
    std::string reason;  // when Unknown
};

struct Var {
    bool array = false;
    std::vector<std::string> items;
};

struct ExitSignal {
    int line;
};

constexpr int kMaxDepth = 16;
constexpr int kMaxLoop = 1000;
// Launch scripts hold kilobytes; a value or a run past these is a runaway (A=$A$A ...), which
// bash would follow into memory exhaustion and the import refuses.
constexpr std::size_t kMaxValueBytes = 1 << 20;
constexpr std::size_t kMaxCommands = 100000;

class Interp {
public:
    Interp(const std::string& file, const ScriptOptions& options, const std::vector<bool>& choices)
        : options_(options), choices_(choices) {
        files_.push_back(file);
    }

    ScriptRun run(const std::string& text) {
        const shell::Lexed lexed = shell::lex_shell(text, file());
        sbatch(lexed);
        collect_assigned(lexed.tokens);
        NodePtrHolder tree = shell::parse_shell(lexed, file());
        try {
            exec(*tree);
        } catch (const ExitSignal& e) {
            run_.exit_line = e.line;
        }
        for (const auto& [name, v] : vars_) {
            auto& words = run_.variables[name];
            const int line = run_.variable_lines.count(name) ? run_.variable_lines.at(name) : 0;
            for (const auto& item : v.items) {
                std::istringstream in(item);
                std::string w;
                while (in >> w) words.push_back({shown(w), line, unknown_reason(w)});
            }
        }
        return std::move(run_);
    }

private:
    using NodePtrHolder = shell::NodePtr;

    const std::string& file() const { return files_.back(); }
    std::string at(int line) const {
        return (files_.size() > 1 ? std::filesystem::path(file()).filename().string() + " " : "") + "line " +
               std::to_string(line);
    }
    [[noreturn]] void fail(int line, const std::string& message) const {
        throw InputError(file(), "line " + std::to_string(line), message);
    }

    // ---- unknown values ----------------------------------------------------------------
    // `named`: the reason already names what --set supplies (a variable, an argument).
    std::string unknown(const std::string& shown, const std::string& reason, bool named = false) {
        unknowns_.push_back({shown, reason, named});
        return kUnknownPrefix + std::to_string(unknowns_.size() - 1) + "}";
    }
    // NAME=VALUE where VALUE has an unnamed unknown part (a command substitution): the part
    // is named after NAME, which --set can supply.
    std::string name_unknowns(const std::string& name, const std::string& value, int line) {
        std::string out;
        std::size_t i = 0;
        while (true) {
            const auto p = value.find(kUnknownPrefix, i);
            if (p == std::string::npos) break;
            const auto e = value.find('}', p);
            const std::size_t id = std::stoul(value.substr(p + std::char_traits<char>::length(kUnknownPrefix)));
            out += value.substr(i, p - i);
            if (id < unknowns_.size() && !unknowns_[id].named) {
                const std::string shown_text = unknowns_[id].shown;
                out += unknown(shown_text, name + " (" + at(line) + ") is set by '" + abbreviated(shown_text) +
                                               "', which import-args does not run: give its value with --set " +
                                               name + "=VALUE",
                               true);
            } else {
                out += value.substr(p, e + 1 - p);
            }
            i = e + 1;
        }
        return out + value.substr(i);
    }
    // The first unknown part of `s`: its reason, or empty.
    std::string unknown_reason(const std::string& s) const {
        const auto p = s.find(kUnknownPrefix);
        if (p == std::string::npos) return "";
        const std::size_t id = std::stoul(s.substr(p + std::char_traits<char>::length(kUnknownPrefix)));
        return id < unknowns_.size() ? unknowns_[id].reason : "";
    }
    // `s` with each unknown part shown as written in the script.
    std::string shown(const std::string& s) const {
        std::string out;
        std::size_t i = 0;
        while (true) {
            const auto p = s.find(kUnknownPrefix, i);
            if (p == std::string::npos) break;
            const auto e = s.find('}', p);
            const std::size_t id = std::stoul(s.substr(p + std::char_traits<char>::length(kUnknownPrefix)));
            out += s.substr(i, p - i) + (id < unknowns_.size() ? unknowns_[id].shown : "?");
            i = e + 1;
        }
        return out + s.substr(i);
    }

    // ---- #SBATCH and the variables SLURM sets from them -----------------------------------
    void sbatch(const shell::Lexed& lexed) {
        for (const auto& l : lexed.sbatch) {
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

    // Names the script assigns somewhere: unset there means empty, not "from the environment".
    void collect_assigned(const std::vector<Token>& tokens) {
        for (std::size_t k = 0; k < tokens.size(); ++k) {
            const Token& t = tokens[k];
            if (t.kind == Token::Array) assigned_.insert(t.text);
            if (t.kind != Token::Word) continue;
            const auto eq = t.text.find('=');
            if (eq != std::string::npos && eq > 0) {
                std::string name = t.text.substr(0, eq);
                if (!name.empty() && name.back() == '+') name.pop_back();
                if (const auto open = name.find('['); open != std::string::npos) name = name.substr(0, open);
                if (is_name(name)) assigned_.insert(name);
            }
            if (t.text == "for" && k + 1 < tokens.size()) assigned_.insert(tokens[k + 1].text);
        }
    }

    // ---- variables -------------------------------------------------------------------------
    void assign(const std::string& name, Var v, int line) {
        if (options_.set.count(name) != 0) return;  // --set wins over the script
        std::size_t bytes = 0;
        for (const auto& item : v.items) bytes += item.size();
        if (bytes > kMaxValueBytes) {
            fail(line, "the value of " + name + " grows past 1 MiB: a runaway expansion, not a launch script");
        }
        vars_[name] = std::move(v);
        run_.variable_lines[name] = line;
    }

    // ---- expansion -----------------------------------------------------------------------
    // Expands the raw word `w`; split: unquoted expansions are split on blanks (a command's
    // words), else one field (assignments). `line` for messages.
    std::vector<std::string> expand(const std::string& w, bool split, int line) {
        std::vector<std::string> out;
        std::size_t out_bytes = 0;
        std::string cur;
        const auto emit = [&](const std::string& field) {
            out_bytes += field.size() + 1;
            if (out_bytes > kMaxValueBytes) fail(line, "a word grows past 1 MiB: a runaway expansion, not a launch script");
            out.push_back(field);
        };
        bool has = false;  // the current field exists (quoted empty string counts)
        const auto push_split = [&](const std::string& value) {
            if (!split) {
                cur += value;
                if (!value.empty()) has = true;
                return;
            }
            std::size_t i = 0;
            while (i < value.size()) {
                const char c = value[i];
                if (c == ' ' || c == '\t' || c == '\n') {
                    if (has) emit(cur);
                    cur.clear();
                    has = false;
                    ++i;
                    continue;
                }
                cur += c;
                has = true;
                ++i;
            }
        };
        std::size_t i = 0;
        while (i < w.size()) {
            if (cur.size() + out_bytes > kMaxValueBytes) {
                fail(line, "a word grows past 1 MiB: a runaway expansion, not a launch script");
            }
            const char c = w[i];
            if (c == '\\') {
                if (i + 1 < w.size()) cur += w[i + 1];
                has = true;
                i += 2;
                continue;
            }
            if (c == '\'') {
                const auto end = w.find('\'', i + 1);
                cur += w.substr(i + 1, end - i - 1);
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
                    if (d == '\\' && i + 1 < w.size()) {
                        const char e = w[i + 1];
                        if (e == '\n') {
                        } else if (e == '"' || e == '\\' || e == '$' || e == '`') {
                            cur += e;
                        } else {
                            cur += d;
                            cur += e;
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
                                cur += x.items[k];
                                if (k + 1 < x.items.size()) {
                                    emit(cur);
                                    cur.clear();
                                }
                                has = true;
                            }
                        } else {
                            at_only = false;
                            cur += x.items.empty() ? "" : x.items.front();
                        }
                        continue;
                    }
                    cur += d;
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
                        if (has) emit(cur);
                        cur.clear();
                        has = false;
                    } else if (x.multi && k + 1 < x.items.size()) {
                        cur += ' ';
                    }
                }
                continue;
            }
            cur += c;
            has = true;
            ++i;
        }
        if (has) emit(cur);
        if (!split) return {out.empty() ? std::string() : [&] {
            std::string joined;
            for (std::size_t k = 0; k < out.size(); ++k) joined += (k ? " " : "") + out[k];
            return joined;
        }()};
        return out;
    }

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
        std::vector<std::string> items;
        bool multi = false;  // "$@"-like: items are separate fields
    };

    Expansion one(std::string s) { return {{std::move(s)}, false}; }

    Expansion expand_dollar(const std::string& x, int line) {
        if (x == "$") return one("$");
        if (x[0] == '`' || (x.size() > 2 && x[1] == '(' && x[2] != '(')) {
            return one(unknown(x, "'" + abbreviated(x) + "' (" + at(line) +
                                      ") is a command substitution, which import-args does not run"));
        }
        if (x.size() > 3 && x[1] == '(' && x[2] == '(') {
            return one(arithmetic(x.substr(3, x.size() - 5), x, line));
        }
        if (x[1] == '{') return braced(x.substr(2, x.size() - 3), x, line);
        return parameter(x.substr(1), x, line, false);
    }

    static std::string abbreviated(const std::string& s) {
        std::string one_line;
        for (char c : s) one_line += c == '\n' ? ' ' : c;
        return one_line.size() > 60 ? one_line.substr(0, 57) + "..." : one_line;
    }

    // The reason a variable the script never sets is unknown.
    std::string env_reason(const std::string& name, const std::string& shown_text, int line) const {
        if (is_number(name)) {
            return "'" + shown_text + "' (" + at(line) + ") is the script's argument " + name +
                   ": give its value with --set " + name + "=VALUE";
        }
        return "'" + shown_text + "' (" + at(line) + "): " + name +
               " is not set in the script (its value comes from the environment): give it with --set " +
               name + "=VALUE";
    }

    // $NAME, $1, $@ ... `name` without the '$'.
    Expansion parameter(const std::string& name, const std::string& shown_text, int line, bool) {
        if (name == "@" || name == "*") {
            std::vector<std::string> items;
            for (std::size_t k = 1; k <= positional_.size(); ++k) items.push_back(positional_[k - 1]);
            return {items, name == "@"};
        }
        if (name == "#") return one(std::to_string(positional_.size()));
        if (name == "?") return one("0");
        if (name == "0") return one(file());
        if (name == "$" || name == "!" || name == "-") {
            return one(unknown(shown_text, "'" + shown_text + "' (" + at(line) + ") is a process value"));
        }
        if (const Var* v = value_of(name)) return one(v->items.empty() ? "" : v->items.front());
        if (name.rfind("__meshwork_unknown_", 0) == 0) return one("${" + name + "}");
        if (is_number(name) || assigned_.count(name) == 0) {
            return one(unknown(shown_text, env_reason(name, shown_text, line), true));
        }
        return one("");
    }

    // The variable `name` as the script sees it: --set, the script's own, positional
    // arguments given with --set, SLURM's variables from #SBATCH; nullptr when unset.
    const Var* value_of(const std::string& name) {
        if (const auto s = options_.set.find(name); s != options_.set.end()) {
            scratch_ = {false, {s->second}};
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
            scratch_ = {false, {e->second}};
            return &scratch_;
        }
        return nullptr;
    }

    Expansion braced(const std::string& inner, const std::string& shown_text, int line) {
        if (inner.rfind("__meshwork_unknown_", 0) == 0) return one("${" + inner + "}");
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
        if (name == "@" || name == "*") return parameter(name, shown_text, line, true);
        const Var* v = value_of(name);
        const bool known_unset = v == nullptr && !is_number(name) && assigned_.count(name) != 0;
        const bool env = v == nullptr && !known_unset;  // the environment's, unknown
        if (length) {
            if (!rest.empty()) return unsupported(shown_text, line);
            if (env) return one(unknown(shown_text, env_reason(name, shown_text, line), true));
            if (v == nullptr) return one("0");
            if (index == "@" || index == "*") return one(std::to_string(v->items.size()));
            return one(std::to_string(v->items.empty() ? 0 : v->items.front().size()));
        }
        // The value, as items.
        Expansion value;
        bool set = v != nullptr;
        bool empty = true;
        if (v != nullptr) {
            if (index == "@" || index == "*") {
                value.items = v->items;
                value.multi = index == "@";
            } else if (!index.empty()) {
                long long k = 0;
                const std::string e = arithmetic(index, shown_text, line);
                if (!unknown_reason(e).empty()) return one(e);
                k = std::stoll(e);
                set = k >= 0 && static_cast<std::size_t>(k) < v->items.size();
                value = one(set ? v->items[static_cast<std::size_t>(k)] : "");
            } else {
                value = one(v->items.empty() ? "" : v->items.front());
            }
            for (const auto& it : value.items) empty = empty && it.empty();
        }
        if (rest.empty()) {
            if (env) return one(unknown(shown_text, env_reason(name, shown_text, line), true));
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
            if (env) return one(unknown(shown_text, env_reason(name, shown_text, line), true));
            if (value.multi || value.items.size() > 1) return unsupported(shown_text, line);
            const std::string text = value.items.empty() ? "" : value.items.front();
            if (!unknown_reason(text).empty()) return one(text);
            std::string out;
            if (transform(text, rest, line, out)) return one(out);
            return unsupported(shown_text, line);
        }
        const std::string word = rest.substr(op.size());
        const bool colon = op[0] == ':';
        const bool use_default = !set || (colon && empty);
        const char kind = op.back();
        if (kind == '-' || kind == '=') {
            // The default is taken as written: an unset variable is the script's default.
            if (!use_default) return value;
            const std::string d = expand(word, false, line).front();
            if (kind == '=') assign(name, {false, {d}}, line);
            return one(d);
        }
        if (kind == '+') {
            if (env) return one(unknown(shown_text, env_reason(name, shown_text, line), true));
            if (use_default) return one("");
            return one(expand(word, false, line).front());
        }
        // ${VAR?message}: an error when unset.
        if (env) return one(unknown(shown_text, env_reason(name, shown_text, line), true));
        return value;
    }

    // The string operators of a braced expansion on a known value; false when not one.
    bool transform(const std::string& v, const std::string& rest, int line, std::string& out) {
        const auto pattern = [&](const std::string& raw) { return expand(raw, false, line).front(); };
        const auto matches = [](const std::string& pat, const std::string& text) {
            return fnmatch(pat.c_str(), text.c_str(), 0) == 0;
        };
        if (rest == ",," || rest == "^^") {
            out = v;
            for (char& c : out) {
                c = static_cast<char>(rest == ",," ? std::tolower(static_cast<unsigned char>(c))
                                                   : std::toupper(static_cast<unsigned char>(c)));
            }
            return true;
        }
        // Pattern matching tries every substring: kept to values a script really holds.
        constexpr std::size_t kMaxPatternValue = 4096;
        if ((rest[0] == '#' || rest[0] == '%' || rest[0] == '/') && v.size() > kMaxPatternValue) return false;
        if (rest[0] == '#' || rest[0] == '%') {
            const bool longest = rest.size() > 1 && rest[1] == rest[0];
            const std::string pat = pattern(rest.substr(longest ? 2 : 1));
            const bool prefix = rest[0] == '#';
            out = v;
            for (std::size_t n = 0; n <= v.size(); ++n) {
                const std::size_t len = longest ? v.size() - n : n;
                const std::string part = prefix ? v.substr(0, len) : v.substr(v.size() - len);
                if (matches(pat, part)) {
                    out = prefix ? v.substr(len) : v.substr(0, v.size() - len);
                    return true;
                }
            }
            return true;
        }
        if (rest[0] == '/') {
            const bool all = rest.size() > 1 && rest[1] == '/';
            const std::string body = rest.substr(all ? 2 : 1);
            const auto slash = body.find('/');
            const std::string pat = pattern(body.substr(0, slash));
            const std::string rep = slash == std::string::npos ? "" : pattern(body.substr(slash + 1));
            out.clear();
            std::size_t i = 0;
            bool replaced = false;
            while (i <= v.size()) {
                std::size_t best = std::string::npos;
                if (!(replaced && !all) && !pat.empty()) {
                    for (std::size_t len = v.size() - i; len > 0 && len != std::string::npos; --len) {
                        if (matches(pat, v.substr(i, len))) {
                            best = len;
                            break;
                        }
                    }
                }
                if (best != std::string::npos) {
                    out += rep;
                    i += best;
                    replaced = true;
                } else {
                    if (i < v.size()) out += v[i];
                    ++i;
                }
            }
            return true;
        }
        if (rest[0] == ':' && rest.size() > 1) {
            const auto colon = rest.find(':', 1);
            const std::string off_s = arithmetic(rest.substr(1, colon == std::string::npos ? std::string::npos : colon - 1),
                                                 rest, line);
            const std::string len_s = colon == std::string::npos ? "" : arithmetic(rest.substr(colon + 1), rest, line);
            if (!unknown_reason(off_s).empty() || !unknown_reason(len_s).empty()) return false;
            long long off = std::stoll(off_s);
            if (off < 0) off += static_cast<long long>(v.size());
            off = std::clamp<long long>(off, 0, static_cast<long long>(v.size()));
            long long len = len_s.empty() ? static_cast<long long>(v.size()) - off : std::stoll(len_s);
            if (len < 0) len = std::max<long long>(0, static_cast<long long>(v.size()) - off + len);
            out = v.substr(static_cast<std::size_t>(off), static_cast<std::size_t>(len));
            return true;
        }
        return false;
    }

    Expansion unsupported(const std::string& shown_text, int line) {
        return one(unknown(shown_text, "'" + shown_text + "' (" + at(line) +
                                           ") is a parameter expansion import-args does not "
                                           "interpret: give the variable's value with --set"));
    }

    // ---- $(( ... )) -------------------------------------------------------------------------
    std::string arithmetic(const std::string& expr_raw, const std::string& shown_text, int line) {
        // Parameters inside are expanded first, as bash does.
        const std::string expr = expand("\"" + escape_quotes(expr_raw) + "\"", false, line).front();
        if (const std::string r = unknown_reason(expr); !r.empty()) return unknown(shown_text, r);
        Arith a{*this, expr, 0, line, "", ""};
        const std::optional<long long> v = a.parse_expr();
        a.skip();
        if (!a.error.empty() || !v || a.i != expr.size()) {
            if (!a.unknown.empty()) return unknown(shown_text, a.unknown);
            return unknown(shown_text, "'" + shown_text + "' (" + at(line) + ") is not an integer expression" +
                                           (a.error.empty() ? "" : " (" + a.error + ")"));
        }
        return std::to_string(*v);
    }
    static std::string escape_quotes(const std::string& s) {
        std::string out;
        for (char c : s) {
            if (c == '"') out += '\\';
            out += c;
        }
        return out;
    }

    struct Arith {
        Interp& in;
        const std::string& s;
        std::size_t i;
        int line;
        std::string error;
        std::string unknown;

        void skip() {
            while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) != 0) ++i;
        }
        bool eat(const char* op) {
            skip();
            const std::string o(op);
            if (s.compare(i, o.size(), o) != 0) return false;
            // '<' must not eat the first character of '<='
            if (o.size() == 1 && i + 1 < s.size() && (o == "<" || o == ">" || o == "=" || o == "!") && s[i + 1] == '=') return false;
            if (o == "*" && i + 1 < s.size() && s[i + 1] == '*') return false;
            if ((o == "&" || o == "|") && i + 1 < s.size() && s[i + 1] == o[0]) return false;
            i += o.size();
            return true;
        }
        std::optional<long long> parse_expr() {
            auto c = parse_or();
            if (!c) return c;
            if (eat("?")) {
                auto a = parse_expr();
                if (!eat(":")) {
                    error = "expected ':'";
                    return std::nullopt;
                }
                auto b = parse_expr();
                if (!a || !b) return std::nullopt;
                return *c != 0 ? a : b;
            }
            return c;
        }
        std::optional<long long> parse_or() {
            auto a = parse_and();
            while (a && eat("||")) {
                auto b = parse_and();
                if (!b) return b;
                a = (*a != 0 || *b != 0) ? 1 : 0;
            }
            return a;
        }
        std::optional<long long> parse_and() {
            auto a = parse_cmp();
            while (a && eat("&&")) {
                auto b = parse_cmp();
                if (!b) return b;
                a = (*a != 0 && *b != 0) ? 1 : 0;
            }
            return a;
        }
        std::optional<long long> parse_cmp() {
            auto a = parse_add();
            while (a) {
                std::optional<long long> b;
                if (eat("==")) { b = parse_add(); if (b) a = *a == *b; }
                else if (eat("!=")) { b = parse_add(); if (b) a = *a != *b; }
                else if (eat("<=")) { b = parse_add(); if (b) a = *a <= *b; }
                else if (eat(">=")) { b = parse_add(); if (b) a = *a >= *b; }
                else if (eat("<")) { b = parse_add(); if (b) a = *a < *b; }
                else if (eat(">")) { b = parse_add(); if (b) a = *a > *b; }
                else break;
                if (!b) return b;
            }
            return a;
        }
        std::optional<long long> parse_add() {
            auto a = parse_mul();
            while (a) {
                if (eat("+")) {
                    auto b = parse_mul();
                    if (!b) return b;
                    a = *a + *b;
                } else if (eat("-")) {
                    auto b = parse_mul();
                    if (!b) return b;
                    a = *a - *b;
                } else {
                    break;
                }
            }
            return a;
        }
        std::optional<long long> parse_mul() {
            auto a = parse_unary();
            while (a) {
                const bool mul = eat("*");
                const bool div = !mul && eat("/");
                const bool mod = !mul && !div && eat("%");
                if (!mul && !div && !mod) break;
                auto b = parse_unary();
                if (!b) return b;
                if ((div || mod) && *b == 0) {
                    error = "division by zero";
                    return std::nullopt;
                }
                a = mul ? *a * *b : div ? *a / *b : *a % *b;
            }
            return a;
        }
        std::optional<long long> parse_unary() {
            if (eat("-")) {
                auto a = parse_unary();
                return a ? std::optional<long long>(-*a) : a;
            }
            if (eat("+")) return parse_unary();
            if (eat("!")) {
                auto a = parse_unary();
                return a ? std::optional<long long>(*a == 0 ? 1 : 0) : a;
            }
            return parse_primary();
        }
        std::optional<long long> parse_primary() {
            skip();
            if (eat("(")) {
                auto a = parse_expr();
                if (!eat(")")) {
                    error = "expected ')'";
                    return std::nullopt;
                }
                return a;
            }
            const std::size_t start = i;
            if (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) {
                while (i < s.size() && std::isalnum(static_cast<unsigned char>(s[i])) != 0) ++i;
                long long v = 0;
                const std::string t = s.substr(start, i - start);
                try {
                    std::size_t used = 0;
                    v = std::stoll(t, &used, 0);
                    if (used != t.size()) throw std::invalid_argument(t);
                } catch (const std::exception&) {
                    error = "'" + t + "' is not a number";
                    return std::nullopt;
                }
                return v;
            }
            while (i < s.size() && is_name_char(s[i])) ++i;
            if (i == start) {
                error = "expected a number";
                return std::nullopt;
            }
            // A variable name without '$': its value, itself an expression (0 when empty).
            const std::string name = s.substr(start, i - start);
            const std::string value = in.expand("\"$" + name + "\"", false, line).front();
            if (const std::string r = in.unknown_reason(value); !r.empty()) {
                unknown = r;
                return std::nullopt;
            }
            if (value.empty()) return 0;
            long long out = 0;
            try {
                out = std::stoll(value);
            } catch (const std::exception&) {
                error = name + "='" + value + "' is not a number";
                return std::nullopt;
            }
            return out;
        }
    };

    // ---- execution -----------------------------------------------------------------------
    Status exec(const Node& n) {
        switch (n.kind) {
            case Node::List: {
                Status s;
                for (const auto& k : n.kids) s = exec(*k);
                return s;
            }
            case Node::AndOr: return exec_and_or(n);
            case Node::Pipeline: {
                Status s;
                for (const auto& k : n.kids) s = exec(*k);
                if (n.negate) s.tri = s.tri == Tri::True ? Tri::False : s.tri == Tri::False ? Tri::True : Tri::Unknown;
                return s;
            }
            case Node::If: return exec_if(n);
            case Node::For: return exec_for(n);
            case Node::While:
                run_.notes.push_back(at(n.line) + ": a while/until loop, not followed (import-args runs no loops on unknown conditions)");
                return {};
            case Node::Case: return exec_case(n);
            case Node::Subshell: {
                const auto saved = vars_;
                const Status s = exec(*n.kids[0]);
                vars_ = saved;
                return s;
            }
            case Node::Group: return exec(*n.kids[0]);
            case Node::Function:
                functions_[n.name] = n.kids[0].get();
                return {};
            case Node::Simple: return exec_simple(n);
        }
        return {};
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

    Status exec_for(const Node& n) {
        std::vector<std::string> items;
        if (n.has_in) {
            for (const auto& w : n.words) {
                for (auto& f : expand(w.text, true, w.line)) items.push_back(std::move(f));
            }
        } else {
            items = positional_;
        }
        for (const auto& it : items) {
            if (const std::string r = unknown_reason(it); !r.empty()) {
                run_.notes.push_back(at(n.line) + ": the for-loop over unknown words was not run (" + r + ")");
                return {};
            }
        }
        if (items.size() > kMaxLoop) fail(n.line, "a for-loop over more than 1000 words");
        Status s;
        for (const auto& it : items) {
            assign(n.name, {false, {it}}, n.line);
            s = exec(*n.kids[0]);
        }
        return s;
    }

    Status exec_case(const Node& n) {
        const std::string word = expand(n.name, false, n.line).front();
        const std::string r = unknown_reason(word);
        for (std::size_t c = 0; c < n.patterns.size(); ++c) {
            bool matched = false;
            for (const auto& p : n.patterns[c]) {
                const std::string pat = expand(p, false, n.line).front();
                if (!r.empty()) continue;
                matched = matched || fnmatch(pat.c_str(), word.c_str(), 0) == 0;
            }
            if (!r.empty()) {
                std::string cond = n.name + " matches";
                for (const auto& p : n.patterns[c]) cond += " " + p;
                matched = decide(n.line, cond, r);
            }
            if (matched) return exec(*n.kids[c]);
        }
        return {};
    }

    bool is_assignment(const Token& t) const {
        if (t.kind == Token::Array) return true;
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

    void do_assignment(const Token& t) {
        if (t.kind == Token::Array) {
            Var v;
            v.array = true;
            if (t.append) {
                if (const Var* old = value_of(t.text)) v.items = old->items;
            }
            for (const auto& item : t.items) {
                for (auto& f : expand(item, true, t.line)) v.items.push_back(name_unknowns(t.text, f, t.line));
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
            const std::string index = arithmetic(name.substr(open + 1, name.size() - open - 2), name, t.line);
            const std::string value = expand(t.text.substr(eq + 1), false, t.line).front();
            Var v;
            v.array = true;
            if (const Var* old = value_of(array)) v = *old;
            if (!unknown_reason(index).empty() || std::stoll(index) < 0 || std::stoll(index) > kMaxLoop) {
                v = {true, {unknown(name, array + " (" + at(t.line) + ") is indexed by '" + name +
                                              "', which import-args does not follow: give it with --set " + array + "=VALUE",
                                    true)}};
            } else {
                const auto k = static_cast<std::size_t>(std::stoll(index));
                if (v.items.size() <= k) v.items.resize(k + 1);
                v.items[k] = append ? v.items[k] + value : value;
            }
            v.array = true;
            assign(array, std::move(v), t.line);
            return;
        }
        std::string value = name_unknowns(name, expand(t.text.substr(eq + 1), false, t.line).front(), t.line);
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

    Status exec_simple(const Node& n) {
        std::size_t k = 0;
        std::vector<std::string> env;
        while (k < n.words.size() && is_assignment(n.words[k])) ++k;
        if (k == n.words.size()) {
            for (const auto& t : n.words) do_assignment(t);
            return {};
        }
        for (std::size_t a = 0; a < k; ++a) env.push_back(n.words[a].text);
        const std::string cmd_name = expand(n.words[k].text, false, n.words[k].line).front();
        // Builtins that take assignments as words.
        if (cmd_name == "export" || cmd_name == "declare" || cmd_name == "typeset" || cmd_name == "local" ||
            cmd_name == "readonly") {
            for (std::size_t a = k + 1; a < n.words.size(); ++a) {
                if (!is_assignment(n.words[a])) continue;
                do_assignment(n.words[a]);
                if (cmd_name == "export" && n.words[a].kind == Token::Word) {
                    const std::string name = n.words[a].text.substr(0, n.words[a].text.find('='));
                    const Var* v = value_of(name);
                    run_.exports.emplace_back(n.line, name + "=" + shown(v != nullptr && !v->items.empty() ? v->items.front() : ""));
                }
            }
            return {};
        }
        std::vector<std::string> fields;
        for (std::size_t a = k; a < n.words.size(); ++a) {
            if (n.words[a].kind == Token::Array) continue;
            for (auto& f : expand(n.words[a].text, true, n.words[a].line)) fields.push_back(std::move(f));
        }
        if (fields.empty()) return {};
        const std::string& name = fields[0];
        if (name == "unset") {
            for (std::size_t a = 1; a < fields.size(); ++a) {
                if (fields[a][0] != '-' && options_.set.count(fields[a]) == 0) vars_.erase(fields[a]);
            }
            return {};
        }
        if (name == "exit") {
            // `exit` and `exit 0` end the script normally; another status is an error exit.
            const bool error_exit = fields.size() > 1 && fields[1] != "0";
            throw ExitSignal{error_exit ? n.line : 0};
        }
        // Builtins without an effect on what is launched.
        if (name == "set" || name == ":" || name == "true" || name == "cd" || name == "pushd" ||
            name == "popd" || name == "echo" || name == "printf" || name == "wait" || name == "sleep" ||
            name == "return") {
            return {};
        }
        if (name == "false") return {Tri::False, ""};
        if (name == "shift") {
            if (!positional_.empty()) positional_.erase(positional_.begin());
            return {};
        }
        if (name == "test" || name == "[" || name == "[[") return test(n, k);
        if (name == "." || name == "source") return source(fields, n.line);
        if (name == "eval") {
            std::string text;
            for (std::size_t a = 1; a < fields.size(); ++a) text += (a > 1 ? " " : "") + fields[a];
            return nested(text, n.line);
        }
        if ((name == "sh" || name == "bash") && fields.size() >= 3 && fields[1] == "-c") {
            return nested(fields[2], n.line);
        }
        // `srun [opts] sh -c "$cmd"`, `env X=1 bash -c ...`: the string's commands run under
        // the words before the shell (srun's options are the world size).
        for (std::size_t at = 1; at + 2 < fields.size(); ++at) {
            const std::string base = std::filesystem::path(fields[at]).filename().string();
            if ((base == "sh" || base == "bash") && fields[at + 1] == "-c") {
                const auto saved = prefix_;
                prefix_.insert(prefix_.end(), fields.begin(), fields.begin() + static_cast<std::ptrdiff_t>(at));
                const Status st = nested(fields[at + 2], n.line);
                prefix_ = saved;
                return st;
            }
        }
        if (const auto f = functions_.find(name); f != functions_.end()) {
            if (++depth_ > kMaxDepth) fail(n.line, "functions nested too deeply");
            const auto saved = positional_;
            positional_.assign(fields.begin() + 1, fields.end());
            const Status s = exec(*f->second);
            positional_ = saved;
            --depth_;
            return s;
        }
        ScriptCommand c;
        c.env = env;
        c.file = file();
        c.line = n.line;
        std::vector<std::string> all = prefix_;
        all.insert(all.end(), fields.begin(), fields.end());
        for (const auto& f : all) {
            ScriptWord w;
            w.text = shown(f);
            w.line = n.line;
            w.unresolved = unknown_reason(f);
            c.words.push_back(std::move(w));
        }
        if (run_.commands.size() >= kMaxCommands) fail(n.line, "more than 100000 commands: a runaway script");
        run_.commands.push_back(std::move(c));
        return {};  // commands are taken to succeed, as the script's author intends
    }

    Status nested(const std::string& text, int line) {
        if (++depth_ > kMaxDepth) fail(line, "eval/sh -c nested too deeply");
        shell::Lexed lexed = shell::lex_shell(text, file());
        for (auto& t : lexed.tokens) t.line = line;  // the eval'd text is on the eval's line
        collect_assigned(lexed.tokens);
        trees_.push_back(shell::parse_shell(lexed, file()));
        const Status s = exec(*trees_.back());
        --depth_;
        return s;
    }

    Status source(const std::vector<std::string>& fields, int line) {
        if (fields.size() < 2) fail(line, "'" + fields[0] + "' without a file");
        const std::string& target = fields[1];
        const std::string shown_target = shown(target);
        std::string base = shown_target;
        if (const auto slash = base.find_last_of('/'); slash != std::string::npos) base = base.substr(slash + 1);
        const auto it = options_.sources.find(base);
        if (it == options_.sources.end()) {
            run_.notes.push_back(at(line) + ": the sourced file " + shown_target +
                                 " was not read (give it with --source " + base + "=PATH)");
            return {};
        }
        if (++depth_ > kMaxDepth) fail(line, "files sourced too deeply");
        std::ifstream in(it->second, std::ios::binary);
        if (!in) throw InputError("<flags>", "--source", "cannot read " + it->second);
        std::ostringstream text;
        text << in.rdbuf();
        files_.push_back(it->second);
        const shell::Lexed lexed = shell::lex_shell(text.str(), file());
        collect_assigned(lexed.tokens);
        trees_.push_back(shell::parse_shell(lexed, file()));
        const Status s = exec(*trees_.back());
        files_.pop_back();
        --depth_;
        return s;
    }

    // ---- [ ... ], [[ ... ]], test -----------------------------------------------------------
    Status test(const Node& n, std::size_t k) {
        const bool dbl = n.words[k].text == "[[";
        std::vector<std::string> args;
        for (std::size_t a = k + 1; a < n.words.size(); ++a) {
            if (dbl) {
                const std::string& raw = n.words[a].text;
                if (raw == "&&" || raw == "||" || raw == "(" || raw == ")" || raw == "!" || raw == "<" || raw == ">") {
                    args.push_back(raw);
                } else {
                    args.push_back(expand(raw, false, n.line).front());
                }
            } else {
                for (auto& f : expand(n.words[a].text, true, n.line)) args.push_back(std::move(f));
            }
        }
        if (!args.empty() && (args.back() == "]" || args.back() == "]]")) args.pop_back();
        std::size_t i = 0;
        Status s = test_or(args, i, dbl, n.line);
        if (i != args.size() && s.tri != Tri::Unknown) {
            return {Tri::False, ""};  // a malformed test fails in bash too
        }
        return s;
    }
    Status test_or(const std::vector<std::string>& a, std::size_t& i, bool dbl, int line) {
        Status l = test_and(a, i, dbl, line);
        while (i < a.size() && (a[i] == (dbl ? "||" : "-o"))) {
            ++i;
            const Status r = test_and(a, i, dbl, line);
            if (l.tri == Tri::True || r.tri == Tri::True) l = {Tri::True, ""};
            else if (l.tri == Tri::Unknown) {}
            else l = r;
        }
        return l;
    }
    Status test_and(const std::vector<std::string>& a, std::size_t& i, bool dbl, int line) {
        Status l = test_not(a, i, dbl, line);
        while (i < a.size() && (a[i] == (dbl ? "&&" : "-a"))) {
            ++i;
            const Status r = test_not(a, i, dbl, line);
            if (l.tri == Tri::False || r.tri == Tri::False) l = {Tri::False, ""};
            else if (l.tri == Tri::Unknown) {}
            else l = r;
        }
        return l;
    }
    Status test_not(const std::vector<std::string>& a, std::size_t& i, bool dbl, int line) {
        if (i < a.size() && a[i] == "!" && i + 1 < a.size()) {
            ++i;
            Status s = test_not(a, i, dbl, line);
            if (s.tri != Tri::Unknown) s.tri = s.tri == Tri::True ? Tri::False : Tri::True;
            return s;
        }
        return test_primary(a, i, dbl, line);
    }
    Status test_primary(const std::vector<std::string>& a, std::size_t& i, bool dbl, int line) {
        if (i >= a.size()) return {Tri::False, ""};
        if (a[i] == "(" ) {
            ++i;
            Status s = test_or(a, i, dbl, line);
            if (i < a.size() && a[i] == ")") ++i;
            return s;
        }
        static const std::set<std::string> kBinary = {"=", "==", "!=", "<", ">", "-eq", "-ne", "-lt",
                                                      "-le", "-gt", "-ge", "=~", "-nt", "-ot", "-ef"};
        if (i + 2 < a.size() && kBinary.count(a[i + 1]) != 0) {
            const std::string& l = a[i];
            const std::string& op = a[i + 1];
            const std::string& r = a[i + 2];
            i += 3;
            for (const std::string* v : {&l, &r}) {
                if (const std::string why = unknown_reason(*v); !why.empty()) return {Tri::Unknown, why};
            }
            if (op == "=" || op == "==") return {bool_tri(dbl ? fnmatch(r.c_str(), l.c_str(), 0) == 0 : l == r), ""};
            if (op == "!=") return {bool_tri(dbl ? fnmatch(r.c_str(), l.c_str(), 0) != 0 : l != r), ""};
            if (op == "=~" && dbl && r.size() <= 256 && l.size() <= 4096) {  // bounded: backtracking
                // [[ s =~ ERE ]]: POSIX extended regular expressions.
                try {
                    return {bool_tri(std::regex_search(l, std::regex(r, std::regex::extended))), ""};
                } catch (const std::regex_error&) {
                    return {Tri::False, ""};  // bash: an invalid pattern fails the test
                }
            }
            if (op == "<") return {bool_tri(l < r), ""};
            if (op == ">") return {bool_tri(l > r), ""};
            if (op[0] == '-' && op.size() == 3) {
                long long x = 0, y = 0;
                if (!integer(l, x) || !integer(r, y)) {
                    return {Tri::False, ""};  // bash: "integer expression expected", the test fails
                }
                if (op == "-eq") return {bool_tri(x == y), ""};
                if (op == "-ne") return {bool_tri(x != y), ""};
                if (op == "-lt") return {bool_tri(x < y), ""};
                if (op == "-le") return {bool_tri(x <= y), ""};
                if (op == "-gt") return {bool_tri(x > y), ""};
                if (op == "-ge") return {bool_tri(x >= y), ""};
            }
            return {Tri::Unknown, "'" + shown(l) + " " + op + " " + shown(r) + "' (" + at(line) +
                                      ") compares files or patterns on the machine that runs it"};
        }
        if (a[i].size() == 2 && a[i][0] == '-' && i + 1 < a.size()) {
            const std::string op = a[i];
            const std::string& v = a[i + 1];
            i += 2;
            if (op == "-z" || op == "-n") {
                if (const std::string why = unknown_reason(v); !why.empty()) return {Tri::Unknown, why};
                return {bool_tri(op == "-z" ? v.empty() : !v.empty()), ""};
            }
            return {Tri::Unknown, "'" + op + " " + shown(v) + "' (" + at(line) +
                                      ") tests the machine that runs the script"};
        }
        const std::string& v = a[i++];
        if (const std::string why = unknown_reason(v); !why.empty()) return {Tri::Unknown, why};
        return {bool_tri(!v.empty()), ""};
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
    std::vector<std::string> files_;
    std::map<std::string, Var> vars_;
    std::map<std::string, std::string> slurm_env_;
    std::set<std::string> assigned_;
    std::vector<std::string> positional_;
    struct Unknown {
        std::string shown;   // as written in the script
        std::string reason;
        bool named = false;
    };
    std::vector<Unknown> unknowns_;
    std::map<std::string, const Node*> functions_;
    std::vector<shell::NodePtr> trees_;
    std::vector<std::string> prefix_;  // words a `srun ... sh -c STRING` puts before STRING's commands
    Var scratch_;
    int depth_ = 0;
    ScriptRun run_;
};

}  // namespace

ScriptRun run_shell_script(const std::string& text, const std::string& file,
                           const ScriptOptions& options, const std::vector<bool>& choices) {
    return Interp(file, options, choices).run(text);
}

void explore_shell_script(const std::string& text, const std::string& file,
                          const ScriptOptions& options, int max_runs,
                          const std::function<void(const ScriptRun&)>& visit) {
    std::vector<bool> choices;
    for (int runs = 0;; ++runs) {
        const ScriptRun run = run_shell_script(text, file, options, choices);
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
