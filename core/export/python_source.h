// Python source read without running it: logical statements with their indentation and
// line, and the expressions configuration code is written with (constants, dotted names,
// calls with positional and keyword arguments, lists, tuples, dicts, attribute access on a
// call's result). What the readers of recipe modules (bridge_recipe_import.cpp) interpret;
// anything else is kept as text (PyExpr::Other) for the reader to name.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace meshwork {

// One logical line: comments removed, lines joined while brackets or a triple-quoted
// string are open.
struct PyStatement {
    std::string text;  // without its indentation
    int indent = 0;    // columns of leading whitespace (a tab counts as 8)
    int line = 0;      // first source line
};

std::vector<PyStatement> py_statements(const std::string& source);

struct PyKeyword;

struct PyExpr {
    // BinOp: items[0] s items[1] (s: + - * / when they are not both numbers (numbers fold),
    // or "or" / "and");
    // Compare: items[0] s items[1] (s: == != is "is not" in "not in"); Cond: items[0] if
    // items[1] else items[2]; Subscript: object[items[0]]; Dict: items the keys, keywords'
    // second the values (first: a key's text).
    enum Kind { None, Bool, Int, Float, Str, Name, Call, Attr, List, Dict, BinOp, Compare, Cond, Subscript, Other };
    Kind kind = Other;
    std::string text;         // the expression as written (trimmed)
    bool b = false;           // Bool
    long long i = 0;          // Int
    double f = 0;             // Float (and Int)
    std::string s;            // Str: the value; Name: the dotted name; Call/Attr: the callee or attribute
    std::shared_ptr<PyExpr> object;  // Call/Attr on an expression that is not a dotted name
    std::vector<PyExpr> items;       // Call: positional arguments; List: elements; Dict: values
    std::vector<PyKeyword> keywords;  // Call: keyword arguments; Dict: keys and values

    [[nodiscard]] bool constant() const { return kind == None || kind == Bool || kind == Int || kind == Float || kind == Str; }
    // A constant, or a list or dict of literals.
    [[nodiscard]] bool literal() const;
};

// A keyword argument (or a dict entry): name and value, as a pair's first and second.
struct PyKeyword {
    std::string first;
    PyExpr second;
};

// `a op b` for two numbers (Int or Float; op one of + - * /), as Python computes it: Int when
// both are Int and op is not '/'. nullopt for other operands, a division by zero, or a result
// that is not finite or beyond ±9e15. The result's text is left empty. The one arithmetic of
// the parser's constant folding and of a reader's evaluation.
std::optional<PyExpr> py_number_op(char op, const PyExpr& a, const PyExpr& b);

// Whether `s` is a Python identifier.
bool py_is_identifier(const std::string& s);
// The name at `pos` in `s` (identifier characters, and dots when `dotted`), advancing `pos`.
std::string py_take_name(const std::string& s, std::size_t& pos, bool dotted = false);

// Parses one expression; never throws: what it does not understand is Other with its text.
PyExpr parse_py_expr(const std::string& text);

// Visits each character of `s` outside string literals, from `from`, with the bracket depth
// before it ((, [ and { open; ), ] and } close); stops when `visit` returns false. The one
// bracket-and-quote scanner of the Python readers.
void py_scan(const std::string& s, std::size_t from, const std::function<bool(std::size_t i, int depth)>& visit);

// The comma-separated items at the top level of `s` (an argument or parameter list), as written.
std::vector<std::string> py_top_level_items(const std::string& s);

// `target = value` at the top level of a statement (not ==, <=, >=, !=, nor a keyword
// argument inside brackets); false when the statement is no plain assignment.
bool split_py_assignment(const std::string& statement, std::string& target, std::string& value);

}  // namespace meshwork
