#include "profiler/analysis/event_classify.h"

#include <array>
#include <string>
#include <utility>

namespace meshwork::profiler {

namespace {
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) {
    return s.find(p) != std::string_view::npos;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// A kernel name, demangled, may start with "void " and a namespace ("void c10d::symmetric_memory::
// multimem_all_reduce_kernel<...>"): the function's own name is what tells its class.
std::string_view function_name(std::string_view name) {
    if (starts_with(name, "void ")) name.remove_prefix(5);
    const auto paren = name.find_first_of("<(");
    std::string_view head = paren == std::string_view::npos ? name : name.substr(0, paren);
    return head;
}

// Communication kernels that are not NCCL's: PyTorch symmetric memory (multimem / NVLS,
// one-shot and two-shot all-reduce), vLLM and TensorRT-LLM custom all-reduce, DeepEP
// dispatch/combine. Matched on the function name, lowercased.
bool is_symmetric_or_custom_collective(std::string_view fn) {
    const std::string f = lower(fn);
    static constexpr std::array<std::string_view, 9> kMarks{
        "multimem_",          "one_shot_all_reduce", "two_shot_all_reduce",
        "symmetric_memory::", "cross_device_reduce", "custom_all_reduce",
        "allreduce_fusion",   "deep_ep::",           "lamport"};
    for (auto m : kMarks) {
        if (contains(f, m)) return true;
    }
    return false;
}
}  // namespace

KernelClass classify_kernel(std::string_view name) {
    // NCCL (ncclKernel_*, ncclDevKernel_*, nccl::*), RCCL on ROCm (same names, or rccl*).
    if (starts_with(name, "nccl") || starts_with(name, "rccl") || contains(name, "ncclKernel") ||
        contains(name, "ncclDevKernel") || contains(name, "rcclKernel")) {
        return KernelClass::Communication;
    }
    if (is_symmetric_or_custom_collective(function_name(name))) return KernelClass::Communication;
    if (starts_with(name, "Memcpy") || starts_with(name, "Memset")) return KernelClass::Memory;
    if (contains(name, "Sync") && contains(name, "wait")) return KernelClass::Sync;
    return KernelClass::Compute;
}

EventKind event_kind_of_kernel(std::string_view name) {
    switch (classify_kernel(name)) {
        case KernelClass::Communication:
            return EventKind::Communication;
        case KernelClass::Memory:
            return starts_with(name, "Memset") ? EventKind::Memset : EventKind::Memcpy;
        case KernelClass::Sync:
            return EventKind::Idle;
        case KernelClass::Compute:
            break;
    }
    return EventKind::Compute;
}

Collective nccl_collective_of(std::string_view name) {
    if (classify_kernel(name) != KernelClass::Communication) return Collective::None;
    // "Reduce" after the names that contain it.
    static constexpr std::array<std::pair<std::string_view, Collective>, 8> kNames{{
        {"AllReduce", Collective::AllReduce},
        {"AllGather", Collective::AllGather},
        {"ReduceScatter", Collective::ReduceScatter},
        {"Broadcast", Collective::Broadcast},
        {"Reduce", Collective::Reduce},
        {"SendRecv", Collective::SendRecv},
        {"AllToAll", Collective::AllToAll},
        {"Generic", Collective::Generic},
    }};
    for (const auto& [key, collective] : kNames) {
        if (contains(name, key)) return collective;
    }
    // Lower-case forms of the symmetric-memory and custom kernels.
    const std::string f = lower(function_name(name));
    static constexpr std::array<std::pair<std::string_view, Collective>, 8> kLower{{
        {"all_reduce", Collective::AllReduce},
        {"allreduce", Collective::AllReduce},
        {"cross_device_reduce", Collective::AllReduce},
        {"all_gather", Collective::AllGather},
        {"allgather", Collective::AllGather},
        {"reduce_scatter", Collective::ReduceScatter},
        {"dispatch", Collective::AllToAll},
        {"combine", Collective::AllToAll},
    }};
    for (const auto& [key, collective] : kLower) {
        if (contains(f, key)) return collective;
    }
    return Collective::None;
}

Collective collective_of_event(std::string_view name) {
    if (const auto c = nccl_collective_of(name); c != Collective::None) return c;
    return collective_of_name(name);
}

}  // namespace meshwork::profiler
