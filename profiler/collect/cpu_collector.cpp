#include "profiler/collect/cpu_collector.h"

#include <chrono>
#include <thread>

namespace meshwork::profiler {

std::int64_t steady_now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

CpuCollector::CpuCollector(TraceSink& sink, int rank, int world_size, const std::string& source)
    : sink_(sink), rank_(rank) {
    TraceRunInfo info;
    info.source = source;
    info.tool_version = "meshwork " MESHWORK_VERSION;
    info.clock_domain = "steady";
    info.world_size = world_size;
    const std::int64_t steady = steady_now_ns();
    info.start_time_unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
    info.extra["steady_at_start_ns"] = std::to_string(steady);
    // The cores this host has: rank threads beyond them take turns (calibrate fits the
    // cores a run actually got, core/cost/host_sharing.h).
    if (const unsigned cores = std::thread::hardware_concurrency(); cores > 0)
        info.extra["host_cores"] = std::to_string(cores);
    sink_.set_run_info(info);
}

int CpuCollector::track(TrackKind kind, int index, const std::string& name) {
    std::lock_guard lock(mutex_);
    const auto key = std::make_tuple(static_cast<int>(kind), index);
    auto it = tracks_.find(key);
    if (it != tracks_.end()) return it->second;
    const int id = sink_.add_track({rank_, kind, index, name});
    tracks_.emplace(key, id);
    return id;
}

void CpuCollector::record(TraceEvent event) {
    event.rank = rank_;
    sink_.add_event(event);
}

CpuSpan::CpuSpan(CpuCollector& collector, int track, EventKind kind, std::string name)
    : collector_(collector) {
    event_.track = track;
    event_.kind = kind;
    event_.name = std::move(name);
    event_.start_ns = steady_now_ns();
}

CpuSpan::~CpuSpan() {
    event_.end_ns = steady_now_ns();
    try {
        collector_.record(std::move(event_));
    } catch (...) {
        // A destructor must not throw; a sink that refuses events (closed) loses this span.
    }
}

}  // namespace meshwork::profiler
