#include "profiler/analysis/event_classify.h"

#include <array>
#include <cctype>
#include <string>
#include <utility>

#include "profiler/analysis/kernel_name.h"

namespace meshwork::profiler {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// NCCL names a specialised kernel ncclDevKernel_<Coll>_<RedOp>_<type>_<ALGO>_<PROTO> (older:
// ncclKernel_<Coll>_<ALGO>_<PROTO>_<RedOp>_<type>), the others ncclDevKernel_SendRecv and
// ncclDevKernel_Generic (RCCL: ncclDevKernel_Generic_1): the collective is the word after
// the first '_' (NVIDIA/nccl src/device/generate.py, src/device/common.cu:23).
Collective nccl_collective_of_function(std::string_view fn) {
    static constexpr std::array<std::pair<std::string_view, Collective>, 11> kWords{{
        {"AllReduce", Collective::AllReduce},
        {"AllGather", Collective::AllGather},
        {"ReduceScatter", Collective::ReduceScatter},
        {"Broadcast", Collective::Broadcast},
        {"Reduce", Collective::Reduce},
        {"SendRecv", Collective::SendRecv},
        {"Send", Collective::Send},
        {"Recv", Collective::Recv},
        {"AllToAll", Collective::AllToAll},
        {"AllToAllPivot", Collective::AllToAll},  // RCCL
        {"Generic", Collective::Generic},
    }};
    const auto underscore = fn.find('_');
    if (underscore != std::string_view::npos) {
        std::string_view word = fn.substr(underscore + 1);
        word = word.substr(0, word.find('_'));
        for (const auto& [w, c] : kWords) {
            if (word == w) return c;
        }
    }
    // Names of another shape: the first collective word anywhere ("Reduce" after the words
    // that contain it).
    for (const auto& [w, c] : kWords) {
        if (c != Collective::Send && c != Collective::Recv && contains(fn, w)) return c;
    }
    return Collective::None;
}

// A collective from a lower-case function name of the symmetric-memory, custom all-reduce
// and MSCCL++ kernels ("multimem_all_gather_kernel", "allreducePacket" lowered).
Collective collective_in_lower_name(std::string_view f) {
    static constexpr std::array<std::pair<std::string_view, Collective>, 9> kWords{{
        {"all_reduce", Collective::AllReduce},
        {"allreduce", Collective::AllReduce},
        {"all_gather", Collective::AllGather},
        {"allgather", Collective::AllGather},
        {"reduce_scatter", Collective::ReduceScatter},
        {"reducescatter", Collective::ReduceScatter},
        {"all_to_all", Collective::AllToAll},
        {"alltoall", Collective::AllToAll},
        {"broadcast", Collective::Broadcast},
    }};
    for (const auto& [w, c] : kWords) {
        if (contains(f, w)) return c;
    }
    return Collective::None;
}

KernelKind communication(KernelFamily family, Collective c) { return {KernelClass::Communication, family, c}; }

// DeepEP (deepseek-ai/DeepEP): namespace deep_ep (csrc/kernels/legacy/{intranode,internode,
// internode_ll}.cu; deep_ep::elastic in deep_ep/include/deep_ep/impls/*.cuh, functions with an
// _impl suffix) and, in DeepSeek's own builds, dpsk::ep (deepseek-ai/profile-data train.json).
// Dispatch, combine and their notify steps move tokens between ranks (the expert-parallel
// all-to-all); barrier, pp_send/pp_recv and engram_fetch talk to peers too. The layout
// kernel counts tokens per rank from the local top-k indices (get_dispatch_layout,
// csrc/kernels/legacy/layout.cu:11), and the epilogues, buffer cleaning and mask kernels work
// on local memory: compute.
KernelKind deep_ep_kind(std::string_view fn) {
    std::string_view f = fn;
    if (ends_with(f, "_impl")) f.remove_suffix(5);
    if (contains(f, "layout") || contains(f, "epilogue")) return {};
    if (contains(f, "dispatch") || contains(f, "combine") || contains(f, "notify"))
        return communication(KernelFamily::DeepEp, Collective::AllToAll);
    if (contains(f, "barrier")) return communication(KernelFamily::DeepEp, Collective::Barrier);
    if (starts_with(f, "pp_send")) return communication(KernelFamily::DeepEp, Collective::Send);
    if (starts_with(f, "pp_recv")) return communication(KernelFamily::DeepEp, Collective::Recv);
    if (starts_with(f, "engram_fetch")) return communication(KernelFamily::DeepEp, Collective::None);
    return {};
}

bool is_deep_ep(const KernelName& k) {
    return (!k.scopes.empty() && k.scopes[0] == "deep_ep") ||
           (k.scopes.size() >= 2 && k.scopes[0] == "dpsk" && k.scopes[1] == "ep");
}

// PyTorch symmetric memory (torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemoryOps.cu,
// in an anonymous namespace: multimem_all_reduce_kernel, multimem_one_shot_all_reduce_kernel,
// multimem_all_gather_kernel, one_shot_all_reduce_kernel, two_shot_all_reduce_kernel; older
// releases in c10d::symmetric_memory).
bool is_symmetric_memory(const KernelName& k, std::string_view f) {
    return starts_with(f, "multimem_") || contains(f, "one_shot_all_reduce") || contains(f, "two_shot_all_reduce") ||
           k.in_scope("symmetric_memory");
}

// Custom all-reduce kernels, all all-reduce: vLLM and SGLang cross_device_reduce_1stage /
// _2stage (vllm csrc/custom_all_reduce.cuh, sglang sgl-kernel/csrc/allreduce/custom_all_reduce.cuh,
// also aiter's), their quick all-reduce allreduce_prototype_oneshot / _twoshot
// (sgl-kernel/csrc/allreduce/quick_all_reduce.cuh), TensorRT-LLM oneShotAllReduceKernel /
// twoShotAllReduceKernel (cpp/tensorrt_llm/kernels/customAllReduceKernels.cu) and
// allreduce_fusion_kernel_* (cpp/tensorrt_llm/kernels/communicationKernels/
// allReduceFusionKernels.cu, FlashInfer's copy).
bool is_custom_all_reduce(std::string_view f) {
    return contains(f, "cross_device_reduce") || contains(f, "custom_all_reduce") ||
           starts_with(f, "allreduce_prototype") || contains(f, "shotallreducekernel") ||
           starts_with(f, "allreduce_fusion_kernel");
}

}  // namespace

