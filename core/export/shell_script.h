// Reading a launch script as bash would run it, without running anything. Real launch
// scripts (Megatron-LM's examples, SLURM jobs) are small bash programs: variables with
// defaults, arrays, $((...)) arithmetic, export, if/elif/else blocks on those variables,
// `eval "$cmd"`, `sh -c "$cmd"`, pipes into tee, #SBATCH lines. This interpreter follows
// them far enough to see which commands would run with which words:
//
// - assignments, arrays (NAME=(...), NAME+=(...)), export/unset/declare/local, ${VAR:-x},
//   ${VAR-x}, ${VAR:=x}, ${VAR:+x}, ${#VAR}, ${A[@]}, ${A[N]}, $((...)), word splitting of
//   unquoted expansions, quotes, continuations, comments, here-documents (skipped);
// - if/elif/else, &&/||, [ ... ], [[ ... ]], for-loops over known words, `.`/`source` of
//   files given in ScriptOptions::sources, eval and `sh|bash -c STRING`;
// - other commands (echo, mkdir, torchrun, ...) are recorded, never run.
//
// What cannot be known without running it is never guessed: command substitutions, the
// script's positional arguments ($1, unless given), variables the script never sets (the
// environment, unless `${VAR:-default}` gives a default, which is taken as written) and
// file tests. A word that depends on one carries `unresolved`, a sentence naming the
// variable and the line. An `if` (or &&/||) whose condition depends on one is a decision:
// run_shell_script takes the branch `choices` says, so that the caller can follow every
// path and check whether the path matters (explore_shell_script).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace meshwork {

struct ScriptOptions {
    // --set NAME=VALUE: values for variables the script cannot know ("TP", or "1" for $1).
    // They replace the script's own assignments of NAME and its defaults.
    std::map<std::string, std::string> set;
    // --source NAME=PATH: the file that `. NAME` / `source NAME` reads (matched by the last
    // path component of the word); sourced files not given here are not read (a note).
    std::map<std::string, std::string> sources;
};

struct ScriptWord {
    std::string text;        // after expansion and quote removal; unknown parts as written
    int line = 0;            // line of the command (of the script, or of the sourced file)
    std::string unresolved;  // empty when known; else why not, naming the variable and line
};

struct ScriptCommand {
    std::vector<std::string> env;  // leading NAME=value words of the command
    std::vector<ScriptWord> words; // the command and its arguments, after expansion
    std::string file;              // the script, or the sourced file the command is in
    int line = 0;
};

// An if-condition (or the left side of && / ||) whose value depends on something unknown.
struct ScriptDecision {
    std::string file;
    int line = 0;
    std::string condition;  // the condition's words as written
    std::string reason;     // why it is unknown (names the variable and its line)
    bool taken = false;     // the branch this run took: true = the condition held
};

struct ScriptRun {
    std::vector<ScriptCommand> commands;     // every external command, in order
    std::vector<ScriptDecision> decisions;   // in the order they were met
    // Every variable at the end, its value split into words as an unquoted $VAR would be.
    std::map<std::string, std::vector<ScriptWord>> variables;
    std::map<std::string, int> variable_lines;      // where each variable was last assigned
    std::map<std::string, std::string> sbatch;      // #SBATCH option (long name) -> value
    std::vector<std::pair<int, std::string>> exports;  // line, NAME=value of each `export`
    std::vector<std::string> notes;
    int exit_line = 0;  // > 0: the run stopped at `exit N` (N != 0) on this line: an error exit
};

// Runs `text`. `choices[k]` is the branch of the k-th decision met (missing: true).
// InputError(file, "line N", ...) for what is not bash (unbalanced quotes, a `fi` without
// `if`) and for constructs the interpreter does not follow (named).
ScriptRun run_shell_script(const std::string& text, const std::string& file,
                           const ScriptOptions& options, const std::vector<bool>& choices);

// Runs every combination of the decisions' branches (depth first, at most `max_runs`) and
// calls `visit` on each run. InputError naming the decisions when there are more paths.
void explore_shell_script(const std::string& text, const std::string& file,
                          const ScriptOptions& options, int max_runs,
                          const std::function<void(const ScriptRun&)>& visit);

}  // namespace meshwork
