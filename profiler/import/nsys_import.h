// Nsight Systems SQLite exports (nsys export --type sqlite) into the trace event model:
// kernels (NCCL ones as communication), memcpy, memset, CUDA runtime calls and NVTX ranges,
// names through StringIds, GPU names from TARGET_INFO_GPU, the session start time. Tables are
// created lazily by nsys and columns change between versions: each is probed before use.
#pragma once

#include <string>

#include "profiler/import/import_options.h"
#include "core/trace/trace_event.h"

namespace meshwork::profiler {

ImportResult import_nsys_sqlite(const std::string& path, TraceSink& sink, const ImportOptions& options);

}  // namespace meshwork::profiler
