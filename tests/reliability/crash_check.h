// What tst_crash_safety checks in every trace a fault left behind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace meshwork::reliability {

// PRAGMA integrity_check on a read-only connection: "ok" or SQLite's first complaint.
std::string integrity_check(const std::string& path);

// `path` when nothing is beside it, else the trace recover_trace() makes of it (PATH.recovered.sqlite):
// readers refuse a trace left with a journal or log beside it; a killed writer's commits are
// read through recovery, which is what a user does.
std::string readable_trace(const std::string& path);

// The correlation ids of every event in the trace (recovered first when unfinished), sorted (trace_writer_loop numbers its
// events 0, 1, 2, ... there).
std::vector<std::int64_t> event_numbers(const std::string& path, bool* complete);

// True when `numbers` is exactly 0, 1, ..., n-1: nothing lost in the middle, nothing twice.
bool is_unbroken_prefix(const std::vector<std::int64_t>& numbers);

struct Progress {
    std::int64_t count = 0;  // events added to the writer so far
    std::int64_t time_ns = 0;  // CLOCK_MONOTONIC when that count was reached
};
std::vector<Progress> read_progress(const std::string& path);

// How many events had been added by `time_ns` according to the progress lines.
std::int64_t added_by(const std::vector<Progress>& progress, std::int64_t time_ns);

}  // namespace meshwork::reliability
