#include "core/export/shell_match.h"

#include <algorithm>
#include <cctype>
#include <memory>

namespace meshwork::shell {

namespace {

using Set = std::bitset<256>;

// Budget units of one character read and of one state stepped: measured against the
// interpreter's other work, a unit being ~4 ns (bench: import-args on
// tests/fixtures/hostile/megatron-long-replace.sh and megatron-nested-loops.sh spend the
// budget in about the same time).
constexpr long long kCharUnits = 8;
constexpr long long kStateUnits = 4;

Set class_set(const std::string& name, bool& ok) {
    Set s;
    ok = true;
    for (int c = 0; c < 256; ++c) {
        bool in = false;
        if (name == "alpha") in = std::isalpha(c) != 0;
        else if (name == "digit") in = std::isdigit(c) != 0;
        else if (name == "alnum") in = std::isalnum(c) != 0;
        else if (name == "upper") in = std::isupper(c) != 0;
        else if (name == "lower") in = std::islower(c) != 0;
        else if (name == "space") in = std::isspace(c) != 0;
        else if (name == "blank") in = c == ' ' || c == '\t';
        else if (name == "punct") in = std::ispunct(c) != 0;
        else if (name == "xdigit") in = std::isxdigit(c) != 0;
        else if (name == "print") in = std::isprint(c) != 0;
        else if (name == "graph") in = std::isgraph(c) != 0;
        else if (name == "cntrl") in = std::iscntrl(c) != 0;
        else if (name == "word") in = std::isalnum(c) != 0 || c == '_';
        else ok = false;
        if (c < 128) s[static_cast<std::size_t>(c)] = in;
    }
    return s;
}

// A bracket expression starting after '[' at p[i]; returns false (and leaves i) when it is
// not closed, so that the '[' is an ordinary character. `bang`: '!' negates too (globs).
bool bracket(const std::string& p, std::size_t& i, bool bang, bool escapes, Set& out) {
    std::size_t k = i;
    bool negate = false;
    if (k < p.size() && (p[k] == '^' || (bang && p[k] == '!'))) {
        negate = true;
        ++k;
    }
    Set s;
    bool first = true;
    while (k < p.size()) {
        unsigned char c = static_cast<unsigned char>(p[k]);
        if (c == ']' && !first) {
            out = negate ? ~s : s;
            i = k + 1;
            return true;
        }
        first = false;
        if (c == '[' && k + 1 < p.size() && p[k + 1] == ':') {
            const auto end = p.find(":]", k + 2);
            if (end != std::string::npos) {
                bool ok = false;
                const Set cls = class_set(p.substr(k + 2, end - k - 2), ok);
                if (ok) {
                    s |= cls;
                    k = end + 2;
                    continue;
                }
            }
        }
        if (escapes && c == '\\' && k + 1 < p.size()) {
            ++k;
            c = static_cast<unsigned char>(p[k]);
        }
        if (k + 2 < p.size() && p[k + 1] == '-' && p[k + 2] != ']') {
            unsigned char hi = static_cast<unsigned char>(p[k + 2]);
            std::size_t adv = 3;
            if (escapes && hi == '\\' && k + 3 < p.size()) {
                hi = static_cast<unsigned char>(p[k + 3]);
                adv = 4;
            }
            for (unsigned v = c; v <= hi; ++v) s[v] = true;
            k += adv;
            continue;
        }
        s[c] = true;
        ++k;
    }
    return false;
}

Set one(unsigned char c) {
    Set s;
    s[c] = true;
    return s;
}

}  // namespace

// ---- globs ---------------------------------------------------------------------------------

Glob::Glob(const std::string& p) {
    for (std::size_t i = 0; i < p.size();) {
        const char c = p[i];
        if (c == '*') {
            if (elems_.empty() || elems_.back().kind != Elem::Star) elems_.push_back({Elem::Star, {}});
            ++i;
        } else if (c == '?') {
            elems_.push_back({Elem::Set, Set().set()});
            ++i;
        } else if (c == '[') {
            std::size_t k = i + 1;
            Set s;
            if (bracket(p, k, true, true, s)) {
                elems_.push_back({Elem::Set, s});
                i = k;
            } else {
                elems_.push_back({Elem::Set, one('[')});
                ++i;
            }
        } else if (c == '\\' && i + 1 < p.size()) {
            elems_.push_back({Elem::Set, one(static_cast<unsigned char>(p[i + 1]))});
            i += 2;
        } else {
            elems_.push_back({Elem::Set, one(static_cast<unsigned char>(c))});
            ++i;
        }
    }
}

Glob Glob::reversed() const {
    Glob g;
    g.elems_.assign(elems_.rbegin(), elems_.rend());
    return g;
}

void Glob::closure(std::vector<char>& active) const {
    for (std::size_t j = 0; j < elems_.size(); ++j) {
        if (active[j] != 0 && elems_[j].kind == Elem::Star) active[j + 1] = 1;
    }
}

bool Glob::step(const std::vector<char>& active, unsigned char c, std::vector<char>& next) const {
    std::fill(next.begin(), next.end(), 0);
    bool any = false;
    for (std::size_t j = 0; j < elems_.size(); ++j) {
        if (active[j] == 0) continue;
        if (elems_[j].kind == Elem::Star) {
            next[j] = 1;
            any = true;
        } else if (elems_[j].set[c]) {
            next[j + 1] = 1;
            any = true;
        }
    }
    closure(next);
    return any;
}

std::size_t Glob::prefix(std::string_view s, bool longest, Budget& budget) const {
    const std::size_t k = elems_.size();
    std::vector<char> active(k + 1, 0);
    std::vector<char> next(k + 1, 0);
    active[0] = 1;
    closure(active);
    std::size_t best = active[k] != 0 ? 0 : std::string_view::npos;
    if (best == 0 && !longest) return 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        budget.spend(kCharUnits + kStateUnits * static_cast<long long>(k));
        if (!step(active, static_cast<unsigned char>(s[i]), next)) return best;
        active.swap(next);
        if (active[k] != 0) {
            best = i + 1;
            if (!longest) return best;
        }
    }
    return best;
}

