// One entry point for import-trace: recognises the input by its content and runs the
// matching importer.
#pragma once

#include <string>

#include "profiler/import/import_options.h"
#include "core/trace/trace_event.h"

namespace meshwork::profiler {

enum class InputFormat { MeshworkTrace, NsysSqlite, KinetoJson, MemorySnapshot };

// By content: an SQLite file is an nsys export unless it is a Meshwork trace; gzip or text
// starting with '{' is Kineto JSON; a pickle (plain or gzip) is a PyTorch memory snapshot. InputError naming the file for anything else.
InputFormat detect_input_format(const std::string& path);

ImportResult import_trace_file(const std::string& path, TraceSink& sink, const ImportOptions& options);

}  // namespace meshwork::profiler
