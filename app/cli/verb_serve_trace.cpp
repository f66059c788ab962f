// meshwork-cli serve-trace: serves one trace over stdin/stdout for a remote timeline
// (`meshwork --trace host:/path` runs it through ssh; docs/remote-protocol.md).
#include <csignal>
#include <iostream>
#include <memory>
#include <string>

#include <unistd.h>

#include "app/cli/exit_codes.h"
#include "app/cli/verb.h"
#include "core/common/error.h"
#include "profiler/remote/trace_protocol.h"
#include "profiler/remote/trace_server.h"
#include "profiler/store/trace_reader.h"

namespace meshwork::cli {

namespace {

Verb make_serve_trace_verb(CLI::App& app) {
    auto* cmd = app.add_subcommand("serve-trace",
                                   "Serve one trace's read-only queries over stdin/stdout (for `meshwork --trace "
                                   "host:PATH`, through ssh)");
    auto path = std::make_shared<std::string>();
    cmd->add_option("TRACE", *path, "The Meshwork trace (.sqlite) to serve; the only file it reads")->required();
    cmd->footer("Speaks the remote trace protocol, version " + std::to_string(profiler::remote::kProtocolVersion) +
                " (docs/remote-protocol.md): a JSON hello on stdout, then one JSON request a line on stdin, "
                "each answered on stdout; stderr carries diagnostics only. It opens TRACE read-only, never "
                "writes a file and refuses requests that name one. Refused requests get an error answer and "
                "serving goes on. Not meant for a terminal: meshwork runs it through ssh.\n"
                "Exit codes: 0 after \"bye\" or the end of stdin, 1 when stdout was closed under it (the client "
                "went away), 2 when TRACE is not a readable trace (the hello then says why).");
    return {cmd, [path]() {
                // A client that goes away shows up as a failed write (exit 1), not a signal.
                std::signal(SIGPIPE, SIG_IGN);
                std::unique_ptr<profiler::TraceReader> reader;
                try {
                    reader = std::make_unique<profiler::TraceReader>(profiler::TraceReader::open(*path));
                } catch (const std::exception& e) {
                    profiler::remote::write_refusal_hello(STDOUT_FILENO, e.what());
                    throw;
                }
                return profiler::remote::serve_trace(*reader, STDIN_FILENO, STDOUT_FILENO) == 0 ? kExitOk
                                                                                                : kExitRuntimeFailure;
            }};
}

}  // namespace

MESHWORK_REGISTER_VERB(85, make_serve_trace_verb);

}  // namespace meshwork::cli
