// The Meshwork trace format: one SQLite schema for every source (docs/trace-format.md).
#pragma once

#include <cstdint>

namespace meshwork::profiler {

// Bumped on any change a reader of the previous version would misread. Readers refuse newer
// and read every older version. 2 added memory_events and memory_stacks (a version-1 trace
// has no measured memory).
inline constexpr int kTraceFormatVersion = 2;
inline constexpr int kFirstFormatWithMemory = 2;
// PRAGMA application_id of a Meshwork trace: "MWTR".
inline constexpr std::int32_t kTraceApplicationId = 0x4D575452;

// Level-of-detail buckets: level L groups events by start_ns >> L (width 2^L ns). The finest
// level of a track is chosen at close from its event density, never finer than this.
inline constexpr int kLodMinLevel = 10;  // 1.024 us
inline constexpr int kLodMaxLevel = 62;

// An event longer than 2^(base level + kLongEventShift) ns is listed in long_events so that a
// window query finds events that began long before the window without scanning back to them.
inline constexpr int kLongEventShift = 4;

// Every time in a trace (events, counters, track extents) lies within +-kMaxTraceTimeNs
// (about 146 years: Unix-epoch nanoseconds until 2116), so that the difference of any two,
// a duration or a span, fits in 64 bits. Readers refuse a time outside it.
inline constexpr std::int64_t kMaxTraceTimeNs = (std::int64_t{1} << 62) - 1;

// DDL run when a trace is created (no secondary indexes: those are built at close).
extern const char* const kSchemaSql;
// DDL run at close: indexes of the small tables.
extern const char* const kCloseIndexSql;

}  // namespace meshwork::profiler
