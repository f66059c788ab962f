// Step, micro-batch and layer of GPU work, recovered from the host ranges (NVTX, PyTorch
// record_function) that enclosed its launch. Range names understood (docs/profiler.md):
// "step 3" / "step=3" / "ProfilerStep#3", "microbatch 2" / "mb=2", "layer 5" / "layer=5" /
// "block.5.…"; several may share one name ("step=3 mb=1"). A collective's range carries its
// payload and group ("all_reduce(tp) bytes=4096 group=4", engine/nvtx/scoped_range.h), which
// the communication kernels launched inside it take on.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "profiler/analysis/event_classify.h"
#include "core/trace/trace_event.h"

namespace meshwork::profiler {

struct RangeContext {
    int step = -1;
    int micro_batch = -1;
    int layer = -1;
    std::int64_t bytes = -1;  // payload of the collective the range encloses
    int group_size = 0;       // ranks of that collective
};

// The fields one range name sets (the others stay -1).
RangeContext parse_range_context(std::string_view name);

// Ranges per host thread; lookup(thread, t) merges the contexts of the ranges open at t,
// the innermost winning for each field.
class RangeContextMap {
public:
    void add_range(std::int64_t thread, std::int64_t start_ns, std::int64_t end_ns, std::string_view name);
    void finalize();  // sorts; call before lookup
    [[nodiscard]] RangeContext lookup(std::int64_t thread, std::int64_t time_ns) const;
    // Same, over the ranges of every thread (when the launching thread is unknown).
    [[nodiscard]] RangeContext lookup_any(std::int64_t time_ns) const;
    [[nodiscard]] bool empty() const { return by_thread_.empty(); }

private:
    struct Range {
        std::int64_t start_ns, end_ns;
        RangeContext ctx;
    };
    static RangeContext lookup_in(const std::vector<Range>& ranges, std::int64_t t);
    std::unordered_map<std::int64_t, std::vector<Range>> by_thread_;
    std::vector<Range> all_;
};

// Puts a looked-up context on an event: step, micro-batch and layer.
inline void apply_context(TraceEvent& e, const RangeContext& c) {
    e.step = c.step;
    e.micro_batch = c.micro_batch;
    e.layer = c.layer;
}

// A GPU activity record (kernel, copy, set; CUPTI or Nsight Systems) as an event on
// `track`, with the step, micro-batch and layer of the ranges its launch ran in: found by
// correlation id in `launches` (correlation -> {host thread, launch time}), or, for a launch
// that was not recorded, any range open when the activity started; a communication kernel
// takes its collective from its name, and bytes and group size from the collective's range
// around it. DeviceRecord needs name, kind, start_ns, end_ns, bytes and correlation.
template <class DeviceRecord, class LaunchMap>
TraceEvent device_event(const DeviceRecord& d, int rank, int track, const LaunchMap& launches,
                        const RangeContextMap& ranges) {
    TraceEvent e;
    e.rank = rank;
    e.track = track;
    e.kind = d.kind;
    e.name = d.name;
    e.start_ns = d.start_ns;
    e.end_ns = d.end_ns;
    e.bytes = d.bytes;
    e.correlation_id = d.correlation;
    const auto l = launches.find(d.correlation);
    const RangeContext c = l != launches.end() ? ranges.lookup(l->second.first, l->second.second)
                                               : ranges.lookup_any(d.start_ns);
    e.step = c.step;
    e.micro_batch = c.micro_batch;
    e.layer = c.layer;
    if (e.kind == EventKind::Communication) {
        e.collective = collective_of_event(e.name);
        if (c.bytes >= 0) {
            e.bytes = c.bytes;
            e.group_size = c.group_size;
        }
    }
    return e;
}

}  // namespace meshwork::profiler
