#include "core/export/python_source.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace meshwork {

namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

bool is_number(const PyExpr& e) { return e.kind == PyExpr::Int || e.kind == PyExpr::Float; }

std::string trimmed(const std::string& s) {
    const auto a = s.find_first_not_of(" \t\r\n");
    if (a == std::string::npos) return "";
    const auto b = s.find_last_not_of(" \t\r\n");
    return s.substr(a, b - a + 1);
}

// Recursive descent over one expression's text.
class ExprParser {
  public:
    explicit ExprParser(const std::string& text) : t_(text) {}

    PyExpr parse() {
        PyExpr e = expr();
        skip();
        if (!ok_ || p_ != t_.size()) return other(t_);
        return e;
    }

  private:
    // Nesting deeper than any config writes is refused, not recursed into (the stack).
    struct DepthGuard {
        explicit DepthGuard(int& d) : depth(d) { ++depth; }
        ~DepthGuard() { --depth; }
        DepthGuard(const DepthGuard&) = delete;
        DepthGuard& operator=(const DepthGuard&) = delete;
        int& depth;
    };

    static PyExpr other(const std::string& text) {
        PyExpr e;
        e.kind = PyExpr::Other;
        e.text = trimmed(text);
        return e;
    }

    void skip() {
        while (p_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[p_])) != 0) ++p_;
    }
    bool eat(char c) {
        skip();
        if (p_ < t_.size() && t_[p_] == c) {
            ++p_;
            return true;
        }
        return false;
    }
    bool fail() {
        ok_ = false;
        return false;
    }

    // A keyword (not a prefix of a longer name) at the cursor: consumed.
    bool keyword(const char* word) {
        skip();
        const std::size_t n = std::char_traits<char>::length(word);
        if (t_.compare(p_, n, word) != 0) return false;
        if (p_ + n < t_.size() && ident_char(t_[p_ + n])) return false;
        p_ += n;
        return true;
    }

    // `A if C else B`, or a comparison.
    PyExpr expr() {
        const std::size_t start = p_;
        const DepthGuard guard(depth_);
        if (depth_ > kMaxDepth) {
            fail();
            return other(t_.substr(start));
        }
        PyExpr value = disjunction();
        if (!ok_) return value;
        const std::size_t save = p_;
        if (!keyword("if")) {
            p_ = save;
            return value;
        }
        PyExpr cond = disjunction();
        if (!ok_ || !keyword("else")) {
            fail();
            return value;
        }
        PyExpr otherwise = expr();
        PyExpr c;
        c.kind = PyExpr::Cond;
        c.items = {std::move(value), std::move(cond), std::move(otherwise)};
        c.text = trimmed(t_.substr(start, p_ - start));
        return c;
    }

    // `A or B` and `A and B` (and binding tighter), left to right: a BinOp whose s is "or"
    // or "and", for the reader to compute with Python's short-circuit values.
    PyExpr disjunction() { return boolean_level("or"); }
    PyExpr conjunction() { return boolean_level("and"); }

    PyExpr boolean_level(const char* word) {
        const bool ors = word[0] == 'o';
        const std::size_t start = p_;
        PyExpr left = ors ? conjunction() : comparison();
        while (ok_) {
            const std::size_t save = p_;
            if (!keyword(word)) {
                p_ = save;
                break;
            }
            PyExpr right = ors ? conjunction() : comparison();
            if (!ok_) return left;
            PyExpr b;
            b.kind = PyExpr::BinOp;
            b.s = word;
            b.items = {std::move(left), std::move(right)};
            b.text = trimmed(t_.substr(start, p_ - start));
            left = std::move(b);
        }
        return left;
    }

    // One comparison: ==, !=, is, is not, in, not in (no chains).
    PyExpr comparison() {
        const std::size_t start = p_;
        PyExpr left = sum();
        if (!ok_) return left;
        const std::size_t save = p_;
        skip();
        std::string op;
        if (keyword("is")) {
            op = keyword("not") ? "is not" : "is";
        } else if (keyword("not")) {
            if (!keyword("in")) {
                p_ = save;
                return left;
            }
            op = "not in";
        } else if (keyword("in")) {
            op = "in";
        } else if (t_.compare(p_, 2, "==") == 0 || t_.compare(p_, 2, "!=") == 0) {
            op = t_.substr(p_, 2);
            p_ += 2;
        } else {
            p_ = save;
            return left;
        }
        PyExpr right = sum();
        PyExpr c;
        c.kind = PyExpr::Compare;
        c.s = op;
        c.items = {std::move(left), std::move(right)};
        c.text = trimmed(t_.substr(start, p_ - start));
        return c;
    }

    // Sums and products: of numbers folded ("8 * 1024"), of anything else kept as BinOp
    // (["decoder"] * 4); "**" and "//" are not read.
    PyExpr sum() { return binary_level("+-"); }
    PyExpr term() { return binary_level("*/"); }

    // One precedence level of + - (sum) or * / (term, whose operands are unary expressions),
    // left to right.
    PyExpr binary_level(const char* ops) {
        const bool products = ops[0] == '*';
        const std::size_t start = p_;
        PyExpr left = products ? unary() : term();
        for (;;) {
            skip();
            if (p_ >= t_.size()) break;
            const char op = t_[p_];
            if (std::strchr(ops, op) == nullptr || op == '\0') break;
            if (op == '*' && p_ + 1 < t_.size() && t_[p_ + 1] == '*') return other_to_end(start);
            if (op == '/' && p_ + 1 < t_.size() && t_[p_ + 1] == '/') return other_to_end(start);
            ++p_;
            PyExpr right = products ? unary() : term();
            if (!ok_) return other_to_end(start);
            left = combine(op, std::move(left), std::move(right), start);
            if (!ok_) return other_to_end(start);
        }
        return left;
    }

    // Numbers fold; anything else stays a BinOp for the reader to compute.
    PyExpr combine(char op, PyExpr left, PyExpr right, std::size_t start) {
        if (!is_number(left) || !is_number(right)) {
            PyExpr b;
            b.kind = PyExpr::BinOp;
            b.s = std::string(1, op);
            b.items = {std::move(left), std::move(right)};
            b.text = trimmed(t_.substr(start, p_ - start));
            return b;
        }
        std::optional<PyExpr> r = py_number_op(op, left, right);
        if (!r) {
            fail();
            return left;
        }
        r->text = trimmed(t_.substr(start, p_ - start));
        return *r;
    }

    PyExpr other_to_end(std::size_t start) {
        p_ = t_.size();
        return other(t_.substr(start));
    }

    PyExpr unary() {
        skip();
        const DepthGuard guard(depth_);
        if (depth_ > kMaxDepth) {
            fail();
            return other(t_.substr(p_));
        }
        if (p_ < t_.size() && t_[p_] == '-') {
            ++p_;
            PyExpr e = unary();
            if (e.kind == PyExpr::Int || e.kind == PyExpr::Float) {
                e.i = -e.i;
                e.f = -e.f;
                e.text = "-" + e.text;
                return e;
            }
            fail();
            return e;
        }
        return postfix();
    }

    PyExpr postfix() {
        const std::size_t start = p_;
        const DepthGuard guard(depth_);
        if (depth_ > kMaxDepth) {
            fail();
            return other(t_.substr(start));
        }
        PyExpr e = atom();
        for (;;) {
            if (!ok_) return e;
            skip();
            if (p_ >= t_.size()) break;
            if (t_[p_] == '.') {
                ++p_;
                skip();
                const std::string name = identifier();
                if (name.empty()) {
                    fail();
                    return e;
                }
                if (e.kind == PyExpr::Name) {
                    e.s += "." + name;
                } else {
                    PyExpr a;
                    a.kind = PyExpr::Attr;
                    a.s = name;
                    a.object = std::make_shared<PyExpr>(std::move(e));
                    e = std::move(a);
                }
            } else if (t_[p_] == '(') {
                ++p_;
                PyExpr c;
                c.kind = PyExpr::Call;
                if (e.kind == PyExpr::Name) {
                    c.s = e.s;
                } else if (e.kind == PyExpr::Attr) {
                    c.s = e.s;
                    c.object = e.object;
                } else {
                    c.object = std::make_shared<PyExpr>(std::move(e));
                }
                arguments(c);
                e = std::move(c);
            } else if (t_[p_] == '[') {
                ++p_;
                PyExpr sub;
                sub.kind = PyExpr::Subscript;
                sub.items.push_back(expr());
                if (!ok_ || !eat(']')) {
                    fail();
                    return e;
                }
                sub.object = std::make_shared<PyExpr>(std::move(e));
                e = std::move(sub);
            } else {
                break;
            }
            e.text = trimmed(t_.substr(start, p_ - start));
        }
        return e;
    }

    void arguments(PyExpr& call) {
        if (eat(')')) return;
        for (;;) {
            skip();
            // keyword=value (not ==)
            const std::size_t save = p_;
            const std::string name = identifier();
            skip();
            if (!name.empty() && p_ < t_.size() && t_[p_] == '=' && (p_ + 1 >= t_.size() || t_[p_ + 1] != '=')) {
                ++p_;
                call.keywords.push_back(PyKeyword{name, expr()});
            } else {
                p_ = save;
                if (eat('*')) eat('*');  // *args, **kwargs: read as their expression, Other below
                call.items.push_back(expr());
            }
            if (!ok_) return;
            if (eat(',')) {
                if (eat(')')) return;
                continue;
            }
            if (eat(')')) return;
            fail();
            return;
        }
    }

    std::string identifier() {
        if (p_ >= t_.size() || !ident_start(t_[p_])) return "";
        const std::size_t a = p_;
        while (p_ < t_.size() && ident_char(t_[p_])) ++p_;
        return t_.substr(a, p_ - a);
    }

    // One string literal (with r/b/u prefixes; f-strings are Other), and adjacent ones joined.
    bool string_literal(std::string& out, bool& formatted) {
        skip();
        std::size_t q = p_;
        while (q < t_.size() && std::isalpha(static_cast<unsigned char>(t_[q])) != 0 && q - p_ < 2) ++q;
        if (q >= t_.size() || (t_[q] != '"' && t_[q] != '\'')) return false;
        const std::string prefix = t_.substr(p_, q - p_);
        for (char c : prefix) {
            const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            if (l == 'f') formatted = true;
            if (l != 'r' && l != 'b' && l != 'u' && l != 'f') return false;
        }
        const bool raw = prefix.find_first_of("rR") != std::string::npos;
        const char quote = t_[q];
        const bool triple = t_.compare(q, 3, std::string(3, quote)) == 0;
        p_ = q + (triple ? 3 : 1);
        for (;;) {
            if (p_ >= t_.size()) return fail();
            if (triple ? t_.compare(p_, 3, std::string(3, quote)) == 0 : t_[p_] == quote) {
                p_ += triple ? 3 : 1;
                return true;
            }
            if (t_[p_] == '\\' && !raw && p_ + 1 < t_.size()) {
                const char n = t_[p_ + 1];
                out += n == 'n' ? '\n' : n == 't' ? '\t' : n;
                p_ += 2;
                continue;
            }
            out += t_[p_++];
        }
    }

    PyExpr atom() {
        skip();
        PyExpr e;
        const std::size_t start = p_;
        if (p_ >= t_.size()) {
            fail();
            return e;
        }
        const char c = t_[p_];
        std::string str;
        bool formatted = false;
        if (string_literal(str, formatted)) {
            while (ok_) {
                const std::size_t save = p_;
                if (!string_literal(str, formatted)) {
                    p_ = save;
                    break;
                }
            }
            if (formatted) {
                e.kind = PyExpr::Other;
            } else {
                e.kind = PyExpr::Str;
                e.s = str;
            }
        } else if (std::isdigit(static_cast<unsigned char>(c)) != 0 || (c == '.' && p_ + 1 < t_.size() &&
                                                                        std::isdigit(static_cast<unsigned char>(t_[p_ + 1])) != 0)) {
            std::string digits;
            bool real = false;
            while (p_ < t_.size()) {
                const char d = t_[p_];
                if (std::isdigit(static_cast<unsigned char>(d)) != 0) {
                    digits += d;
                } else if (d == '_') {
                } else if (d == '.' || d == 'e' || d == 'E') {
                    real = true;
                    digits += d;
                    if ((d == 'e' || d == 'E') && p_ + 1 < t_.size() && (t_[p_ + 1] == '-' || t_[p_ + 1] == '+')) {
                        digits += t_[++p_];
                    }
                } else {
                    break;
                }
                ++p_;
            }
            char* end = nullptr;
            const double v = std::strtod(digits.c_str(), &end);
            if (end == nullptr || *end != '\0' || !std::isfinite(v) || (!real && v > 9e15)) {
                fail();
                return e;
            }
            e.kind = real ? PyExpr::Float : PyExpr::Int;
            e.f = v;
            e.i = real ? 0 : static_cast<long long>(v);
        } else if (ident_start(c)) {
            const std::string name = identifier();
            if (name == "None") {
                e.kind = PyExpr::None;
            } else if (name == "True" || name == "False") {
                e.kind = PyExpr::Bool;
                e.b = name == "True";
            } else if (name == "lambda" || name == "not" || name == "await") {
                fail();
                return e;
            } else {
                e.kind = PyExpr::Name;
                e.s = name;
            }
        } else if (c == '(' || c == '[') {
            const char close = c == '(' ? ')' : ']';
            ++p_;
            e.kind = PyExpr::List;
            bool comma = false;
            if (!eat(close)) {
                for (;;) {
                    e.items.push_back(expr());
                    if (!ok_) return e;
                    if (eat(',')) {
                        comma = true;
                        if (eat(close)) break;
                        continue;
                    }
                    if (eat(close)) break;
                    fail();
                    return e;
                }
            }
            // A parenthesised expression, not a tuple.
            if (c == '(' && !comma && e.items.size() == 1) {
                PyExpr inner = e.items.front();
                return inner;
            }
        } else if (c == '{') {
            ++p_;
            e.kind = PyExpr::Dict;
            if (!eat('}')) {
                for (;;) {
                    PyExpr key = expr();
                    if (!ok_ || !eat(':')) {
                        fail();
                        return e;
                    }
                    const std::string key_text = key.kind == PyExpr::Str ? key.s : key.text;
                    e.items.push_back(std::move(key));
                    e.keywords.push_back(PyKeyword{key_text, expr()});
                    if (!ok_) return e;
                    if (eat(',')) {
                        if (eat('}')) break;
                        continue;
                    }
                    if (eat('}')) break;
                    fail();
                    return e;
                }
            }
        } else {
            fail();
            return e;
        }
        e.text = trimmed(t_.substr(start, p_ - start));
        return e;
    }

    static constexpr int kMaxDepth = 64;
    const std::string& t_;
    std::size_t p_ = 0;
    bool ok_ = true;
    int depth_ = 0;
};

}  // namespace

