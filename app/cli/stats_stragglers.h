// meshwork-cli stats --stragglers: the per rank × step figures (rank_steps.h) and the ranks
// that hold the job back (stragglers.h), as a table or JSON, after the stats of the trace.
#pragma once

#include <nlohmann/json.hpp>

#include "profiler/store/trace_reader.h"

namespace meshwork::cli {

// Adds the report's keys to the stats JSON `out` (steps, steps_checked,
// peers_by_pipeline_stage, cells[], stragglers[], transient[]), or prints its tables.
void add_straggler_report(const profiler::TraceReader& trace, nlohmann::json& out);
void print_straggler_report(const profiler::TraceReader& trace);

}  // namespace meshwork::cli
