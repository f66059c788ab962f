// bash's arithmetic ($((...)), ((...)), let, for ((...)), array indices), as bash 5 computes
// it (expr.c): 64-bit integers that wrap, INTMAX_MIN / -1 = INTMAX_MIN and INTMAX_MIN % -1 = 0,
// shift counts taken modulo 64 (what x86 does with bash's `<<`), "division by 0" and
// "exponent less than 0" as errors, constants in bases 2..64 (0x1f, 010, 64#_), a variable's
// value itself evaluated as an expression, the assignment operators, ++/--, `,`, `?:` and
// short-circuit && and || that skip the side effects of what they do not evaluate.
//
// Parameters ($X, ${X}) are expanded by the caller first, as bash does; an unknown span of
// the expanded text is an operand whose value is unknown, and every result that depends on
// it is unknown too (ArithValue::unknown names its record).
#pragma once

#include <string>

#include "core/export/shell_value.h"

namespace meshwork::shell {

struct ArithValue {
    long long v = 0;
    int unknown = -1;  // >= 0: unknown, depending on this record
};

// What the evaluator asks of the interpreter: variables (NAME or NAME[INDEX]) and work.
class ArithHost {
public:
    virtual ~ArithHost() = default;
    // The variable's value (empty when unset); `indexed`: NAME[index].
    virtual Value arith_get(const std::string& name, bool indexed, long long index) = 0;
    virtual void arith_set(const std::string& name, bool indexed, long long index, const ArithValue& v) = 0;
    virtual void arith_spend(long long units) = 0;
};

struct ArithOutcome {
    enum Kind {
        Ok,
        Unknown,  // depends on an unknown: `unknown` is its record
        Error,    // bash reports an error (`message`): $((...)) stops the script, ((...)) fails
        Limit,    // nested past kMaxArithDepth: import-args refuses (`message`)
    };
    Kind kind = Ok;
    long long value = 0;
    int unknown = -1;
    std::string message;
};

// Nesting (parentheses, unary operators, a variable whose value is an expression naming
// another) deeper than this is refused: the evaluator recurses, and 10,000 parentheses would
// overflow the stack. bash itself stops at 1024 ("expression recursion level exceeded",
// expr.c MAX_EXPR_RECURSION_LEVEL); launch scripts nest a handful.
inline constexpr int kMaxArithDepth = 256;

ArithOutcome eval_arith(const Value& expr, ArithHost& host);

}  // namespace meshwork::shell
