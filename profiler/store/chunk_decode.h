// Decoding the packed timeline and level-of-detail chunks written by lod_builder.cpp.
// Chunks come from files: every read is bounds-checked and a malformed chunk is an
// InputError naming the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/store/draw_merge.h"

namespace meshwork::profiler {

// Appends the events of a timeline chunk with start in [from_ns, t1_ns) and end > t0_ns.
void decode_timeline_chunk(std::string_view data, std::int64_t first_start_ns, std::int64_t count,
                           std::int64_t from_ns, std::int64_t t0_ns, std::int64_t t1_ns,
                           const std::string& file, std::vector<MergeItem>& out);

// Appends the buckets of a level-of-detail chunk with index in [b0, b1] whose events reach
// past t0_ns and start before t1_ns.
void decode_lod_chunk(std::string_view data, int level, std::int64_t chunk,
                      std::int64_t bucket_count, std::int64_t b0, std::int64_t b1,
                      std::int64_t t0_ns, std::int64_t t1_ns, const std::string& file,
                      std::vector<MergeItem>& out);

}  // namespace meshwork::profiler
