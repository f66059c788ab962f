// A trace written by a CLI verb (import-trace, merge): written under a temporary name beside
// the destination and renamed only once complete, so a failed or interrupted run never leaves
// a file that looks like a finished trace.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "profiler/store/trace_writer.h"

namespace meshwork::profiler {

class TraceOutput {
public:
    explicit TraceOutput(std::string final_path);
    ~TraceOutput();  // without commit(): removes the temporary file
    TraceOutput(const TraceOutput&) = delete;
    TraceOutput& operator=(const TraceOutput&) = delete;

    [[nodiscard]] TraceWriter& writer() { return *writer_; }
    // Closes the writer and renames the file into place.
    void commit();

private:
    std::string final_path_;
    std::string temp_path_;
    std::unique_ptr<TraceWriter> writer_;
    bool committed_ = false;
};

// The temporary name of this process's output to `path`: PATH.partial.PID.
std::string partial_name(const std::string& path);
// Removes what writers to `path` that were killed left behind: PATH.partial.PID files (and
// their -wal, -shm, -journal) whose process is gone from this host. A live writer's file
// stays, as does a name whose PID this host cannot check (another user's process: EPERM).
// Every writer calls it before it starts, so leftovers live until the next run to `path`.
void remove_dead_partials(const std::string& path);

// Writes `text` to `path` through a temporary file and a rename.
void write_file_atomically(const std::string& path, const std::string& text);
// Same, for output produced piece by piece; nothing is left at `path` if `produce` throws.
void write_stream_atomically(const std::string& path, const std::function<void(std::ostream&)>& produce);

}  // namespace meshwork::profiler
