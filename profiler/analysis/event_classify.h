// What a kernel is, from its name: the one classifier of imported and recorded kernels
// (docs/profiler.md "Communication kernels" has the table of families and their sources).
// Holistic Trace Analysis' rule (communication `^nccl|ncclKernel`, memory `^Memcpy|^Memset`,
// compute the rest) extended to the communication libraries that do not go through NCCL's
// kernels: DeepEP, PyTorch symmetric memory, the custom all-reduce of vLLM, SGLang and
// TensorRT-LLM, MSCCL and MSCCL++. Rules look at the function and its namespaces
// (kernel_name.h), never at template arguments or parameter types, so `void`, return
// types, `(anonymous namespace)::`, templates and argument lists change nothing.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/trace/collective.h"
#include "core/trace/trace_event.h"

namespace meshwork::profiler {

enum class KernelClass { Compute, Communication, Memory, Sync };

// The library a communication kernel comes from (None for the rest).
enum class KernelFamily : std::uint8_t {
    None,
    Nccl,             // NCCL and RCCL device kernels (ncclKernel_*, ncclDevKernel_*)
    Msccl,            // MSCCL in RCCL (mscclKernel_*)
    Mscclpp,          // MSCCL++ collectives (namespace mscclpp)
    DeepEp,           // DeepEP expert-parallel all-to-all (deep_ep::, dpsk::ep::)
    SymmetricMemory,  // PyTorch symmetric memory (multimem / one-shot / two-shot)
    CustomAllReduce,  // vLLM / SGLang / aiter / TensorRT-LLM / FlashInfer all-reduce kernels
};

std::string_view to_string(KernelFamily f);

struct KernelKind {
    KernelClass cls = KernelClass::Compute;
    KernelFamily family = KernelFamily::None;
    // The collective the name says (Generic for NCCL's generic kernel; None when the name
    // does not say: the importer then takes it from the profiler's args).
    Collective collective = Collective::None;
};

KernelKind identify_kernel(std::string_view name);
KernelClass classify_kernel(std::string_view name);
EventKind event_kind_of_kernel(std::string_view name);

// The collective of a communication kernel name ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL" ->
// AllReduce, "ncclDevKernel_Generic [broadcast]" -> Broadcast); None when it is not a
// communication kernel or its name does not say. The algorithm and protocol in the name
// are not reliable (NCCL dispatches through a function table) and are ignored.
Collective nccl_collective_of(std::string_view kernel_name);

// The collective an event name stands for: a communication kernel's name, else a Meshwork
// name such as "all_reduce(tp)" (collective_of_name); None when it is none. The trace
// store's reader fills TraceEvent::collective with it; importers with it at the source.
Collective collective_of_event(std::string_view event_name);

// The collective PyTorch's record_param_comms names in its "Collective name" arg
// ("allreduce", "_allgather_base", "all_gather_into_tensor_coalesced", "reduce_scatter",
// "alltoall_base", "broadcast", "send", ...); None for one Meshwork has no kind for
// ("gather", "scatter") or an unknown one.
Collective collective_of_pytorch_name(std::string_view collective_name);

}  // namespace meshwork::profiler