bool Glob::matches(std::string_view s, Budget& budget) const {
    const std::size_t k = elems_.size();
    std::vector<char> active(k + 1, 0);
    std::vector<char> next(k + 1, 0);
    active[0] = 1;
    closure(active);
    for (const char c : s) {
        budget.spend(kCharUnits + kStateUnits * static_cast<long long>(k));
        if (!step(active, static_cast<unsigned char>(c), next)) return false;
        active.swap(next);
    }
    return active[k] != 0;
}

// ---- extended regular expressions -------------------------------------------------------------

namespace {

struct ReNode {
    enum Kind { Chars, Cat, Alt, Repeat, Bol, Eol } kind = Chars;
    Set set;
    std::vector<std::unique_ptr<ReNode>> kids;
    int min = 0;
    int max = -1;  // -1: no bound
};
using RePtr = std::unique_ptr<ReNode>;

struct BadRegex {};

// The parser of POSIX EREs (regex(7)), with glibc's \w \W \s \S; depth-limited.
class ReParser {
public:
    explicit ReParser(const std::string& p) : p_(p) {}
    RePtr run() {
        RePtr r = alt();
        if (i_ != p_.size()) throw BadRegex{};
        return r;
    }

private:
    static constexpr int kMaxDepth = 128;  // nested groups: parsed and compiled recursively
    RePtr make(ReNode::Kind k) {
        auto n = std::make_unique<ReNode>();
        n->kind = k;
        return n;
    }
    RePtr alt() {
        if (++depth_ > kMaxDepth) throw BadRegex{};
        RePtr first = cat();
        if (i_ < p_.size() && p_[i_] == '|') {
            RePtr a = make(ReNode::Alt);
            a->kids.push_back(std::move(first));
            while (i_ < p_.size() && p_[i_] == '|') {
                ++i_;
                a->kids.push_back(cat());
            }
            --depth_;
            return a;
        }
        --depth_;
        return first;
    }
    RePtr cat() {
        RePtr c = make(ReNode::Cat);
        while (i_ < p_.size() && p_[i_] != '|' && p_[i_] != ')') c->kids.push_back(repeat());
        return c;
    }
    RePtr repeat() {
        RePtr a = atom();
        for (int quantifiers = 0; i_ < p_.size(); ++quantifiers) {
            if (quantifiers > 16) throw BadRegex{};  // a*****...: each wraps the last, deeper
            const char c = p_[i_];
            int lo = 0;
            int hi = -1;
            if (c == '*') {
                ++i_;
            } else if (c == '+') {
                lo = 1;
                ++i_;
            } else if (c == '?') {
                hi = 1;
                ++i_;
            } else if (c == '{' && interval(lo, hi)) {
            } else {
                break;
            }
            RePtr r = make(ReNode::Repeat);
            r->min = lo;
            r->max = hi;
            r->kids.push_back(std::move(a));
            a = std::move(r);
        }
        return a;
    }
    // {m}, {m,}, {m,n} with m, n <= RE_DUP_MAX (0x7fff, glibc's regex.h); else not an interval.
    bool interval(int& lo, int& hi) {
        std::size_t k = i_ + 1;
        const auto num = [&](int& out) {
            const std::size_t start = k;
            long v = 0;
            while (k < p_.size() && std::isdigit(static_cast<unsigned char>(p_[k])) != 0) {
                v = v * 10 + (p_[k] - '0');
                if (v > 0x7fff) throw BadRegex{};
                ++k;
            }
            out = static_cast<int>(v);
            return k > start;
        };
        if (!num(lo)) return false;
        hi = lo;
        if (k < p_.size() && p_[k] == ',') {
            ++k;
            hi = -1;
            int h = 0;
            if (num(h)) hi = h;
        }
        if (k >= p_.size() || p_[k] != '}') return false;
        if (hi >= 0 && hi < lo) throw BadRegex{};
        i_ = k + 1;
        return true;
    }
    RePtr atom() {
        const char c = p_[i_];
        if (c == '(') {
            ++i_;
            RePtr a = alt();
            if (i_ >= p_.size() || p_[i_] != ')') throw BadRegex{};
            ++i_;
            return a;
        }
        if (c == '^' || c == '$') {
            ++i_;
            return make(c == '^' ? ReNode::Bol : ReNode::Eol);
        }
        RePtr n = make(ReNode::Chars);
        if (c == '*' || c == '+' || c == '?') throw BadRegex{};
        if (c == '.') {
            n->set.set();
            n->set['\n'] = false;
            ++i_;
        } else if (c == '[') {
            std::size_t k = i_ + 1;
            if (!bracket(p_, k, false, false, n->set)) throw BadRegex{};
            i_ = k;
        } else if (c == '\\') {
            if (i_ + 1 >= p_.size()) throw BadRegex{};
            const char e = p_[i_ + 1];
            bool ok = false;
            if (e == 'w' || e == 'W') n->set = class_set("word", ok);
            else if (e == 's' || e == 'S') n->set = class_set("space", ok);
            else n->set = one(static_cast<unsigned char>(e));
            if (e == 'W' || e == 'S') n->set.flip();
            i_ += 2;
        } else {
            n->set = one(static_cast<unsigned char>(c));
            ++i_;
        }
        return n;
    }
    const std::string& p_;
    std::size_t i_ = 0;
    int depth_ = 0;
};

// The automaton: Chars consumes a character of its set; Split continues at both; Bol/Eol
// assert a position; Match accepts.
struct State {
    enum Kind { Chars, Split, Bol, Eol, Match } kind = Match;
    Set set;
    int out = -1;
    int out2 = -1;
};

class ReCompiler {
public:
    std::vector<State> states;

