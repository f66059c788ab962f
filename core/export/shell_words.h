// Splitting a pasted shell command line into words as bash would, without running anything:
// quotes, backslash escapes and backslash-newline continuations, comments, and several
// commands on separate lines or after ';'. Expansions ($VAR, ${VAR}, $(...), `...`) are not
// performed: a word that needs one is marked so that the caller can name it.
#pragma once

#include <string>
#include <vector>

namespace meshwork {

struct ShellWord {
    std::string text;        // after quote removal
    int line = 0;            // 1-based line where the word starts
    std::string expansion;   // the first unexpanded $... or `...` in the word; empty if none
    bool assignment = false; // NAME=value with an unquoted NAME (an environment assignment)
};

using ShellCommand = std::vector<ShellWord>;

// Throws InputError(file, "line N", ...) for unbalanced quotes and for pipes, redirections,
// '&&' and '||', which a command line for import must not contain.
std::vector<ShellCommand> split_shell_commands(const std::string& text, const std::string& file);

}  // namespace meshwork
