// The run information every trace of a layout starts with (tool, layout, cluster, world),
// built in one place for the simulator and the engines.
#pragma once

#include <string>

#include "core/layout/layout.h"
#include "core/trace/trace_event.h"

namespace meshwork {

// `source` names the producer ("meshwork-sim", "meshwork-cpu"); `clock_domain` its clock
// ("simulated", "steady").
TraceRunInfo layout_run_info(const Layout& layout, std::string source, std::string clock_domain);

}  // namespace meshwork
