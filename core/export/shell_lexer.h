// The tokens and syntax tree of a bash script, as far as shell_script.cpp interprets it.
// Words keep their quotes (raw text): expansion happens when the interpreter runs them,
// with the variables of that moment.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace meshwork::shell {

struct Token {
    enum Kind { Word, Array, Op, Redirect, End } kind = End;
    std::string text;                 // Word: raw text; Op/Redirect: the operator
    std::vector<std::string> items;   // Array: raw items; Array name in `text`
    bool append = false;              // Array: NAME+=(...)
    int line = 0;
};

struct SbatchLine {
    int line = 0;
    std::string text;  // after "#SBATCH"
};

struct Lexed {
    std::vector<Token> tokens;  // ends with End
    std::vector<SbatchLine> sbatch;
};

// InputError(file, "line N", ...) for unbalanced quotes, brackets and here-documents.
Lexed lex_shell(const std::string& text, const std::string& file);

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Node {
    enum Kind { Simple, Pipeline, AndOr, List, If, For, While, Case, Subshell, Group, Function };
    Kind kind = Simple;
    int line = 0;
    std::vector<Token> words;          // Simple: Word and Array tokens; For: the item words
    std::vector<NodePtr> kids;         // Pipeline/AndOr/List parts; If: cond,body pairs then else
    std::vector<std::string> ops;      // AndOr: "&&" / "||" between kids
    bool negate = false;               // Pipeline: '!'
    bool has_else = false;             // If: the last kid is the else body
    bool has_in = false;               // For: an `in` list was given
    std::string name;                  // For: the variable; Function: the name; Case: the word
    std::vector<std::vector<std::string>> patterns;  // Case: per clause (kids[i] the body)
    std::string source;                // the text of a condition, for messages
};

// InputError(file, "line N", ...) for syntax errors (a `fi` without `if`, a missing `done`).
NodePtr parse_shell(const Lexed& lexed, const std::string& file);

}  // namespace meshwork::shell
