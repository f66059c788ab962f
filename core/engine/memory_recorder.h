// A rank's allocation history for run --profile: every allocation and free of the engine's
// backend (CPU and CUDA alike) as memory events in the trace (core/trace/memory_event.h),
// each allocation with the kind of what it holds (core/trace/memory_kind.h) as its one stack
// frame, so that `stats`, `compare` and `calibrate` read the engine's own run as they read a
// PyTorch memory snapshot. Header-only: the CUDA plugin records through it too.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/trace/memory_event.h"
#include "core/trace/memory_kind.h"
#include "core/trace/trace_event.h"

namespace meshwork::engine {

class MemoryRecorder {
public:
    // `device`: the device index written on the events (the backend's device_index()).
    MemoryRecorder(TraceSink& sink, int rank, int device) : sink_(&sink), rank_(rank), device_(device) {}

    // `allocated_after`: bytes handed to tensors after the event; `reserved_after`: bytes the
    // backend holds from the system after it (allocated plus its cache of freed blocks).
    void alloc(const void* addr, std::size_t bytes, MemoryKind kind, std::size_t allocated_after,
               std::size_t reserved_after) {
        write_event(MemoryAction::Alloc, addr, bytes, allocated_after, reserved_after, memory_kind_frame(kind));
    }
    // Frees come from Tensor's destructor (core/engine/tensor.h), which must not throw: a sink
    // that fails here (a full disk) is not lost, because the writer stays failed and the next
    // allocation or op event the run adds throws the same error from a place that may throw.
    void free(const void* addr, std::size_t bytes, std::size_t allocated_after, std::size_t reserved_after) noexcept {
        try {
            write_event(MemoryAction::FreeRequested, addr, bytes, allocated_after, reserved_after, {});
        } catch (...) {
        }
    }

private:
    void write_event(MemoryAction action, const void* addr, std::size_t bytes, std::size_t allocated,
              std::size_t reserved, std::string frames) {
        MemoryEvent e;
        e.rank = rank_;
        e.device = device_;
        // The host's steady clock: the clock the engines' op events are on (Backend::event_time_ns).
        e.time_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count();
        e.action = action;
        e.addr = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(addr));
        e.bytes = static_cast<std::int64_t>(bytes);
        e.allocated_bytes = static_cast<std::int64_t>(allocated);
        e.reserved_bytes = static_cast<std::int64_t>(reserved);
        e.frames = std::move(frames);
        sink_->add_memory_event(e);
    }

    TraceSink* sink_;
    int rank_;
    int device_;
};

}  // namespace meshwork::engine
