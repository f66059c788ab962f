// What every importer takes and reports.
#pragma once

#include <cstdint>
#include <string>

namespace meshwork::profiler {

struct ImportOptions {
    int rank = -1;               // -1: from the file (Kineto distributedInfo), its name ("rank3"), else 0
    std::int64_t offset_ns = 0;  // added to every time after rebasing to the trace's first event
};

struct ImportResult {
    std::string format;  // "nsys", "kineto"
    int rank = 0;
    bool rank_known = false;  // from --rank, the file's contents or its name (not the default 0)
    int world_size = 0;
    std::int64_t events = 0;
    std::int64_t device_events = 0;      // kernels, copies and sets (GPU/accelerator work)
    std::int64_t skipped = 0;            // records of kinds Meshwork does not keep (flows, metadata)
};

// "rank3", "rank_3", "rank-3" in a file name; -1 when absent.
int rank_from_file_name(const std::string& path);

}  // namespace meshwork::profiler
