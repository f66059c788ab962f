// meshwork-cli import-trace: an Nsight Systems SQLite export or a PyTorch/Kineto JSON trace
// (plain or gzip) -> a Meshwork trace.
#include <iostream>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "exit_codes.h"
#include "import/import_trace.h"
#include "store/trace_output.h"
#include "verb.h"

namespace meshwork::cli {

Verb add_import_trace_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand("import-trace", "Convert an Nsight Systems SQLite export or a PyTorch "
                                                   "profiler (Kineto) JSON trace into a Meshwork trace");
    auto in = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto rank = std::make_shared<int>(-1);
    auto json = std::make_shared<bool>(false);
    cmd->add_option("INPUT", *in, "nsys export --type sqlite output, or a Kineto .json / .json.gz")->required();
    cmd->add_option("--out", *out, "The Meshwork trace to write (.sqlite)")->required();
    cmd->add_option("--rank", *rank,
                    "Rank of this file (default: Kineto distributedInfo.rank, else 'rankN' in the file "
                    "name, else 0)");
    cmd->add_flag("--json", *json, "Print JSON: format, rank, world_size, events, skipped, out");
    cmd->footer("The output appears only once complete (written under a temporary name, then renamed).\n"
                "Exit codes: 0 success, 1 runtime failure, 2 bad input (the message names the file and "
                "what is wrong).");
    return {cmd, [in, out, rank, json]() {
                if (*rank < -1) throw InputError("<flags>", "--rank", "must be 0 or more");
                profiler::TraceOutput output(*out);
                profiler::ImportOptions options;
                options.rank = *rank;
                const auto r = profiler::import_trace_file(*in, output.writer(), options);
                output.commit();
                if (*json) {
                    std::cout << nlohmann::json{{"format", r.format}, {"rank", r.rank},
                                                {"world_size", r.world_size}, {"events", r.events},
                                                {"skipped", r.skipped}, {"out", *out}}
                                     .dump(2)
                              << "\n";
                } else {
                    std::cout << *in << " (" << r.format << ", rank " << r.rank << "): " << r.events
                              << " events -> " << *out << "\n";
                }
                return kExitOk;
            }};
}

namespace {
Verb make_import_trace_verb(CLI::App& app) { return add_import_trace_verb(app); }
}  // namespace
MESHWORK_REGISTER_VERB(110, make_import_trace_verb);

}  // namespace meshwork::cli
