// What close() adds to a trace, per track, from its events in start order:
//  - timeline chunks: the drawable fields of every event (start, end, kind, name, id) packed
//    into blobs of kTimelineChunkEvents, keyed by their first start, so a window query reads
//    a few blobs instead of thousands of rows;
//  - level-of-detail chunks: buckets of 2^level ns (count, busy time, extent, dominant kind,
//    longest event's name) from the finest level the track's density calls for up to one
//    bucket for the whole track, packed kLodChunkBuckets to a blob;
//  - long_events: events long enough that a window query would otherwise miss their start.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "profiler/store/sqlite_db.h"

namespace meshwork::profiler {

inline constexpr int kTimelineChunkEvents = 4096;
inline constexpr int kLodChunkShift = 10;  // 1024 buckets per chunk

struct TrackExtent {
    int track = 0;
    std::int64_t event_count = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

// The finest level for a track: buckets about four mean inter-event gaps wide, so the
// finest level has at most about a quarter as many buckets as the track has events.
int lod_base_level(const TrackExtent& extent);
// The coarsest level: the whole track fits in at most two buckets.
int lod_top_level(const TrackExtent& extent);

// Receives one track's events in start order and writes its chunks as they fill.
class TrackSummaryBuilder {
public:
    TrackSummaryBuilder(sql::Database& db, const TrackExtent& extent);
    ~TrackSummaryBuilder();
    void add(std::int64_t start_ns, std::int64_t end_ns, int kind, std::int64_t name_id,
             std::int64_t event_id);
    void finish();  // writes what is left and the track's lod_base_level

private:
    struct State;
    std::unique_ptr<State> s_;
};

}  // namespace meshwork::profiler
