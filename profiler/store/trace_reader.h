// Reads a Meshwork trace (docs/trace-format.md), opened as untrusted input: read-only,
// defensive mode, every query prepared. Anything malformed is an InputError naming the file.
// One reader is used by one thread at a time; open one per thread for parallel reads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "core/trace/trace_event.h"

namespace meshwork::profiler {

struct TrackRecord {
    int id = 0;
    TrackInfo info;
    std::int64_t event_count = 0;
    std::int64_t start_ns = 0;  // first event start (0 when the track has none)
    std::int64_t end_ns = 0;    // last event end
    std::int64_t max_duration_ns = 0;
    int lod_base_level = -1;    // finest summary level; -1 when the trace was never closed
};

struct RankRecord {
    int rank = 0;
    std::string device;
    std::int64_t clock_offset_ns = 0;  // added to this rank's timestamps when merged
};

// One thing to draw on a track: a single event (count 1, event_id set) or several events
// narrower than a pixel merged together (count > 1, event_id 0, kind the one that took the
// most time, name that of the longest event merged). The name is the store's string id
// (string() gives its text): a window of a million items copies no strings.
struct DrawItem {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t count = 0;
    std::int64_t busy_ns = 0;  // summed duration of the events merged
    EventKind kind = EventKind::Compute;
    std::int64_t name_id = 0;  // a valid string() id
    std::int64_t event_id = 0;
};

struct CounterSample {
    int track = 0;
    std::string name;
    std::int64_t time_ns = 0;
    double value = 0;
};

class TraceReader {
public:
    static TraceReader open(const std::string& path);

    TraceReader(TraceReader&&) noexcept;
    TraceReader& operator=(TraceReader&&) noexcept;
    ~TraceReader();

    [[nodiscard]] const std::string& path() const;
    [[nodiscard]] int format_version() const;
    // False when the writer never reached close() (killed run): events up to the last
    // commit are there, the indexes and summaries are not.
    [[nodiscard]] bool complete() const;
    [[nodiscard]] const TraceRunInfo& run_info() const;
    [[nodiscard]] std::int64_t event_count() const;
    [[nodiscard]] std::int64_t dropped_events() const;
    [[nodiscard]] const std::vector<TrackRecord>& tracks() const;
    [[nodiscard]] const TrackRecord* track(int id) const;
    [[nodiscard]] const std::vector<RankRecord>& ranks() const;
    // Earliest start and latest end over all tracks.
    [[nodiscard]] std::int64_t start_ns() const;
    [[nodiscard]] std::int64_t end_ns() const;

    // Events of `track` overlapping [t0_ns, t1_ns), in start order, merged so that at most
    // `max_items` come back (the timeline's contract: one item per pixel at most).
    [[nodiscard]] std::vector<DrawItem> window(int track, std::int64_t t0_ns, std::int64_t t1_ns,
                                               std::size_t max_items) const;

    [[nodiscard]] std::optional<TraceEvent> event(std::int64_t id) const;
    // Every event, in storage order (fast full scan; for statistics).
    void for_each_event(const std::function<void(const TraceEvent&)>& fn) const;
    // The events of one track in start order.
    void for_each_event_of_track(int track, const std::function<void(const TraceEvent&)>& fn) const;
    void for_each_counter(const std::function<void(const CounterSample&)>& fn) const;
    // Measured memory (format 2 and later; a version-1 trace has none): every memory event by
    // rank, device and time, with its stack's id (0 for none; frames left empty: read them
    // once per id with memory_stack()).
    [[nodiscard]] bool has_memory_tables() const;
    void for_each_memory_event(const std::function<void(const MemoryEvent&, std::int64_t stack_id)>& fn) const;
    [[nodiscard]] std::string memory_stack(std::int64_t stack_id) const;
    // The time span [first start, last end] of the events of step `step` (and, when
    // `micro_batch` >= 0, of that micro-batch), over every rank; nullopt when no event
    // carries it. One scan of the events table: call it off the GUI thread on big traces.
    [[nodiscard]] std::optional<std::pair<std::int64_t, std::int64_t>> step_span(std::int64_t step,
                                                                                std::int64_t micro_batch) const;

    // How many different values events.step holds (one SQL scan; callers that size a table
    // by steps bound it first, rank_step_bound.h).
    [[nodiscard]] std::int64_t distinct_step_count() const;

    [[nodiscard]] const std::string& string(std::int64_t id) const;
    // Valid string ids are 1..string_count().
    [[nodiscard]] std::int64_t string_count() const;

    // Checks every page of the file (SQLite's quick_check): corruption in pages that no
    // query has touched yet shows here. Costs a full read of the file.
    void verify() const;

    struct Impl;

private:
    explicit TraceReader(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace meshwork::profiler
