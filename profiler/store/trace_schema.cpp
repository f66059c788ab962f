#include "profiler/store/trace_schema.h"

namespace meshwork::profiler {

// Column choices keep rows small: kind is a small integer, names are interned, unknown
// step/micro-batch/layer are NULL (no payload), and SQLite stores 0 and integral REALs in
// the record header alone.
const char* const kSchemaSql = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE ranks (
  rank INTEGER PRIMARY KEY,
  device TEXT NOT NULL DEFAULT '',
  clock_offset_ns INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE tracks (
  id INTEGER PRIMARY KEY,
  rank INTEGER NOT NULL,
  kind INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  name TEXT NOT NULL,
  event_count INTEGER NOT NULL DEFAULT 0,
  start_ns INTEGER,
  end_ns INTEGER,
  max_duration_ns INTEGER NOT NULL DEFAULT 0,
  lod_base_level INTEGER
);
CREATE TABLE strings (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE events (
  id INTEGER PRIMARY KEY,
  track INTEGER NOT NULL,
  kind INTEGER NOT NULL,
  name_id INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL,
  bytes INTEGER NOT NULL DEFAULT 0,
  flops REAL NOT NULL DEFAULT 0,
  step INTEGER,
  micro_batch INTEGER,
  layer INTEGER,
  correlation_id INTEGER NOT NULL DEFAULT 0,
  group_size INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE counters (
  track INTEGER NOT NULL,
  name_id INTEGER NOT NULL,
  time_ns INTEGER NOT NULL,
  value REAL NOT NULL
);
-- Measured memory (format 2): one row per allocator event, with the device's totals after it.
CREATE TABLE memory_stacks (id INTEGER PRIMARY KEY, frames TEXT NOT NULL);
CREATE TABLE memory_events (
  id INTEGER PRIMARY KEY,
  rank INTEGER NOT NULL,
  device INTEGER NOT NULL,
  time_ns INTEGER NOT NULL,
  action INTEGER NOT NULL,
  addr INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  stream INTEGER NOT NULL DEFAULT 0,
  allocated_bytes INTEGER NOT NULL,
  reserved_bytes INTEGER NOT NULL,
  stack_id INTEGER
);
-- Written at close (profiler/store/lod_builder.h): packed chunks for window queries.
CREATE TABLE timeline (
  id INTEGER PRIMARY KEY,
  track INTEGER NOT NULL,
  first_start_ns INTEGER NOT NULL,
  last_start_ns INTEGER NOT NULL,
  max_end_ns INTEGER NOT NULL,
  event_count INTEGER NOT NULL,
  data BLOB NOT NULL
);
CREATE INDEX timeline_by_start ON timeline (track, first_start_ns);
CREATE TABLE lod (
  track INTEGER NOT NULL,
  level INTEGER NOT NULL,
  chunk INTEGER NOT NULL,
  bucket_count INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (track, level, chunk)
) WITHOUT ROWID;
-- The primary key columns come first: SQLite 3.40's integrity_check and quick_check report
-- false "NULL value in long_events.end_ns" for a WITHOUT ROWID table whose key columns are
-- not its leading ones (TraceReader::verify and tst_crash_safety run them).
CREATE TABLE long_events (
  track INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  event_id INTEGER NOT NULL,
  end_ns INTEGER NOT NULL,
  kind INTEGER NOT NULL,
  name_id INTEGER NOT NULL,
  PRIMARY KEY (track, start_ns, event_id)
) WITHOUT ROWID;
CREATE VIEW event_view AS
  SELECT e.id, t.rank, e.track, t.name AS track_name, e.kind, s.value AS name, e.start_ns,
         e.end_ns, e.end_ns - e.start_ns AS duration_ns, e.bytes, e.flops, e.step,
         e.micro_batch, e.layer, e.correlation_id, e.group_size
  FROM events e JOIN tracks t ON t.id = e.track JOIN strings s ON s.id = e.name_id;
)sql";

// Small tables only: the events themselves are reached through the timeline chunks, so
// closing a trace never sorts the events table.
const char* const kCloseIndexSql = R"sql(
CREATE INDEX counters_by_track_time ON counters (track, time_ns);
)sql";

}  // namespace meshwork::profiler
