// Writes a Meshwork trace (docs/trace-format.md). Producers call add_event from any thread;
// a background thread interns names and inserts batches in WAL mode, committing at least
// every second, so a process killed mid-run leaves a readable file with everything up to the
// last commit. close() builds the indexes and the level-of-detail summary and only then marks
// the trace complete.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/trace/trace_event.h"

namespace meshwork::profiler {

struct TraceWriterOptions {
    // Collectors inside a run set this: when the writer falls behind, events are dropped
    // (and counted in meta "dropped_events") instead of blocking the run. Importers block.
    bool drop_when_behind = false;
    // Events waiting for the writer thread before producers block or drop.
    std::size_t max_queued_events = std::size_t{1} << 19;
    // How long the writer thread waits for a full batch before committing what it has.
    int flush_interval_ms = 200;
    // Write-ahead log: a process killed mid-write leaves a readable trace of everything
    // committed (runs). False for a trace written under a temporary name and renamed once
    // complete (TraceOutput: import-trace, merge, simulate): pages are written once, with no
    // journal, and a killed writer leaves an unreadable temporary file, never the destination.
    bool crash_readable = true;
    // The writer thread runs at the lowest priority (nice 19; Linux, where a thread's nice is
    // its own): a profiled run's rank threads keep the cores, and the writer uses the ones
    // they leave idle. Runs set it: at nice 0 the writer's bursts (a batch every
    // flush_interval_ms, 1-5 ms of CPU per step's events) took up to one of a 2-core host's
    // cores from the CPU engine's ranks for tens of milliseconds, doubling the steps they hit
    // (docs/BENCHMARKS.md, "CPU outside and inside compute ops").
    bool yield_cores = false;
};

class TraceWriter : public meshwork::TraceSink {
public:
    // Creates `path` (replacing any file there). Throws RuntimeError when it cannot.
    static std::unique_ptr<TraceWriter> create(const std::string& path);
    static std::unique_ptr<TraceWriter> create(const std::string& path,
                                               const TraceWriterOptions& options);

    // Without close(), the destructor stops the thread after a last commit and leaves the
    // trace readable but incomplete (no indexes, not marked complete).
    ~TraceWriter() override;
    TraceWriter(const TraceWriter&) = delete;
    TraceWriter& operator=(const TraceWriter&) = delete;

    void set_run_info(const TraceRunInfo& info) override;
    int add_track(const TrackInfo& track) override;
    void add_event(const TraceEvent& event) override;
    void add_counter(int rank, int track, const std::string& name, std::int64_t time_ns,
                     double value) override;
    void add_memory_event(const MemoryEvent& event) override;
    // Throws RuntimeError if anything failed while writing (e.g. disk full).
    void close() override;
    // Blocks until everything added so far is committed (tests, benchmarks, checkpoints).
    void flush();

    // Per-rank device name and the offset that was added to its timestamps (merge).
    void set_rank_info(int rank, const std::string& device, std::int64_t clock_offset_ns) override;
    // No more events on `track`: its timeline and level-of-detail chunks are built now (by the
    // writer thread, after the events added before this call) and its in-memory copy of the
    // events freed, so a producer that writes track after track (merge, the simulator's
    // replicas) holds one track's copy rather than the whole trace's. add_event on it
    // afterwards throws RuntimeError.
    void finish_track(int track) override;
    [[nodiscard]] std::int64_t dropped_events() const;
    [[nodiscard]] const std::string& path() const;

    struct Impl;

private:
    explicit TraceWriter(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace meshwork::profiler
