#include "analysis/event_classify.h"

#include <array>
#include <utility>

namespace meshwork::profiler {

namespace {
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }
}  // namespace

KernelClass classify_kernel(std::string_view name) {
    if (starts_with(name, "nccl") || contains(name, "ncclKernel")) return KernelClass::Communication;
    if (starts_with(name, "Memcpy") || starts_with(name, "Memset")) return KernelClass::Memory;
    if (contains(name, "Sync") && contains(name, "wait")) return KernelClass::Sync;
    return KernelClass::Compute;
}

EventKind event_kind_of_kernel(std::string_view name) {
    switch (classify_kernel(name)) {
        case KernelClass::Communication: return EventKind::Communication;
        case KernelClass::Memory:
            return starts_with(name, "Memset") ? EventKind::Memset : EventKind::Memcpy;
        case KernelClass::Sync: return EventKind::Idle;
        case KernelClass::Compute: break;
    }
    return EventKind::Compute;
}

std::string_view nccl_collective_of(std::string_view name) {
    if (!starts_with(name, "nccl")) return {};
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kNames{{
        {"AllReduce", "all_reduce"},
        {"AllGather", "all_gather"},
        {"ReduceScatter", "reduce_scatter"},
        {"Broadcast", "broadcast"},
        {"Reduce", "reduce"},
        {"SendRecv", "send_recv"},
        {"AllToAll", "all_to_all"},
        {"Generic", "generic"},
    }};
    for (const auto& [key, collective] : kNames) {
        if (contains(name, key)) return collective;
    }
    return {};
}

}  // namespace meshwork::profiler
