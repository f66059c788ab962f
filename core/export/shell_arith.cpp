#include "core/export/shell_arith.h"

#include <cctype>
#include <climits>
#include <cstdint>

namespace meshwork::shell {

namespace {

struct ArithError {
    std::string message;
    bool limit = false;
};

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Two's complement wrap-around, as bash's intmax_t arithmetic behaves on every platform it
// runs on (signed overflow is undefined in C++: computed unsigned).
long long wrap_add(long long a, long long b) {
    return static_cast<long long>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
long long wrap_sub(long long a, long long b) {
    return static_cast<long long>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
long long wrap_mul(long long a, long long b) {
    return static_cast<long long>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

ArithValue unknown_of(const ArithValue& a, const ArithValue& b) {
    return {0, a.unknown >= 0 ? a.unknown : b.unknown};
}

class Eval {
public:
    Eval(const Value& s, ArithHost& host, int depth) : s_(s), host_(host), depth_(depth) {}

    ArithValue run() {
        skip();
        if (i_ >= s_.text.size()) return {};  // $(( )) is 0
        ArithValue v = comma();
        skip();
        if (i_ < s_.text.size()) error("syntax error in expression");
        return v;
    }

private:
    // ---- scanning ------------------------------------------------------------------------
    [[noreturn]] void error(const std::string& what) const {
        const std::string rest = i_ < s_.text.size() ? s_.text.substr(i_) : "";
        throw ArithError{what + (rest.empty() ? "" : " (error token is \"" + rest + "\")"), false};
    }
    void enter() {
        if (++depth_ > kMaxArithDepth) {
            throw ArithError{"arithmetic nested more than " + std::to_string(kMaxArithDepth) + " deep", true};
        }
        host_.arith_spend(1);
    }
    void leave() { --depth_; }
    struct Nest {
        explicit Nest(Eval& e) : e_(e) { e_.enter(); }
        ~Nest() { e_.leave(); }
        Nest(const Nest&) = delete;
        Nest& operator=(const Nest&) = delete;
        Eval& e_;
    };

    [[nodiscard]] bool in_span() const { return s_.span_at(i_) != nullptr; }
    void skip() {
        while (i_ < s_.text.size() && !in_span() && std::isspace(static_cast<unsigned char>(s_.text[i_])) != 0) ++i_;
    }
    // The operator `op` next (and not the start of a longer one in `longer`).
    bool peek(const char* op, std::initializer_list<const char*> longer = {}) {
        skip();
        if (in_span()) return false;
        const std::string o(op);
        if (s_.text.compare(i_, o.size(), o) != 0) return false;
        for (const char* l : longer) {
            const std::string lo(l);
            if (s_.text.compare(i_, lo.size(), lo) == 0) return false;
        }
        return true;
    }
    bool eat(const char* op, std::initializer_list<const char*> longer = {}) {
        if (!peek(op, longer)) return false;
        i_ += std::char_traits<char>::length(op);
        return true;
    }

    // ---- grammar, lowest precedence first (bash's expr.c) ------------------------------------
    ArithValue comma() {
        ArithValue v = assign();
        while (eat(",")) v = assign();
        return v;
    }

    // An lvalue: NAME or NAME[expr]; restores the position and returns false when not one.
    struct LValue {
        std::string name;
        bool indexed = false;
        long long index = 0;
        int unknown = -1;
    };
    bool lvalue(LValue& lv) {
        skip();
        const std::size_t start = i_;
        if (in_span() || i_ >= s_.text.size() || !name_start(s_.text[i_])) return false;
        while (i_ < s_.text.size() && !in_span() && name_char(s_.text[i_])) ++i_;
        lv.name = s_.text.substr(start, i_ - start);
        if (i_ < s_.text.size() && !in_span() && s_.text[i_] == '[') {
            ++i_;
            const ArithValue idx = comma();
            skip();
            if (i_ >= s_.text.size() || in_span() || s_.text[i_] != ']') error("expected ']'");
            ++i_;
            lv.indexed = true;
            lv.index = idx.v;
            lv.unknown = idx.unknown;
        }
        return true;
    }

    ArithValue assign() {
        Nest nest(*this);
        const std::size_t start = i_;
        LValue lv;
        if (lvalue(lv)) {
            static const char* const kOps[] = {"*=", "/=", "%=", "+=", "-=", "<<=", ">>=", "&=", "^=", "|=", "="};
            for (const char* op : kOps) {
                const std::string o(op);
                if (o == "=" ? !peek("=", {"=="}) : !peek(op)) continue;
                i_ += o.size();
                ArithValue r = assign();
                if (o != "=") {
                    const ArithValue cur = read(lv);
                    r = binary(o.substr(0, o.size() - 1), cur, r);
                }
                if (lv.unknown >= 0) r = {0, lv.unknown};
                if (noeval_ == 0) host_.arith_set(lv.name, lv.indexed, lv.index, r);
                return r;
            }
        }
        i_ = start;
        return conditional();
    }

    ArithValue conditional() {
        ArithValue c = logical_or();
        if (!eat("?")) return c;
        const bool unknown = c.unknown >= 0;
        if (unknown || c.v == 0) ++noeval_;
        ArithValue a = comma();
        if (unknown || c.v == 0) --noeval_;
        if (!eat(":")) error("expected ':' in a conditional expression");
        if (unknown || c.v != 0) ++noeval_;
        ArithValue b = conditional();
        if (unknown || c.v != 0) --noeval_;
        if (unknown) return {0, c.unknown};
        return c.v != 0 ? a : b;
    }

    ArithValue logical_or() {
        ArithValue a = logical_and();
        while (eat("||")) {
            const bool skip_right = a.unknown < 0 && a.v != 0;
            if (skip_right) ++noeval_;
            const ArithValue b = logical_and();
            if (skip_right) {
                --noeval_;
                a = {1, -1};
                continue;
            }
            if (b.unknown < 0 && b.v != 0) a = {1, -1};
            else if (a.unknown >= 0 || b.unknown >= 0) a = unknown_of(a, b);
            else a = {0, -1};
        }
        return a;
    }

    ArithValue logical_and() {
        ArithValue a = bit_or();
        while (eat("&&")) {
            const bool skip_right = a.unknown < 0 && a.v == 0;
            if (skip_right) ++noeval_;
            const ArithValue b = bit_or();
            if (skip_right) {
                --noeval_;
                a = {0, -1};
                continue;
            }
            if (b.unknown < 0 && b.v == 0) a = {0, -1};
            else if (a.unknown >= 0 || b.unknown >= 0) a = unknown_of(a, b);
            else a = {1, -1};
        }
        return a;
    }

    ArithValue bit_or() {
        ArithValue a = bit_xor();
        while (eat("|", {"||", "|="})) a = binary("|", a, bit_xor());
        return a;
    }
    ArithValue bit_xor() {
        ArithValue a = bit_and();
        while (eat("^", {"^="})) a = binary("^", a, bit_and());
        return a;
    }
    ArithValue bit_and() {
        ArithValue a = equality();
        while (eat("&", {"&&", "&="})) a = binary("&", a, equality());
        return a;
    }
    ArithValue equality() {
        ArithValue a = relational();
        while (true) {
            if (eat("==")) a = binary("==", a, relational());
            else if (eat("!=")) a = binary("!=", a, relational());
            else return a;
        }
    }
    ArithValue relational() {
        ArithValue a = shift();
        while (true) {
            if (eat("<=")) a = binary("<=", a, shift());
            else if (eat(">=")) a = binary(">=", a, shift());
            else if (eat("<", {"<<"})) a = binary("<", a, shift());
            else if (eat(">", {">>"})) a = binary(">", a, shift());
            else return a;
        }
    }
    ArithValue shift() {
        ArithValue a = additive();
        while (true) {
            if (eat("<<", {"<<="})) a = binary("<<", a, additive());
            else if (eat(">>", {">>="})) a = binary(">>", a, additive());
            else return a;
        }
    }
    ArithValue additive() {
        ArithValue a = multiplicative();
        while (true) {
            // 5--3 is 5 - -3 (a postfix x-- was taken by the operand already).
            if (eat("+", {"+="})) a = binary("+", a, multiplicative());
            else if (eat("-", {"-="})) a = binary("-", a, multiplicative());
            else return a;
        }
    }
    ArithValue multiplicative() {
        ArithValue a = power();
        while (true) {
            if (eat("*", {"**", "*="})) a = binary("*", a, power());
            else if (eat("/", {"/="})) a = binary("/", a, power());
            else if (eat("%", {"%="})) a = binary("%", a, power());
            else return a;
        }
    }
    ArithValue power() {
        const ArithValue a = unary();
        if (!eat("**")) return a;
        Nest nest(*this);
        return binary("**", a, power());  // right associative
    }

    ArithValue unary() {
        Nest nest(*this);
        LValue lv;
        if (eat("++") || eat("--")) {
            const bool inc = s_.text[i_ - 1] == '+';
            const std::size_t at = i_;
            if (!lvalue(lv)) {  // --5 is -(-5) and ++5 is +(+5) in bash
                i_ = at;
                return unary();
            }
            ArithValue v = binary(inc ? "+" : "-", read(lv), {1, -1});
            if (lv.unknown >= 0) v = {0, lv.unknown};
            if (noeval_ == 0) host_.arith_set(lv.name, lv.indexed, lv.index, v);
            return v;
        }
        if (eat("-")) return negate(unary());
        if (eat("+")) return unary();
        if (eat("!")) {
            const ArithValue a = unary();
            return a.unknown >= 0 ? a : ArithValue{a.v == 0 ? 1 : 0, -1};
        }
        if (eat("~")) {
            const ArithValue a = unary();
            return a.unknown >= 0 ? a : ArithValue{~a.v, -1};
        }
        return postfix();
    }
    static ArithValue negate(const ArithValue& a) {
        return a.unknown >= 0 ? a : ArithValue{wrap_sub(0, a.v), -1};
    }

    ArithValue postfix() {
        skip();
        if (in_span()) {  // an unknown operand
            const Value::Span* sp = s_.span_at(i_);
            i_ = sp->at + sp->size;
            return {0, sp->id};
        }
        if (eat("(")) {
            const ArithValue v = comma();
            if (!eat(")")) error("missing ')'");
            return v;
        }
        if (i_ >= s_.text.size()) error("operand expected");
        const char c = s_.text[i_];
        if (std::isdigit(static_cast<unsigned char>(c)) != 0) return number();
        const std::size_t start = i_;
        LValue lv;
        if (!lvalue(lv)) {
            i_ = start;
            error("operand expected");
        }
        const ArithValue v = read(lv);
        if (eat("++") || eat("--")) {
            const bool inc = s_.text[i_ - 1] == '+';
            ArithValue n = binary(inc ? "+" : "-", v, {1, -1});
            if (lv.unknown >= 0) n = {0, lv.unknown};
            if (noeval_ == 0) host_.arith_set(lv.name, lv.indexed, lv.index, n);
        }
        return v;
    }

    // A constant: decimal, 0x hex, 0 octal, BASE#digits (bash's strlong).
    ArithValue number() {
        const std::size_t start = i_;
        while (i_ < s_.text.size() && !in_span() &&
               (name_char(s_.text[i_]) || s_.text[i_] == '#' || s_.text[i_] == '@')) {
            ++i_;
        }
        const std::string t = s_.text.substr(start, i_ - start);
        host_.arith_spend(static_cast<long long>(t.size()));
        int base = 10;
        std::size_t k = 0;
        if (const auto hash = t.find('#'); hash != std::string::npos) {
            base = 0;
            for (std::size_t d = 0; d < hash; ++d) {
                if (std::isdigit(static_cast<unsigned char>(t[d])) == 0 || base > 64) {
                    base = 0;
                    break;
                }
                base = base * 10 + (t[d] - '0');
            }
            if (hash == 0 || base < 2 || base > 64) throw ArithError{"invalid arithmetic base (error token is \"" + t + "\")", false};
            k = hash + 1;
        } else if (t.size() > 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
            base = 16;
            k = 2;
        } else if (t.size() > 1 && t[0] == '0') {
            base = 8;
            k = 1;
        }
        if (k >= t.size() && base != 10 && base != 8) throw ArithError{"invalid number (error token is \"" + t + "\")", false};
        std::uint64_t v = 0;
        for (; k < t.size(); ++k) {
            const char c = t[k];
            int d = 0;
            if (std::isdigit(static_cast<unsigned char>(c)) != 0) d = c - '0';
            else if (std::islower(static_cast<unsigned char>(c)) != 0) d = c - 'a' + 10;
            else if (std::isupper(static_cast<unsigned char>(c)) != 0) d = c - 'A' + (base <= 36 ? 10 : 36);
            else if (c == '@') d = 62;
            else if (c == '_') d = 63;
            else d = 64;
            if (d >= base) throw ArithError{"value too great for base (error token is \"" + t + "\")", false};
            v = v * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(d);
        }
        return {static_cast<long long>(v), -1};
    }

    // A variable's value: empty is 0, a number is itself, anything else an expression.
    ArithValue read(const LValue& lv) {
        if (lv.unknown >= 0) return {0, lv.unknown};
        const Value v = host_.arith_get(lv.name, lv.indexed, lv.index);
        if (v.empty()) return {};
        if (v.known()) {
            const std::string& t = v.text;
            std::size_t b = 0;
            while (b < t.size() && std::isspace(static_cast<unsigned char>(t[b])) != 0) ++b;
            std::size_t e = t.size();
            while (e > b && std::isspace(static_cast<unsigned char>(t[e - 1])) != 0) --e;
            if (b == e) return {};
        }
        Eval inner(v, host_, depth_ + 1);
        inner.noeval_ = noeval_;
        inner.enter();
        return inner.run();
    }

    ArithValue binary(const std::string& op, const ArithValue& a, const ArithValue& b) {
        if (a.unknown >= 0 || b.unknown >= 0) return unknown_of(a, b);
        const long long x = a.v;
        const long long y = b.v;
        if (op == "+") return {wrap_add(x, y), -1};
        if (op == "-") return {wrap_sub(x, y), -1};
        if (op == "*") return {wrap_mul(x, y), -1};
        if (op == "/" || op == "%") {
            if (y == 0) {
                if (noeval_ > 0) return {};
                throw ArithError{"division by 0", false};
            }
            if (x == LLONG_MIN && y == -1) return {op == "/" ? LLONG_MIN : 0, -1};  // bash: expr.c
            return {op == "/" ? x / y : x % y, -1};
        }
        if (op == "**") {
            if (y < 0) {
                if (noeval_ > 0) return {};
                throw ArithError{"exponent less than 0", false};
            }
            std::uint64_t base = static_cast<std::uint64_t>(x);
            std::uint64_t result = 1;
            for (long long e = y; e > 0; e >>= 1) {
                if ((e & 1) != 0) result *= base;
                base *= base;
            }
            return {static_cast<long long>(result), -1};
        }
        if (op == "<<") return {static_cast<long long>(static_cast<std::uint64_t>(x) << (static_cast<std::uint64_t>(y) & 63U)), -1};
        if (op == ">>") return {x >> (static_cast<std::uint64_t>(y) & 63U), -1};
        if (op == "&") return {x & y, -1};
        if (op == "|") return {x | y, -1};
        if (op == "^") return {x ^ y, -1};
        if (op == "==") return {x == y ? 1 : 0, -1};
        if (op == "!=") return {x != y ? 1 : 0, -1};
        if (op == "<") return {x < y ? 1 : 0, -1};
        if (op == ">") return {x > y ? 1 : 0, -1};
        if (op == "<=") return {x <= y ? 1 : 0, -1};
        if (op == ">=") return {x >= y ? 1 : 0, -1};
        throw ArithError{"unknown operator " + op, false};
    }

    const Value& s_;
    ArithHost& host_;
    std::size_t i_ = 0;
    int depth_;
    int noeval_ = 0;
};

}  // namespace

ArithOutcome eval_arith(const Value& expr, ArithHost& host) {
    try {
        Eval e(expr, host, 0);
        const ArithValue v = e.run();
        if (v.unknown >= 0) return {ArithOutcome::Unknown, 0, v.unknown, ""};
        return {ArithOutcome::Ok, v.v, -1, ""};
    } catch (const ArithError& err) {
        return {err.limit ? ArithOutcome::Limit : ArithOutcome::Error, 0, -1, err.message};
    }
}

}  // namespace meshwork::shell
