// A TraceSink that keeps everything it is given in memory, for tests that check what a
// producer (the simulator, a collector) writes.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "core/trace/trace_event.h"

namespace meshwork::test {

class RecordingSink : public TraceSink {
public:
    void set_run_info(const TraceRunInfo& info) override { run = info; }
    int add_track(const TrackInfo& t) override {
        tracks.push_back(t);
        return static_cast<int>(tracks.size()) - 1;
    }
    void add_event(const TraceEvent& e) override { events.push_back(e); }
    void add_counter(int, int, const std::string&, std::int64_t, double) override {}
    void close() override { closed = true; }
    // The first event called `name`; throws when there is none.
    [[nodiscard]] const TraceEvent& named(const std::string& name) const {
        for (const auto& e : events) {
            if (e.name == name) return e;
        }
        throw std::runtime_error("no event " + name);
    }
    TraceRunInfo run;
    std::vector<TrackInfo> tracks;
    std::vector<TraceEvent> events;
    bool closed = false;
};

}  // namespace meshwork::test
