// The trace event model shared by every producer (simulator, CPU and CUDA engines,
// importers) and consumer (trace store, stats, GUI). The profiler's SQLite TraceStore
// implements TraceSink; core code writes events without depending on the profiler.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/trace/collective.h"
#include "core/trace/memory_event.h"

namespace meshwork {

enum class EventKind : std::uint8_t {
    Compute = 0,
    Communication = 1,
    Memcpy = 2,
    Memset = 3,
    Marker = 4,  // a range or instant annotation (NVTX range, step marker)
    Idle = 5,
};

std::string to_string(EventKind kind);
bool parse_event_kind(const std::string& text, EventKind& out);

enum class TrackKind : std::uint8_t {
    ComputeStream = 0,
    CommStream = 1,
    Host = 2,
    Memory = 3,  // counters
};

std::string to_string(TrackKind kind);

// A timeline lane: one stream or thread of one rank.
struct TrackInfo {
    int rank = 0;
    TrackKind kind = TrackKind::ComputeStream;
    int index = 0;       // which stream of that kind (0 = the main compute stream)
    std::string name;    // "compute", "comm:tp", "comm:dp", "host", "stream 7", ...
};

struct TraceEvent {
    int rank = 0;
    int track = 0;           // id returned by TraceSink::add_track
    EventKind kind = EventKind::Compute;
    std::string name;        // "block.3.attention.fwd", "all_reduce(tp)", kernel name
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t bytes = 0;  // payload of a collective or copy
    double flops = 0;        // work of a compute op
    int step = -1;           // -1 = unknown
    int micro_batch = -1;
    int layer = -1;
    std::int64_t correlation_id = 0;
    int group_size = 0;      // ranks taking part in a collective (busbw needs it); 0 = unknown
    // Of a communication event: which collective (trace/collective.h). Not a column of the
    // trace store: its reader derives it from the name again.
    Collective collective = Collective::None;
};

// Run metadata written once per trace.
struct TraceRunInfo {
    std::string tool_version;
    std::string source;        // "meshwork-sim", "meshwork-cpu", "meshwork-cuda", "nsys", "kineto"
    std::string layout_json;   // the layout the run used, if known
    std::string cluster;
    std::int64_t start_time_unix_ns = 0;
    std::string clock_domain;  // "steady", "host-realtime", "gpu-normalised", "simulated"
    int world_size = 0;
    std::map<std::string, std::string> extra;
};

// Where producers write events. Implementations must accept calls from several threads.
class TraceSink {
public:
    virtual ~TraceSink() = default;
    virtual void set_run_info(const TraceRunInfo& info) = 0;
    // Returns a track id unique within this sink.
    virtual int add_track(const TrackInfo& track) = 0;
    virtual void add_event(const TraceEvent& event) = 0;
    // A counter sample (e.g. device memory in use) on a track.
    virtual void add_counter(int rank, int track, const std::string& name, std::int64_t time_ns,
                             double value) = 0;
    // The device a rank ran on (the ranks table of a trace) and the offset added to its
    // timestamps when merged. Sinks that keep no ranks table ignore it.
    virtual void set_rank_info(int /*rank*/, const std::string& /*device*/, std::int64_t /*clock_offset_ns*/) {}
    // One change of a device's memory (core/trace/memory_event.h). Sinks that keep no
    // memory table ignore it.
    virtual void add_memory_event(const MemoryEvent& /*event*/) {}
    // The producer adds no more events to `track`: a sink may finalise what it holds for it
    // (the trace writer builds the track's summaries and frees their memory).
    virtual void finish_track(int /*track*/) {}
    // Flushes and finalises (indexes, summaries). No events may follow.
    virtual void close() = 0;
};

}  // namespace meshwork
