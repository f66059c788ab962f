// The CUPTI side of GPU profiling, built into the CUDA plugin (libmeshwork_cuda.so): CUPTI's
// Activity API (concurrent kernels, memcpy, memset, runtime launches, NVTX markers) into a
// GpuActivity, written to the trace by write_gpu_activity (gpu_activity.h) at stop().
// Timestamps come from the host steady clock (cuptiActivityRegisterTimestampCallback), so
// GPU records line up with the engine's host events in the same trace. The rest of the
// program reaches this through CudaPlugin::make_activity_collector or CuptiCollector.
#pragma once

#include <memory>
#include <string>

#include "core/engine/cuda_plugin.h"

namespace meshwork::profiler {

// True when a GPU is visible to CUPTI; otherwise `why` says why not.
bool cupti_available(std::string* why);

// CUPTI's callbacks are process-wide: one collector may run at a time (start() throws
// RuntimeError for a second one, and when no GPU is usable).
std::unique_ptr<engine::GpuActivityCollector> make_cupti_collector(TraceSink& sink,
                                                                 const engine::GpuActivityOptions& options);

}  // namespace meshwork::profiler
