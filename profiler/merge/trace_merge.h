// Per-rank traces -> one trace. Clocks are aligned by a per-rank offset:
// - Meshwork's own runs: at a barrier (every rank leaves a barrier at the same instant, so the
//   ends of the first barrier events are made equal); without barriers, by the files'
//   wall-clock start times.
// - Imported profiles (Kineto, nsys): by their absolute timestamps when every file has them;
//   otherwise the ends of the first common collective (the first communication event of the
//   first file's first collective kind) are made equal.
// Traces of different runs (run id, layout, world size or source differ) and overlapping
// ranks are refused.
//
// Scale: every input is read by a reader of its own on one of `threads` threads (a
// TraceReader serves one thread), first for its metadata and clock anchor, then for its
// events a bounded number of chunks ahead of the writer; the output receives the inputs one
// after another, in order, each rank's tracks finished as soon as its file is written. Memory
// stays bounded by the read-ahead and the largest input's tracks, whatever the number of
// inputs; the output is the same as reading the files one by one.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "profiler/store/trace_writer.h"

namespace meshwork::profiler {

struct MergeOptions {
    std::string barrier_name = "barrier";  // an event whose name contains this marks the barrier
    bool allow_mixed = false;              // skip the same-run checks
    std::vector<int> rank_override;        // per input: -1 keeps its ranks, else its one rank becomes this
    unsigned threads = 0;                  // inputs read at once; 0: one per core
};

struct MergeInputReport {
    std::string file;
    std::vector<int> ranks;
    std::int64_t offset_ns = 0;
    std::string alignment;  // "barrier", "start-time", "collective", "reference", "none"
    std::int64_t events = 0;
    bool complete = true;
};

struct MergeResult {
    std::vector<MergeInputReport> inputs;
    std::int64_t events = 0;
    int world_size = 0;
};

MergeResult merge_traces(const std::vector<std::string>& inputs, TraceWriter& out, const MergeOptions& options);

}  // namespace meshwork::profiler
