// PyTorch profiler / Kineto Chrome-trace JSON (plain or gzip, one file per rank, PyTorch 1.8
// to today, CUDA, ROCm, MTIA or CPU-only) into the trace event model:
// - device kernels, NCCL/RCCL and symmetric-memory ones as communication, with the size and
//   group of their collective from the kernel's args, its record_param_comms / nccl:* op
//   (External id, or the op around its launch);
// - memcpy, memset, host ranges, counters;
// - each device event's step, micro-batch and layer from the CPU op that launched it
//   (correlation id or ac2g flow), as Holistic Trace Analysis attributes kernels to steps.
// Times become int64 ns from the trace's first event; the absolute start (Unix epoch ns) goes
// to the run metadata when the file has one, so ranks of one job line up in merge.
#pragma once

#include <string>

#include "profiler/import/import_options.h"
#include "profiler/import/kineto_file.h"
#include "core/trace/trace_event.h"

namespace meshwork::profiler {

ImportResult import_kineto_json(const std::string& path, TraceSink& sink,
                                const ImportOptions& options);

// The same for a file already read.
ImportResult write_kineto_trace(KinetoFile& file, TraceSink& sink, const ImportOptions& options);

}  // namespace meshwork::profiler
