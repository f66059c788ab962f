// The tokens and syntax tree of a bash script, as far as shell_script.cpp interprets it.
// Words keep their quotes (raw text): expansion happens when the interpreter runs them,
// with the variables of that moment.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace meshwork::shell {

struct Token {
    enum Kind { Word, Array, Op, Redirect, Arith, End } kind = End;
    std::string text;                 // Word: raw text; Op/Redirect: the operator; Arith: inside (( ))
    std::vector<std::string> items;   // Array: raw items; Array name in `text`
    bool append = false;              // Array: NAME+=(...)
    int line = 0;
    // The target word of a << redirection: the here-document's body (raw) and whether its
    // delimiter was quoted (then the body is not expanded).
    bool heredoc = false;
    bool heredoc_quoted = false;
    std::string heredoc_body;
};

struct SbatchLine {
    int line = 0;
    std::string text;  // after "#SBATCH"
};

struct Lexed {
    std::vector<Token> tokens;  // ends with End
    std::vector<SbatchLine> sbatch;
};

// InputError(file, "line N", ...) for unbalanced quotes, brackets and here-documents, for a
// NUL byte (bash cannot pass one in an argument) and for nesting past kMaxNesting.
// `internal`: text the interpreter re-reads (eval, sh -c), where a NUL starts one of its
// markers of an unknown value (shell_script.cpp); never set for a file's text.
Lexed lex_shell(const std::string& text, const std::string& file, bool internal = false);

// Quotes, $( ), ${ } and compound commands nested deeper than this are refused: the lexer,
// the parser and the interpreter recurse, and 5,000 nested ( ) would overflow the stack.
inline constexpr int kMaxNesting = 200;

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Node {
    enum Kind { Simple, Pipeline, AndOr, List, If, For, ArithFor, While, Case, Subshell, Group, Function, Arith };
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
    bool background = false;           // AndOr: ended by '&' (runs in a subshell)
    bool continues_line = false;       // AndOr: after a ';' or '&' on the same line (bash
                                       //   drops it with its line when arithmetic fails)
    std::vector<std::string> arith;    // Arith: the expression; ArithFor: init, test, step
    bool has_heredoc = false;          // Simple: a here-document is fed to the command
    bool heredoc_quoted = false;       //   its delimiter was quoted: the body is not expanded
    std::string heredoc_body;          //   its body, raw
};

// InputError(file, "line N", ...) for syntax errors (a `fi` without `if`, a missing `done`).
NodePtr parse_shell(const Lexed& lexed, const std::string& file);

}  // namespace meshwork::shell
