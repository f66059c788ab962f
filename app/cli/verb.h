// A meshwork-cli verb: its CLI11 subcommand and the function that runs it after parsing.
// Each verb lives in verb_<name>.cpp and registers itself with MESHWORK_REGISTER_VERB, so
// adding a verb touches no shared file.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace meshwork::cli {

struct Verb {
    CLI::App* command = nullptr;
    std::function<int()> run;  // returns an exit code; may throw InputError/RuntimeError
};

using VerbFactory = Verb (*)(CLI::App& app);

// Registers a verb; `rank` orders the verbs in --help (CLI.md's order).
bool register_verb(int rank, VerbFactory factory);
// Adds every registered verb to `app`, in rank order.
std::vector<Verb> add_all_verbs(CLI::App& app);

}  // namespace meshwork::cli

#define MESHWORK_REGISTER_VERB(rank, factory) \
    static const bool meshwork_verb_registered_##factory = \
        ::meshwork::cli::register_verb(rank, &factory)
