// The serving side of the remote trace protocol (docs/remote-protocol.md), behind
// `meshwork-cli serve-trace PATH`: answers read-only queries of the one trace it was given,
// on file descriptors (the verb passes stdin and stdout; ssh carries them). It never names,
// opens or writes another file: requests carry no path, and one that tries is refused.
#pragma once

#include <string>

#include "profiler/store/trace_reader.h"

namespace meshwork::profiler::remote {

// The hello of a server that could not open its trace: {"ok": false, "error": message}.
// Written before exiting so that the client shows the reason.
void write_refusal_hello(int out_fd, const std::string& message);

// Writes the hello, then answers requests until "bye" or the end of the input. Refused
// requests (malformed, unknown, out of range) get an error answer and serving goes on.
// Returns 0 after bye or end of input, 1 when the output could not be written (the client
// went away).
int serve_trace(const TraceReader& reader, int in_fd, int out_fd);

}  // namespace meshwork::profiler::remote
