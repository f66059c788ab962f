// The time breakdown of one step of one rank (HTA's temporal breakdown restricted to a step):
// the one definition that the per-rank statistics (trace_stats.h) and the per rank × step
// matrix (rank_steps.h) share.
#pragma once

#include <cstdint>
#include <vector>

#include "core/trace/trace_event.h"
#include "profiler/analysis/intervals.h"

namespace meshwork::profiler {

// Work that occupies a device stream (kernels, copies); markers, idle spans and host events
// are not.
bool is_device_work(EventKind k);

// Extent, compute, communication, exposed communication and idle time of one step, in ns.
struct StepTimes {
    std::int64_t span = 0, compute = 0, comm = 0, exposed = 0, idle = 0;
};

// From the step's device intervals (`all`), those of its compute and those of its
// communication; none needs to be sorted or disjoint.
StepTimes step_times(std::vector<Interval> all, std::vector<Interval> compute, std::vector<Interval> comm);

}  // namespace meshwork::profiler
