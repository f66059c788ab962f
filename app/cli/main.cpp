// meshwork-cli: the headless interface (CLI.md). Thin: parses arguments, calls the libraries,
// maps failures to exit codes and one clear line on stderr.
#include <iostream>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "app/cli/exit_codes.h"
#include "app/cli/verb.h"

int main(int argc, char** argv) {
    using namespace meshwork;
    using namespace meshwork::cli;
    CLI::App app{"meshwork-cli " MESHWORK_VERSION
                 ": design, predict, run and profile model-parallel layouts"};
    app.require_subcommand(1);
    app.set_version_flag("--version", MESHWORK_VERSION);
    app.footer("Exit codes: 0 success, 1 runtime failure, 2 bad input, 3 a check did not hold.\n"
               "Run 'meshwork-cli VERB --help' for the flags of a verb.");
    std::vector<Verb> verbs = add_all_verbs(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return kExitBadInput;
    }
    for (auto& verb : verbs) {
        if (!verb.command->parsed()) continue;
        try {
            return verb.run();
        } catch (const InputError& e) {
            for (const auto& issue : e.issues()) print_error_line(issue.to_string());
            return kExitBadInput;
        } catch (const RuntimeError& e) {
            print_error_line(e.what());
            return kExitRuntimeFailure;
        } catch (const std::exception& e) {
            print_error_line(e.what());
            return kExitRuntimeFailure;
        }
    }
    return kExitBadInput;
}
