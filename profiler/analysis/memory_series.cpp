#include "profiler/analysis/memory_series.h"

#include <algorithm>

#include "profiler/store/trace_reader.h"

namespace meshwork::profiler {

std::vector<MemorySeries> memory_series(const TraceReader& trace, std::size_t max_points) {
    max_points = std::max<std::size_t>(2, max_points);
    std::vector<MemorySeries> out;
    if (!trace.has_memory_tables()) return out;
    // Events arrive by rank, device, time (TraceReader::for_each_memory_event).
    trace.for_each_memory_event([&](const MemoryEvent& m, std::int64_t) {
        if (out.empty() || out.back().rank != m.rank || out.back().device != m.device) {
            out.push_back({m.rank, m.device, {}});
        }
        out.back().points.push_back({m.time_ns, m.allocated_bytes, m.reserved_bytes});
    });
    for (auto& s : out) {
        auto& p = s.points;
        if (p.size() <= max_points) continue;
        // Equal time buckets; each keeps its first time and its largest totals.
        const std::int64_t t0 = p.front().time_ns, span = std::max<std::int64_t>(1, p.back().time_ns - t0);
        const auto buckets = static_cast<std::int64_t>(max_points);
        std::vector<MemoryPoint> reduced;
        reduced.reserve(max_points);
        std::int64_t current = -1;
        for (const auto& q : p) {
            const std::int64_t b = std::min(buckets - 1, (q.time_ns - t0) * buckets / span);
            if (b != current) {
                reduced.push_back(q);
                current = b;
            } else {
                reduced.back().allocated_bytes = std::max(reduced.back().allocated_bytes, q.allocated_bytes);
                reduced.back().reserved_bytes = std::max(reduced.back().reserved_bytes, q.reserved_bytes);
            }
        }
        p = std::move(reduced);
    }
    return out;
}

}  // namespace meshwork::profiler
