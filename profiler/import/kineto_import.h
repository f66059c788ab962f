// PyTorch profiler / Kineto Chrome-trace JSON (plain or gzip, one file per rank) into the
// trace event model: GPU kernels (NCCL ones as communication, with their collective size from
// the kernel's or its record_param_comms op's args), memcpy, memset, host ranges, counters.
#pragma once

#include <string>

#include "import/import_options.h"
#include "trace/trace_event.h"

namespace meshwork::profiler {

ImportResult import_kineto_json(const std::string& path, TraceSink& sink, const ImportOptions& options);

}  // namespace meshwork::profiler