    // Appends `n`; returns its entry state; its exits point to `next`.
    int emit(const ReNode& n, int next) {
        if (states.size() > kMaxRegexStates) throw BadRegex{};
        switch (n.kind) {
            case ReNode::Chars: return add({State::Chars, n.set, next, -1});
            case ReNode::Bol: return add({State::Bol, {}, next, -1});
            case ReNode::Eol: return add({State::Eol, {}, next, -1});
            case ReNode::Cat: {
                int at = next;
                for (auto k = n.kids.rbegin(); k != n.kids.rend(); ++k) at = emit(**k, at);
                return at;
            }
            case ReNode::Alt: {
                int at = emit(*n.kids.back(), next);
                for (std::size_t k = n.kids.size() - 1; k-- > 0;) at = add({State::Split, {}, emit(*n.kids[k], next), at});
                return at;
            }
            case ReNode::Repeat: {
                const ReNode& body = *n.kids.front();
                int at = next;
                if (n.max < 0) {  // the unbounded tail: a loop
                    const int split = add({State::Split, {}, -1, next});
                    states[static_cast<std::size_t>(split)].out = emit(body, split);
                    at = split;
                } else {
                    for (int k = n.min; k < n.max; ++k) at = add({State::Split, {}, emit(body, at), next});
                }
                for (int k = 0; k < n.min; ++k) at = emit(body, at);
                return at;
            }
        }
        return next;
    }

private:
    int add(State s) {
        states.push_back(s);
        return static_cast<int>(states.size()) - 1;
    }
};

class ReRunner {
public:
    ReRunner(const std::vector<State>& st, int start, std::string_view s, Budget& budget)
        : st_(st), start_(start), s_(s), budget_(budget), mark_(st.size(), -1) {}