bool PyExpr::literal() const {
    if (constant()) return true;
    if (kind != List && kind != Dict) return false;
    for (const PyExpr& e : items) {
        if (!e.literal()) return false;
    }
    for (const PyKeyword& k : keywords) {
        if (!k.second.literal()) return false;
    }
    return true;
}

PyExpr parse_py_expr(const std::string& text) { return ExprParser(text).parse(); }

std::optional<PyExpr> py_number_op(char op, const PyExpr& a, const PyExpr& b) {
    if (!is_number(a) || !is_number(b) || std::strchr("+-*/", op) == nullptr || op == '\0') return std::nullopt;
    const double x = a.kind == PyExpr::Int ? static_cast<double>(a.i) : a.f;
    const double y = b.kind == PyExpr::Int ? static_cast<double>(b.i) : b.f;
    if (op == '/' && y == 0) return std::nullopt;
    const double v = op == '+' ? x + y : op == '-' ? x - y : op == '*' ? x * y : x / y;
    if (!std::isfinite(v) || std::fabs(v) > 9e15) return std::nullopt;
    PyExpr r;
    const bool ints = a.kind == PyExpr::Int && b.kind == PyExpr::Int && op != '/';
    r.kind = ints ? PyExpr::Int : PyExpr::Float;
    r.i = ints ? static_cast<long long>(v) : 0;
    r.f = v;
    return r;
}

