// Classifying kernels by name the way Holistic Trace Analysis does, so that imported and
// recorded traces yield the same metrics: communication (^nccl|ncclKernel, and beyond HTA:
// RCCL, PyTorch symmetric-memory multimem/one-shot/two-shot all-reduce, vLLM/TensorRT-LLM
// custom all-reduce, DeepEP), memory (^Memcpy|^Memset), compute (the rest, except
// synchronisation/wait kernels).
#pragma once

#include <string_view>

#include "core/trace/collective.h"
#include "core/trace/trace_event.h"

namespace meshwork::profiler {

enum class KernelClass { Compute, Communication, Memory, Sync };

KernelClass classify_kernel(std::string_view name);
EventKind event_kind_of_kernel(std::string_view name);

// The collective of a communication kernel name ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL" ->
// AllReduce); None when the name is not an NCCL (or symmetric-memory/custom) collective.
// The algorithm and protocol in the name are not reliable (NCCL dispatches through a
// function table) and are ignored.
Collective nccl_collective_of(std::string_view kernel_name);

// The collective an event name stands for: an NCCL kernel name, else a Meshwork name such as
// "all_reduce(tp)" (collective_of_name); None when it is none. The trace store's reader
// fills TraceEvent::collective with it; importers with it at the source.
Collective collective_of_event(std::string_view event_name);

}  // namespace meshwork::profiler
