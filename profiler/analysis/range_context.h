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
// the innermost winning for each field. `process` keeps the ranges of one process (an
// Nsight Systems export of a whole job holds every rank's) to that process's device work;
// a single-process source leaves it 0.
class RangeContextMap {
public:
    void add_range(std::int64_t thread, std::int64_t start_ns, std::int64_t end_ns, std::string_view name,
                   std::int64_t process = 0);
    void finalize();  // sorts; call before lookup
    [[nodiscard]] RangeContext lookup(std::int64_t thread, std::int64_t time_ns) const;
    // Same, over the ranges of every thread of `process` (when the launching thread is unknown).
    [[nodiscard]] RangeContext lookup_any(std::int64_t time_ns, std::int64_t process = 0) const;
    // The context of work launched by `thread` of `process` at `time_ns`: the ranges open
    // around the launch on that thread, and, when none of them names a step, the step of the
    // latest-starting step range of the process, on any thread, that holds the launch (HTA
    // gives a kernel the ProfilerStep window holding its launch whichever thread launched
    // it: hta/common/trace.py add_iteration; an autograd thread has no step range of its own).
    [[nodiscard]] RangeContext launch_context(std::int64_t thread, std::int64_t time_ns,
                                              std::int64_t process = 0) const;
    [[nodiscard]] bool empty() const { return by_thread_.empty(); }

private:
    struct Range {
        std::int64_t start_ns, end_ns;
        RangeContext ctx;
    };
    static RangeContext lookup_in(const std::vector<Range>& ranges, std::int64_t t);
    std::unordered_map<std::int64_t, std::vector<Range>> by_thread_;
    std::unordered_map<std::int64_t, std::vector<Range>> by_process_;
    std::unordered_map<std::int64_t, std::vector<Range>> steps_by_process_;  // ranges naming a step
};

// Puts a looked-up context on an event: step, micro-batch and layer.
inline void apply_context(TraceEvent& e, const RangeContext& c) {
    e.step = c.step;
    e.micro_batch = c.micro_batch;
    e.layer = c.layer;
}

// Where a device event's step, micro-batch and layer come from, as Holistic Trace Analysis
// assigns iterations (hta/common/trace.py add_iteration), for every source that links device
// work to its launch by correlation id (CUPTI, Nsight Systems; Kineto applies the same rule
// in kineto_import.cpp):
// - its launch is known ({thread, time}): the launch's context (launch_context above);
// - it names a launch (correlation id != 0) that the source does not hold although the
//   source records launches: it was launched before the capture window opened and belongs
//   to no step (HTA: iteration -1) - placing it by when it ran would swell the first step
//   with work queued before the profiler started;
// - it names none, or the source records no launches at all: by when it ran, from any range
//   of its process open at its start.
template <class Launch>
RangeContext device_context(const RangeContextMap& ranges, const Launch* launch, std::int64_t correlation,
                            std::int64_t start_ns, bool launches_recorded, std::int64_t process = 0) {
    if (launch) return ranges.launch_context(launch->first, launch->second, process);
    if (correlation != 0 && launches_recorded) return {};
    return ranges.lookup_any(start_ns, process);
}

// A GPU activity record (kernel, copy, set; CUPTI or Nsight Systems) as an event on
// `track`, with the context device_context gives it from `launch` ({host thread, launch
// time}; null when the source has no launch for it); a communication kernel takes its
// collective from its name, and bytes and group size from the collective's range around its
// launch. DeviceRecord needs name, kind, start_ns, end_ns, bytes and correlation.
template <class DeviceRecord, class Launch>
TraceEvent device_event(const DeviceRecord& d, int rank, int track, const Launch* launch, bool launches_recorded,
                        const RangeContextMap& ranges, std::int64_t process = 0) {
    TraceEvent e;
    e.rank = rank;
    e.track = track;
    e.kind = d.kind;
    e.name = d.name;
    e.start_ns = d.start_ns;
    e.end_ns = d.end_ns;
    e.bytes = d.bytes;
    e.correlation_id = d.correlation;
    const RangeContext c = device_context(ranges, launch, d.correlation, d.start_ns, launches_recorded, process);
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