bool py_is_identifier(const std::string& s) {
    return !s.empty() && ident_start(s[0]) && std::all_of(s.begin(), s.end(), ident_char);
}

std::string py_take_name(const std::string& s, std::size_t& pos, bool dotted) {
    const std::size_t a = pos;
    while (pos < s.size() && (ident_char(s[pos]) || (dotted && s[pos] == '.'))) ++pos;
    return s.substr(a, pos - a);
}

std::vector<PyStatement> py_statements(const std::string& source) {
    std::vector<PyStatement> out;
    PyStatement cur;
    int depth = 0, line = 1, indent = 0;
    bool at_line_start = true;
    const auto flush = [&]() {
        const std::string t = trimmed(cur.text);
        if (!t.empty()) {
            cur.text = t;
            out.push_back(cur);
        }
        cur = {};
    };
    // The statement starts with the first character it gets.
    const auto begin = [&]() {
        if (!cur.text.empty()) return;
        cur.indent = indent;
        cur.line = line;
    };
    bool continued = false;  // the line ended with a backslash
    for (std::size_t i = 0; i < source.size(); ++i) {
        if (at_line_start) {
            at_line_start = false;
            indent = 0;
            while (i < source.size() && (source[i] == ' ' || source[i] == '\t')) {
                indent += source[i] == '\t' ? 8 - indent % 8 : 1;
                ++i;
            }
            if (i >= source.size()) break;
        }
        const char c = source[i];
        if (c == '\r') continue;
        if (c == '\n') {
            ++line;
            at_line_start = true;
            if (depth == 0 && !continued) {
                flush();
            } else if (!cur.text.empty()) {
                cur.text += ' ';
            }
            continued = false;
            continue;
        }
        if (c == '\\' && i + 1 < source.size() && (source[i + 1] == '\n' || source[i + 1] == '\r')) {
            continued = true;
            continue;
        }
        if (c == '#') {
            while (i + 1 < source.size() && source[i + 1] != '\n') ++i;
            continue;
        }
        if (c == '"' || c == '\'') {
            begin();
            const bool triple = source.compare(i, 3, std::string(3, c)) == 0;
            const std::size_t open = triple ? 3 : 1;
            std::size_t j = i + open;
            cur.text += source.substr(i, open);
            while (j < source.size()) {
                if (source[j] == '\\' && j + 1 < source.size()) {
                    if (source[j + 1] == '\n') ++line;
                    cur.text += source.substr(j, 2);
                    j += 2;
                    continue;
                }
                if (triple ? source.compare(j, 3, std::string(3, c)) == 0 : source[j] == c) break;
                if (source[j] == '\n') {
                    if (!triple) break;  // an unterminated string ends at its line
                    ++line;
                }
                cur.text += source[j];
                ++j;
            }
            if (j < source.size() && source[j] != '\n') {
                cur.text += source.substr(j, open);
                i = j + open - 1;
            } else {
                i = j - 1;
            }
            continue;
        }
        if (c == '(' || c == '[' || c == '{') ++depth;
        if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
        // `a; b` on one line: two statements at the same indentation.
        if (c == ';' && depth == 0) {
            flush();
            continue;
        }
        if (c == ' ' || c == '\t') {
            if (!cur.text.empty()) cur.text += ' ';
            continue;
        }
        begin();
        cur.text += c;
    }
    flush();
    return out;
}