std::string_view to_string(KernelFamily f) {
    switch (f) {
        case KernelFamily::None:
            return "";
        case KernelFamily::Nccl:
            return "nccl";
        case KernelFamily::Msccl:
            return "msccl";
        case KernelFamily::Mscclpp:
            return "mscclpp";
        case KernelFamily::DeepEp:
            return "deepep";
        case KernelFamily::SymmetricMemory:
            return "symmetric_memory";
        case KernelFamily::CustomAllReduce:
            return "custom_all_reduce";
    }
    return "";
}

KernelKind identify_kernel(std::string_view name) {
    if (starts_with(name, "Memcpy") || starts_with(name, "Memset")) return {KernelClass::Memory, {}, {}};
    const std::string_view tag = collective_tag(name);
    const KernelName k = parse_kernel_name(without_collective_tag(name));
    const std::string_view fn = k.function;
    KernelKind kind;
    // NCCL and RCCL (HTA: ^nccl|ncclKernel): ncclKernel_*, ncclDevKernel_*, rccl*.
    if (starts_with(fn, "nccl") || starts_with(fn, "rccl") || contains(fn, "ncclKernel") ||
        contains(fn, "ncclDevKernel")) {
        kind = communication(KernelFamily::Nccl, nccl_collective_of_function(fn));
    } else if (starts_with(fn, "msccl") && !k.in_scope("mscclpp")) {
        // MSCCL in RCCL: mscclKernel_<RedOp>_<type>_<PROTO> (ROCm/rccl src/include/msccl/msccl_kernel.h).
        kind = communication(KernelFamily::Msccl, Collective::None);
    } else if (is_deep_ep(k)) {
        kind = deep_ep_kind(fn);
    } else {
        const std::string f = lower(fn);
        if (k.in_scope("mscclpp")) {
            // MSCCL++ (microsoft/mscclpp src/ext/collectives/*: mscclpp::collective::
            // allreducePacket, allreduceNvls, allgatherFullmesh, ...).
            kind = communication(KernelFamily::Mscclpp, collective_in_lower_name(f));
        } else if (is_symmetric_memory(k, f)) {
            const Collective c = collective_in_lower_name(f);
            kind = communication(KernelFamily::SymmetricMemory,
                                 c != Collective::None ? c : contains(f, "reduce") ? Collective::Reduce : c);
        } else if (is_custom_all_reduce(f)) {
            kind = communication(KernelFamily::CustomAllReduce, Collective::AllReduce);
        }
    }
    if (kind.cls == KernelClass::Communication) {
        // The importer's tag, from the profiler's args, where the name did not say.
        if (!tag.empty() && (kind.collective == Collective::None || kind.collective == Collective::Generic)) {
            const Collective c = collective_of_name(tag);
            if (c != Collective::None) kind.collective = c;
        }
        return kind;
    }
    if (contains(name, "Sync") && contains(name, "wait")) return {KernelClass::Sync, {}, {}};
    return {};
}

KernelClass classify_kernel(std::string_view name) { return identify_kernel(name).cls; }

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
    const KernelKind k = identify_kernel(name);
    return k.cls == KernelClass::Communication ? k.collective : Collective::None;
}

Collective collective_of_event(std::string_view name) {
    if (const auto c = nccl_collective_of(name); c != Collective::None) return c;
    return collective_of_name(name);
}

Collective collective_of_pytorch_name(std::string_view collective_name) {
    // Lower case without underscores: "_allgather_base" -> "allgatherbase",
    // "all_gather_into_tensor_coalesced" -> "allgatherintotensorcoalesced".
    std::string n;
    for (char c : collective_name) {
        if (c != '_') n.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
    static constexpr std::array<std::pair<std::string_view, Collective>, 10> kPrefixes{{
        {"allreduce", Collective::AllReduce},
        {"allgather", Collective::AllGather},
        {"reducescatter", Collective::ReduceScatter},
        {"alltoall", Collective::AllToAll},
        {"broadcast", Collective::Broadcast},
        {"reduce", Collective::Reduce},
        {"sendrecv", Collective::SendRecv},
        {"send", Collective::Send},
        {"recv", Collective::Recv},
        {"barrier", Collective::Barrier},
    }};
    for (const auto& [p, c] : kPrefixes) {
        if (starts_with(n, p)) return c;
    }
    return Collective::None;
}

}  // namespace meshwork::profiler