    bool run() {
        std::vector<int> cur;
        std::vector<int> next;
        for (std::size_t pos = 0; pos <= s_.size(); ++pos) {
            budget_.spend(kCharUnits + kStateUnits * static_cast<long long>(cur.size()));
            if (add(cur, start_, pos)) return true;  // a match may start anywhere
            if (pos == s_.size()) break;
            next.clear();
            const auto c = static_cast<unsigned char>(s_[pos]);
            for (const int k : cur) {
                const State& state = st_[static_cast<std::size_t>(k)];
                if (state.kind == State::Chars && state.set[c] && add(next, state.out, pos + 1)) return true;
            }
            cur.swap(next);
        }
        return false;
    }

private:
    // Adds state k and what it reaches without consuming, at position `pos`; true on a match.
    bool add(std::vector<int>& list, int k, std::size_t pos) {
        std::vector<int> stack{k};
        const long gen = static_cast<long>(pos);
        while (!stack.empty()) {
            const int j = stack.back();
            stack.pop_back();
            if (j < 0 || mark_[static_cast<std::size_t>(j)] == gen) continue;
            mark_[static_cast<std::size_t>(j)] = gen;
            const State& state = st_[static_cast<std::size_t>(j)];
            switch (state.kind) {
                case State::Match: return true;
                case State::Chars: list.push_back(j); break;
                case State::Split:
                    stack.push_back(state.out2);
                    stack.push_back(state.out);
                    break;
                case State::Bol:
                    if (pos == 0) stack.push_back(state.out);
                    break;
                case State::Eol:
                    if (pos == s_.size()) stack.push_back(state.out);
                    break;
            }
        }
        return false;
    }

    const std::vector<State>& st_;
    int start_;
    std::string_view s_;
    Budget& budget_;
    std::vector<long> mark_;  // the position a state was last added at
};

}  // namespace

bool ere_search(const std::string& re, std::string_view s, Budget& budget, bool& valid) {
    valid = true;
    try {
        budget.spend(static_cast<long long>(re.size()));
        const RePtr tree = ReParser(re).run();
        ReCompiler c;
        const int match = static_cast<int>(c.states.size());
        c.states.push_back({State::Match, {}, -1, -1});
        const int start = c.emit(*tree, match);
        budget.spend(static_cast<long long>(c.states.size()));
        return ReRunner(c.states, start, s, budget).run();
    } catch (const BadRegex&) {
        valid = false;
        return false;
    }
}

}  // namespace meshwork::shell
