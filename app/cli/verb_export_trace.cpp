// meshwork-cli export-trace: a Meshwork trace -> Chrome trace JSON that Perfetto opens.
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/exit_codes.h"
#include "profiler/export/chrome_trace_export.h"
#include "profiler/store/trace_reader.h"
#include "app/cli/verb.h"

namespace meshwork::cli {

Verb add_export_trace_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand("export-trace", "Write a Meshwork trace as Chrome trace JSON "
                                                   "(opens in Perfetto and chrome://tracing)");
    auto in = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("TRACE", *in, "A Meshwork trace (.sqlite)")->required();
    cmd->add_option("--out", *out, "The JSON file to write")->required();
    cmd->add_flag("--json", *json, "Print JSON: events, counters, out");
    cmd->footer("One process per rank, one thread per track. The output appears only once complete.\n"
                "Exit codes: 0 success, 1 runtime failure, 2 bad input (the message names the file and "
                "what is wrong).");
    return {cmd, [in, out, json]() {
                const auto trace = profiler::TraceReader::open(*in);
                const auto r = profiler::export_chrome_trace(trace, *out);
                if (*json) {
                    std::cout << nlohmann::json{{"events", r.events}, {"counters", r.counters}, {"out", *out}}
                                     .dump(2)
                              << "\n";
                } else {
                    std::cout << *in << ": " << r.events << " events, " << r.counters << " counter samples -> "
                              << *out << "\n";
                }
                return kExitOk;
            }};
}

namespace {
Verb make_export_trace_verb(CLI::App& app) { return add_export_trace_verb(app); }
}  // namespace
MESHWORK_REGISTER_VERB(130, make_export_trace_verb);

}  // namespace meshwork::cli
