#include "core/trace/trace_event.h"

namespace meshwork {

std::string to_string(EventKind kind) {
    switch (kind) {
        case EventKind::Compute: return "compute";
        case EventKind::Communication: return "communication";
        case EventKind::Memcpy: return "memcpy";
        case EventKind::Memset: return "memset";
        case EventKind::Marker: return "marker";
        case EventKind::Idle: return "idle";
    }
    return "?";
}

bool parse_event_kind(const std::string& text, EventKind& out) {
    for (auto k : {EventKind::Compute, EventKind::Communication, EventKind::Memcpy,
                   EventKind::Memset, EventKind::Marker, EventKind::Idle}) {
        if (text == to_string(k)) {
            out = k;
            return true;
        }
    }
    return false;
}

std::string to_string(TrackKind kind) {
    switch (kind) {
        case TrackKind::ComputeStream: return "compute";
        case TrackKind::CommStream: return "communication";
        case TrackKind::Host: return "host";
        case TrackKind::Memory: return "memory";
    }
    return "?";
}

const char* to_string(MemoryAction action) {
    switch (action) {
        case MemoryAction::Alloc: return "alloc";
        case MemoryAction::FreeRequested: return "free_requested";
        case MemoryAction::FreeCompleted: return "free_completed";
        case MemoryAction::SegmentAlloc: return "segment_alloc";
        case MemoryAction::SegmentFree: return "segment_free";
        case MemoryAction::Oom: return "oom";
    }
    return "?";
}

}  // namespace meshwork
