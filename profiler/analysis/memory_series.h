// Measured memory over time, per rank and device (a trace's memory_events, format 2): the
// allocated and reserved totals after each event, reduced to at most a given number of
// points per device for drawing. Each point covers a time bucket and keeps the bucket's
// largest totals, so the peaks survive the reduction (the allocated peak of a series equals
// memory_stats' allocated_peak_bytes whenever the peak is after the first event).
#pragma once

#include <cstdint>
#include <vector>

namespace meshwork::profiler {

class TraceReader;

struct MemoryPoint {
    std::int64_t time_ns = 0;
    std::int64_t allocated_bytes = 0;
    std::int64_t reserved_bytes = 0;
};

struct MemorySeries {
    int rank = 0;
    int device = 0;  // -1 the host
    std::vector<MemoryPoint> points;  // in time order
};

// `max_points` >= 2 per device; every device of the trace, by rank then device.
std::vector<MemorySeries> memory_series(const TraceReader& trace, std::size_t max_points = 2000);

}  // namespace meshwork::profiler
