// Helpers shared by the profiler test suites: temporary folders and small traces.
#pragma once

#include <QTemporaryDir>

#include <string>

#include "profiler/store/trace_writer.h"

namespace meshwork::test {

// A temporary folder that lives as long as the test object.
inline std::string temp_path(const QTemporaryDir& dir, const std::string& name) {
    return (dir.path() + "/").toStdString() + name;
}

inline TraceEvent make_event(int track, EventKind kind, const std::string& name,
                             std::int64_t start_ns, std::int64_t end_ns) {
    TraceEvent e;
    e.track = track;
    e.kind = kind;
    e.name = name;
    e.start_ns = start_ns;
    e.end_ns = end_ns;
    return e;
}

}  // namespace meshwork::test