void py_scan(const std::string& s, std::size_t from, const std::function<bool(std::size_t i, int depth)>& visit) {
    int depth = 0;
    char quote = 0;
    for (std::size_t i = from; i < s.size(); ++i) {
        const char c = s[i];
        if (quote != 0) {
            if (c == '\\') ++i;
            else if (c == quote) quote = 0;
            continue;
        }
        if (c == '"' || c == '\'') {
            quote = c;
            continue;
        }
        if (!visit(i, depth)) return;
        if (c == '(' || c == '[' || c == '{') ++depth;
        if (c == ')' || c == ']' || c == '}') --depth;
    }
}

std::vector<std::string> py_top_level_items(const std::string& s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    py_scan(s, 0, [&](std::size_t i, int depth) {
        if (s[i] == ',' && depth == 0) {
            out.push_back(s.substr(start, i - start));
            start = i + 1;
        }
        return true;
    });
    out.push_back(s.substr(start));
    return out;
}

bool split_py_assignment(const std::string& s, std::string& target, std::string& value) {
    std::size_t at = std::string::npos;
    bool plain = true;
    py_scan(s, 0, [&](std::size_t i, int depth) {
        if (s[i] != '=' || depth != 0) return true;
        const char before = i > 0 ? s[i - 1] : ' ';
        const char after = i + 1 < s.size() ? s[i + 1] : ' ';
        // ==, <=, >=, != and augmented assignments (+=, -=, ...) are no plain assignment.
        static const std::string kNotPlain = "=!<>+-*/%&|^:";
        if (after == '=' || kNotPlain.find(before) != std::string::npos) {
            plain = false;
            return false;
        }
        at = i;
        return false;
    });
    if (!plain || at == std::string::npos) return false;
    target = trimmed(s.substr(0, at));
    value = trimmed(s.substr(at + 1));
    // An annotated assignment `name: type = value`.
    const auto colon = target.find(':');
    if (colon != std::string::npos) target = trimmed(target.substr(0, colon));
    return !target.empty();
}

}  // namespace meshwork
