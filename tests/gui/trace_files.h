// Small Meshwork trace files for the GUI suites, written with the profiler's TraceWriter.
#pragma once

#include <QString>

#include <cstdint>

namespace meshwork::gui::test {

// One step per rank: a compute event of `compute_ns` then a communication event of
// `comm_ns`, back to back, starting at `clock_start_ns` (+ 1 µs per rank), all marked
// step 0. `source` goes to the run info ("meshwork-sim" for a prediction).
void write_step_trace(const QString& path, const char* source, int ranks, std::int64_t clock_start_ns,
                      std::int64_t compute_ns, std::int64_t comm_ns);

}  // namespace meshwork::gui::test
