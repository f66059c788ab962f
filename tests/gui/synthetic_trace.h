// A generated trace for timeline tests and benchmarks: per rank a compute stream of
// forward/backward kernels per layer and two communication streams, with randomised
// (seeded) durations, so that zoomed-out views are dense and zoomed-in ones sparse. With
// host_depth > 0 each rank also has a host thread whose slices nest that deep (one lane per
// call depth, as imported CPU ops are shown): each slice encloses kHostFanout slices of the
// depth below it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "gui/timeline/memory_timeline_source.h"

namespace meshwork::gui::test {

struct SyntheticTraceShape {
    int ranks = 16;
    std::int64_t events = 1'000'000;  // in total, over all lanes
    std::uint32_t seed = 7;
    int host_depth = 0;  // nested host slices: 0 none, else the depth of the call stacks
};
inline constexpr int kHostFanout = 4;

std::shared_ptr<MemoryTimelineSource> make_synthetic_trace(const SyntheticTraceShape& shape);
// The same events written to a Meshwork trace file with the profiler's TraceWriter (tracks
// in the same order as the in-memory source's lanes), so the two can be compared.
void write_synthetic_trace(const SyntheticTraceShape& shape, const std::string& path);

}  // namespace meshwork::gui::test
