// meshwork-cli stats --stragglers: the per rank × step figures (rank_steps.h) and the ranks
// that hold the job back (stragglers.h), as a table or JSON.
#pragma once

#include "profiler/store/trace_reader.h"

namespace meshwork::cli {

// Prints the report of `trace` to stdout; returns the exit code.
int print_straggler_report(const profiler::TraceReader& trace, bool json);

}  // namespace meshwork::cli
