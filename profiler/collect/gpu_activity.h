// GPU activity as the CUPTI collector gathers it (kernels, copies, sets, launches, NVTX
// ranges), and how it becomes trace events: one track per (device, stream) of the device's
// rank, NCCL kernels as communication with the bytes and group of the collective's range,
// every device event with the step, micro-batch and layer of the ranges open at its launch
// (range_context.h device_context: in no step when its launch was not recorded),
// and the ranges themselves as markers on a host track per thread. CUDA-free: the CUPTI
// side (in the CUDA plugin) only fills GpuActivity, so this part is tested without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/trace/trace_event.h"

namespace meshwork::profiler {

struct GpuDeviceRecord {
    std::uint32_t device = 0, stream = 0;
    EventKind kind = EventKind::Compute;
    std::string name;
    std::int64_t start_ns = 0, end_ns = 0, bytes = 0;
    std::uint32_t correlation = 0;
};

struct GpuLaunchRecord {  // a CUDA runtime call (cudaLaunchKernel, cudaMemcpyAsync, ...)
    std::uint32_t thread = 0, correlation = 0;
    std::int64_t start_ns = 0, end_ns = 0;
};

struct GpuRangeRecord {  // an NVTX push/pop range
    std::uint32_t thread = 0;
    std::int64_t start_ns = 0, end_ns = 0;
    std::string name;
};

struct GpuActivity {
    std::vector<GpuDeviceRecord> device;
    std::vector<GpuLaunchRecord> launches;
    std::vector<GpuRangeRecord> ranges;
};

// Writes `activity` to `sink`. `rank_of_device[d]` is the rank of device d; a device beyond
// it (or an empty map) belongs to `default_rank`. A host thread's ranges go to the rank
// whose device ran the work it launched. Returns the number of events written.
std::size_t write_gpu_activity(const GpuActivity& activity, TraceSink& sink,
                               const std::vector<int>& rank_of_device, int default_rank);

}  // namespace meshwork::profiler
