// meshwork-cli recover-trace: what a killed writer committed to a trace, as a new trace.
// Readers refuse a trace left with a journal or log beside it and never replay it (that
// writes the file and can delete another, docs/RELIABILITY.md); this verb replays it on a
// copy of its own and writes the result under a new name.
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/exit_codes.h"
#include "app/cli/verb.h"
#include "profiler/store/trace_recover.h"

namespace meshwork::cli {

namespace {

Verb make_recover_trace_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand("recover-trace",
                                   "Recover a trace its writer left unfinished (killed) into a new trace");
    auto in = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("TRACE", *in, "The unfinished trace (.sqlite), its -journal or -wal beside it")->required();
    cmd->add_option("--out", *out, "The trace to write (never the input)")->required();
    cmd->add_flag("--json", *json, "Print JSON: out, replayed, events, complete");
    cmd->footer(
        "The input and the files beside it are copied and never written; SQLite replays the journal or "
        "log on the copy. A journal naming a super-journal is refused (Meshwork never writes one). The "
        "output appears only once complete.\n"
        "Exit codes: 0 success, 1 runtime failure, 2 bad input (the message names the file and what is "
        "wrong).");
    return {cmd, [in, out, json]() {
                const auto r = profiler::recover_trace(*in, *out);
                if (*json) {
                    std::cout << nlohmann::json{{"out", *out},
                                                {"replayed", r.replayed},
                                                {"events", r.events},
                                                {"complete", r.complete}}
                                     .dump(2)
                              << "\n";
                } else {
                    std::cout << *in << " -> " << *out << ": " << r.events << " events"
                              << (r.replayed.empty() ? ", nothing to replay" : ", replayed " + r.replayed)
                              << (r.complete ? "" : "; its writer never closed it (no summaries: slower to draw)")
                              << "\n";
                }
                return kExitOk;
            }};
}

}  // namespace

MESHWORK_REGISTER_VERB(115, make_recover_trace_verb);

}  // namespace meshwork::cli
