// One change of a device's memory as the framework's allocator saw it: PyTorch's CUDA
// caching allocator (a memory snapshot's device_traces) or the profiler's [memory] events.
// The trace store keeps them in memory_events (docs/trace-format.md "Memory").
#pragma once

#include <cstdint>
#include <string>

namespace meshwork {

enum class MemoryAction : std::uint8_t {
    Alloc = 0,          // a block handed to a tensor: allocated += bytes
    FreeRequested = 1,  // the tensor freed it: allocated -= bytes (the block may wait for streams)
    FreeCompleted = 2,  // the block is reusable (PyTorch's free_completed)
    SegmentAlloc = 3,   // memory reserved from the driver (cudaMalloc / a mapped expandable range)
    SegmentFree = 4,    // reserved memory given back (cudaFree / unmapped)
    Oom = 5,            // an allocation failed; bytes: what the driver had free
};
inline constexpr int kMemoryActionCount = 6;

const char* to_string(MemoryAction action);

struct MemoryEvent {
    int rank = 0;
    int device = 0;               // the device's index; -1 the host (CPU memory)
    std::int64_t time_ns = 0;     // in the trace's clock domain
    MemoryAction action = MemoryAction::Alloc;
    std::int64_t addr = 0;
    std::int64_t bytes = 0;       // >= 0; the action gives the sign
    std::int64_t stream = 0;
    // The device's totals just after this event (as the allocator counts them).
    std::int64_t allocated_bytes = 0;
    std::int64_t reserved_bytes = 0;
    // The allocation's stack, one frame a line, innermost first ("name file:line"); empty
    // when the source kept none.
    std::string frames;
};

}  // namespace meshwork
