// Measured memory of a trace (its memory_events, format 2): per rank and device the peak of
// allocated and of reserved bytes, the allocator's cache at the allocated peak (reserved -
// allocated), and what was alive at that peak by category of its allocation's stack.
// Rules: docs/profiler.md "Measured memory".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace meshwork::profiler {

class TraceReader;

struct DeviceMemoryStats {
    int rank = 0;
    int device = 0;  // -1 the host
    std::int64_t events = 0;
    std::int64_t allocated_peak_bytes = 0;
    std::int64_t allocated_peak_time_ns = 0;
    std::int64_t reserved_peak_bytes = 0;
    // Reserved but not allocated at the allocated peak: the caching allocator's free blocks.
    std::int64_t cache_at_peak_bytes = 0;
    // = allocated_peak_bytes, split by category (memory_category()); the blocks allocated before
    // the recorded history are "allocated before the history".
    std::int64_t live_at_peak_bytes = 0;
    std::map<std::string, std::int64_t> at_peak_by_category;
};

struct MemoryStats {
    std::vector<DeviceMemoryStats> devices;  // by rank, then device
};

// The category of an allocation from its stack (one frame a line, innermost first); rules in
// docs/profiler.md. "no stack recorded" when empty.
std::string memory_category(const std::string& frames);

MemoryStats memory_stats(const TraceReader& trace);
nlohmann::json memory_stats_json(const MemoryStats& stats);

}  // namespace meshwork::profiler
