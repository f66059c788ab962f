// The corpus of tst_shell_differential: small bash programs over the variables TP, PP, CP, EP,
// the array A and the string S, built from the constructs whose bash semantics the
// interpreter follows (arithmetic, ((...)), let, local, functions with return, subshells,
// pipelines, `&`, { ...; } | cat, if/case/for, [[ ]] patterns and regexes, parameter
// operators, arrays, break/continue, eval, bash -c), each ending in a torchrun line. Every
// script is deterministic under bash: no command substitution, file or environment.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace meshwork::test {

class ShellScriptGenerator {
public:
    explicit ShellScriptGenerator(std::uint32_t seed) : rng_(seed) {}

    std::string script() {
        funcs_ = 0;
        std::string s = "TP=1\nPP=1\nCP=1\nEP=1\nA=(3 1 4 1 5)\nS=abcabc\nNOPE=; unset NOPE\n";
        const int n = pick(3, 8);
        for (int k = 0; k < n; ++k) s += statement(0) + "\n";
        s += "torchrun pretrain_gpt.py --tp $TP --pp $PP --cp $CP --ep $EP --a ${A[@]} --n ${#A[@]} --s $S\n";
        return s;
    }

private:
    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    template <typename T>
    const T& one_of(const std::vector<T>& v) {
        return v[static_cast<std::size_t>(pick(0, static_cast<int>(v.size()) - 1))];
    }
    std::string var() { return one_of<std::string>({"TP", "PP", "CP", "EP"}); }
    std::string num() { return std::to_string(pick(0, 9)); }

    std::string expr(int depth) {
        if (depth > 2 || pick(0, 2) == 0) return pick(0, 1) == 0 ? num() : var();
        static const std::vector<std::string> ops = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "<",
                                                     "<=", "==", "!=", "&&", "||", "**"};
        const std::string op = one_of(ops);
        const std::string right = op == "**" ? std::to_string(pick(0, 3)) : expr(depth + 1);
        switch (pick(0, 4)) {
            case 0: return "(" + expr(depth + 1) + " " + op + " " + right + ")";
            case 1: return expr(depth + 1) + op + right;
            case 2: return "-" + expr(depth + 1);
            case 3: return expr(depth + 1) + " ? " + expr(depth + 1) + " : " + expr(depth + 1);
            default: return "$" + var() + " " + op + " " + right;
        }
    }

    std::string body(int depth) {
        std::string s;
        const int n = pick(1, 3);
        for (int k = 0; k < n; ++k) {
            const std::string st = statement(depth + 1);
            s += st + (st.back() == '&' ? " " : "; ");  // `cmd & ;` is a syntax error
        }
        return s;
    }

    std::string statement(int depth) {
        const int kinds = depth >= 2 ? 12 : 27;
        switch (pick(0, kinds)) {
            case 0: return var() + "=" + num();
            case 1: return var() + "=$((" + expr(0) + "))";
            case 2: return "((" + var() + " = " + expr(0) + "))";
            case 3: return "((" + var() + one_of<std::string>({"++", "--", " += 2", " *= 3", " <<= 1", " %= 4"}) + "))";
            case 4: return "let '" + var() + "=" + expr(2) + "' || true";
            case 5: return "let \"" + var() + " = " + expr(1) + "\"";
            case 6: return var() + "=${" + one_of<std::string>({"NOPE", "TP", "EP"}) + one_of<std::string>({":-", "-", ":+", "+"}) + num() + "}";
            case 7: return "A[" + std::to_string(pick(0, 5)) + "]=" + num();
            case 8: return "A+=(" + num() + ")";
            case 9: return var() + "=${A[" + std::to_string(pick(0, 4)) + "]}";
            case 10: return "S=${S" + one_of<std::string>({"//b/x", "/a/", "#a", "##*b", "%c", "%%b*", "^^", ":1:3", ": -2"}) + "}";
            case 11: return var() + "=${#S}";
            case 12: return "true | " + var() + "=" + num();
            case 13: return var() + "=" + num() + " &";
            case 14: return "{ " + var() + "=" + num() + "; } | cat";
            case 15: return "( " + body(depth) + ")";
            case 16: {
                const std::string f = "f" + std::to_string(funcs_++);
                return f + "() { " + (pick(0, 1) ? "local " + var() + "=" + num() + "; " : "") + body(depth) +
                       (pick(0, 2) == 0 ? "return; " + var() + "=7; " : "") + "}; " + f;
            }
            case 17: return "if ((" + expr(1) + ")); then " + body(depth) + "else " + body(depth) + "fi";
            case 18: return "if [ \"$" + var() + "\" -" + one_of<std::string>({"eq", "ne", "lt", "gt", "le", "ge"}) + " " +
                            num() + " ]; then " + body(depth) + "fi";
            case 19: return "[[ $S == " + one_of<std::string>({"a*", "*c", "?b*", "[ab]*", "x*", "*b?a*"}) + " ]] && " + var() + "=" + num();
            case 20: return "[[ $S =~ " + one_of<std::string>({"^a", "(bc)+$", "^(a|b)*c", "x", "b.a"}) + " ]] || " + var() + "=" + num();
            case 21: return "case $" + var() + " in " + one_of<std::string>({"1|2", "[0-4]", "*", "9"}) + ") " + body(depth) +
                            ";; *) " + body(depth) + ";; esac";
            case 22: return "for i in 1 2 3; do " + body(depth) + (pick(0, 1) ? "[ $i = 2 ] && break; " : "[ $i = 1 ] && continue; ") + var() + "=$i; done";
            case 23: return "for ((i = 0; i < " + std::to_string(pick(0, 4)) + "; i++)); do ((" + var() + " += i)); done";
            case 24: return "torchrun mid.py --v $" + var() + " --s \"$S\"";
            case 25: return "X=\"--tp $" + var() + "\"; eval \"torchrun ev.py $X\"";
            case 26: return "bash -c \"" + var() + "=5; torchrun child.py --v \\$" + var() + "\"";
            default: return "export " + var();
        }
    }

    std::mt19937 rng_;
    int funcs_ = 0;
};


}  // namespace meshwork::test
