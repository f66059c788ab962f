// The CPU collector: steady-clock spans for the CPU engine and anything else on the host.
// One collector per rank; spans may be recorded from any thread (the sink is thread-safe).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "core/trace/trace_event.h"

namespace meshwork::profiler {

// Nanoseconds of std::chrono::steady_clock: the clock every CPU span (and, through CUPTI's
// timestamp callback, every GPU record) is expressed in.
std::int64_t steady_now_ns();

class CpuCollector {
public:
    // Writes the run info: source, clock domain "steady", the wall-clock time at which the
    // steady clock read `steady_at_start_ns` (extra), so merge can align ranks without a barrier.
    CpuCollector(TraceSink& sink, int rank, int world_size, const std::string& source = "meshwork-cpu");

    // The track for (kind, index), created on first use.
    int track(TrackKind kind, int index, const std::string& name);
    [[nodiscard]] int rank() const { return rank_; }
    [[nodiscard]] TraceSink& sink() { return sink_; }

    // Records a finished span.
    void record(TraceEvent event);

private:
    TraceSink& sink_;
    int rank_;
    std::mutex mutex_;
    std::map<std::tuple<int, int>, int> tracks_;
};

// Times a scope: starts at construction, records at destruction.
class CpuSpan {
public:
    CpuSpan(CpuCollector& collector, int track, EventKind kind, std::string name);
    ~CpuSpan();
    CpuSpan(const CpuSpan&) = delete;
    CpuSpan& operator=(const CpuSpan&) = delete;

    TraceEvent& event() { return event_; }  // set bytes, flops, step, ... before it ends

private:
    CpuCollector& collector_;
    TraceEvent event_;
};

}  // namespace meshwork::profiler
