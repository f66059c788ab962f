// Every text an import reads as bash (the script, a sourced file, the string of an `eval`,
// `sh -c` or a here-document job), lexed and parsed once per import and shared by every path
// explore_shell_script follows. Without it each path re-read each text, and an eval in a loop
// re-read its string on every iteration: work outside the budget, 6-22 s on 8-20 KB fuzz
// inputs under ASan (issue 36). Parsing is paid from the import's Budget, so that the time
// spent reading text is bounded with the rest of the work.
//
// A tree is a function of the text, of whether the interpreter wrote it (`internal`: its
// unknowns are markers, shell_lexer.h) and of the line that re-reads it (eval's commands
// carry the line of the eval); the file name only appears in error messages, and an error
// ends the import, so it is not part of the key. The trees live as long as the cache: the
// interpreter keeps pointers to the functions they define.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/export/shell_lexer.h"
#include "core/export/shell_value.h"

namespace meshwork::shell {

struct Parsed {
    std::vector<SbatchLine> sbatch;     // the #SBATCH lines of the text
    std::vector<std::string> assigned;  // names it assigns somewhere (assigned_names)
    NodePtr tree;
};

class ParseCache {
public:
    explicit ParseCache(Budget& budget) : budget_(budget) {}

    // The parsed `text`. `line` > 0: every token is placed on that line (re-read text).
    // Throws what lex_shell and parse_shell throw, and BudgetExhausted.
    const Parsed& parse(const std::string& text, const std::string& file, bool internal, int line);

    // The text of a file the user named (read_text_input: a regular file, size-capped,
    // UTF-8), read once per import. Throws InputError as read_text_input does.
    const std::string& file_text(const std::string& path);

private:
    struct Key {
        std::string text;
        bool internal;
        int line;
        bool operator==(const Key&) const = default;
    };
    struct KeyHash {
        std::size_t operator()(const Key& k) const;
    };

    Budget& budget_;
    std::unordered_map<Key, Parsed, KeyHash> parsed_;
    std::unordered_map<std::string, std::string> files_;
};

// Names a script assigns somewhere (NAME=, NAME+=, NAME[i]=, arrays, for/local/declare/typeset
// NAME, and the names an arithmetic command assigns): unset there means empty, not "from the
// environment".
std::vector<std::string> assigned_names(const std::vector<Token>& tokens);

bool is_name_char(char c);
bool is_name(const std::string& s);  // a bash variable name: [A-Za-z_][A-Za-z0-9_]*

}  // namespace meshwork::shell
