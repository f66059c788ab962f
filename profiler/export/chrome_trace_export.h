// Meshwork trace -> Chrome trace JSON (the format Perfetto and chrome://tracing open):
// one process per rank, one thread per track, complete ("X") events in microseconds with
// Meshwork's fields under args, counters as "C" events.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "profiler/store/trace_reader.h"

namespace meshwork::profiler {

struct ChromeExportResult {
    std::int64_t events = 0;
    std::int64_t counters = 0;
};

ChromeExportResult write_chrome_trace(const TraceReader& trace, std::ostream& out);
// Writes `path` atomically.
ChromeExportResult export_chrome_trace(const TraceReader& trace, const std::string& path);

}  // namespace meshwork::profiler
