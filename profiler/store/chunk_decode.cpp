#include "profiler/store/chunk_decode.h"

#include "core/common/error.h"
#include "profiler/store/lod_builder.h"
#include "profiler/store/varint.h"

namespace meshwork::profiler {

namespace {

constexpr int kKinds = 6;

[[noreturn]] void malformed(const std::string& file, const char* table) {
    throw InputError(file, table, "malformed packed chunk (corrupt trace)");
}

}  // namespace

void decode_timeline_chunk(std::string_view data, std::int64_t first_start_ns, std::int64_t count,
                           std::int64_t from_ns, std::int64_t t0_ns, std::int64_t t1_ns,
                           const std::string& file, std::vector<MergeItem>& out) {
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    const auto* end = p + data.size();
    std::int64_t start = first_start_ns;
    std::int64_t id = 0;
    if (count < 0 || count > kTimelineChunkEvents) malformed(file, "timeline");
    for (std::int64_t i = 0; i < count; ++i) {
        std::uint64_t d_start = 0, dur = 0, name = 0, d_id = 0;
        if (!get_varint(p, end, d_start) || !get_varint(p, end, dur) || p >= end) malformed(file, "timeline");
        const int kind = *p++;
        if (kind >= kKinds || !get_varint(p, end, name) || !get_varint(p, end, d_id)) malformed(file, "timeline");
        if (d_start > (std::uint64_t{1} << 62) || dur > (std::uint64_t{1} << 62)) malformed(file, "timeline");
        start += static_cast<std::int64_t>(d_start);
        id += unzigzag(d_id);
        if (start >= t1_ns) break;  // sorted by start: nothing further can be in the window
        const std::int64_t stop = start + static_cast<std::int64_t>(dur);
        if (start < from_ns || stop <= t0_ns) continue;
        MergeItem m;
        m.start_ns = start;
        m.end_ns = stop;
        m.busy_ns[static_cast<std::size_t>(kind)] = stop - start;
        m.top_duration_ns = stop - start;
        m.top_name_id = static_cast<std::int64_t>(name);
        m.event_id = id;
        out.push_back(m);
    }
}

void decode_lod_chunk(std::string_view data, int level, std::int64_t chunk,
                      std::int64_t bucket_count, std::int64_t b0, std::int64_t b1,
                      std::int64_t t0_ns, std::int64_t t1_ns, const std::string& file,
                      std::vector<MergeItem>& out) {
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    const auto* end = p + data.size();
    std::int64_t bucket = chunk << kLodChunkShift;
    if (bucket_count < 0 || bucket_count > (std::int64_t{1} << kLodChunkShift)) malformed(file, "lod");
    for (std::int64_t i = 0; i < bucket_count; ++i) {
        std::uint64_t d_bucket = 0, first = 0, extent = 0, count = 0, busy = 0, name = 0;
        if (!get_varint(p, end, d_bucket) || !get_varint(p, end, first) ||
            !get_varint(p, end, extent) || !get_varint(p, end, count) ||
            !get_varint(p, end, busy) || p >= end) {
            malformed(file, "lod");
        }
        const int kind = *p++;
        if (kind >= kKinds || !get_varint(p, end, name)) malformed(file, "lod");
        if (d_bucket > (std::uint64_t{1} << kLodChunkShift) || first > (std::uint64_t{1} << 62) ||
            extent > (std::uint64_t{1} << 62) || count > (std::uint64_t{1} << 62) ||
            busy > (std::uint64_t{1} << 62)) {
            malformed(file, "lod");
        }
        bucket += static_cast<std::int64_t>(d_bucket);
        if (bucket > b1) break;
        if (bucket < b0) continue;
        MergeItem m;
        m.start_ns = (bucket << level) + static_cast<std::int64_t>(first);
        m.end_ns = m.start_ns + static_cast<std::int64_t>(extent);
        if (m.end_ns <= t0_ns || m.start_ns >= t1_ns) continue;
        m.count = static_cast<std::int64_t>(count);
        m.busy_ns[static_cast<std::size_t>(kind)] = static_cast<std::int64_t>(busy);
        m.top_duration_ns = 1;
        m.top_name_id = static_cast<std::int64_t>(name);
        out.push_back(m);
    }
}

}  // namespace meshwork::profiler
