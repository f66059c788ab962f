// PyTorch CUDA memory snapshots (torch.cuda.memory._snapshot() / _dump_snapshot(): a pickle,
// plain or gzip) into the trace store: every allocator event of device_traces with its stack
// and the device's allocated and reserved totals after it, and a memory track per device whose
// counters draw them on the timeline. docs/profiler.md "Memory snapshots".
#pragma once

#include <string>

#include "core/trace/trace_event.h"
#include "profiler/import/import_options.h"

namespace meshwork::profiler {

// True when the file starts as a pickle of protocol 2 or later does (0x80, 2..5), gzip or not.
bool looks_like_pickle(const std::string& path);

// InputError naming the file and the field (device_traces[0][12].size) for anything the
// snapshot format does not allow, and for the refused pickle opcodes (pickle_reader.h).
ImportResult import_memory_snapshot(const std::string& path, TraceSink& sink, const ImportOptions& options);

}  // namespace meshwork::profiler
