// The time a trace's first step starts: the earliest start among events of the lowest step
// number the trace records (a simulator's "step 0" marker, an engine's step ranges, a
// profiler's ProfilerStep). Two traces drawn from their own step starts line up even when
// their clocks do not (a simulation starts at 0, a measured run at the wall clock).
#pragma once

#include <cstdint>
#include <optional>

#include "profiler/store/trace_reader.h"

namespace meshwork::gui {

// nullopt when no event carries a step number. Reads every event (call off the UI thread).
std::optional<std::int64_t> first_step_start_ns(const profiler::TraceReader& trace);

}  // namespace meshwork::gui
