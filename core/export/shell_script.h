// Reading a launch script as bash would run it, without running anything. Real launch
// scripts (Megatron-LM's examples, SLURM jobs) are small bash programs: variables with
// defaults, arrays, arithmetic, functions, export, if/elif/else blocks on those variables,
// `eval "$cmd"`, `sh -c "$cmd"`, pipes into tee, #SBATCH lines, `sbatch <<EOF` jobs. This
// interpreter follows them far enough to see which commands would run with which words,
// with bash's semantics (checked against bash itself by tst_shell_differential):
//
// - assignments, arrays (NAME=(...), NAME+=(...), NAME[i]=v), export/unset/declare/readonly,
//   `local` and declare in functions (scoped to the call, seen by its callees, as bash's
//   dynamic scoping), ${VAR:-x} ${VAR-x} ${VAR:=x} ${VAR:+x} ${#VAR} ${A[@]} ${A[N]}
//   ${V#p} ${V%p} ${V/p/r} ${V:o:l} ${V,,} ${V^^}, word splitting of unquoted expansions,
//   quotes, continuations, comments;
// - arithmetic as bash computes it ($((...)), ((...)), let, for ((;;)); shell_arith.h);
// - if/elif/else, &&/||, [ ... ], [[ ... ]] (globs and =~ in linear time, shell_match.h),
//   case, for-loops over known words, functions with return, break/continue, `.`/`source`
//   of files given in ScriptOptions::sources, eval, `sh|bash -c STRING`, and here-documents
//   fed to sbatch, bash or sh (the job script they hold);
// - subshells as bash runs them: ( ), the elements of a pipeline, `cmd &`, `bash -c` and
//   here-document jobs change no variable, function or argument of the script;
// - other commands (echo, mkdir, torchrun, ...) are recorded, never run.
//
// What cannot be known without running it is never guessed: command substitutions, the
// script's positional arguments ($1, unless given), variables the script never sets (the
// environment, unless `${VAR:-default}` gives a default, which is taken as written), `read`
// and file tests. Such a value is unknown: a distinct value in the interpreter (a span of
// shell_value.h's Value, never text a script could write), and a word that depends on one
// carries `unresolved`, a sentence naming the variable and the line. An `if` (or &&/||)
// whose condition depends on one is a decision: run_shell_script takes the branch `choices`
// says, so that the caller can follow every path and check whether the path matters
// (explore_shell_script). File tests are decisions like any other unknown condition.
//
// Bounded: nesting (kMaxNesting), calls, loop iterations, value sizes, recorded commands and
// the total work (a budget shared by every path explore_shell_script follows) each end the
// run with an InputError naming the line (docs/RELIABILITY.md lists the limits).
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
    // The work budget of the whole run or exploration, in the interpreter's units; 0: the
    // default (shell_script.cpp, kBudgetUnits). The fuzz target sets a small one, so that
    // inputs that spend it cost milliseconds.
    long long work_budget = 0;
};

struct ScriptWord {
    std::string text;        // after expansion and quote removal; unknown parts as written
    int line = 0;            // line of the command (of the script, or of the sourced file)
    std::string unresolved;  // empty when known; else why not, naming the variable and line
    std::string known_tail;  // the known text after the last unknown part ("/pretrain_gpt.py"
                             // of `$DIR/pretrain_gpt.py`); the whole text when known
    std::string origin;      // where a word that no script holds came from, for messages
                             // ("recipe.py:42 cfg.model.seq_length"); empty: argv[K]
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
    int exit_line = 0;  // > 0: the run stopped at `exit N` (N != 0) on this line, or where
                        // bash stops a script (an arithmetic error in $((...))): an error exit
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
