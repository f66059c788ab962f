// A PyTorch profiler (Kineto) or Chrome Trace Event Format file, read into memory as the
// importer needs it: complete events with their lane, time and the args that link host and
// device (correlation, External id) and carry collective sizes. Times are exact int64
// nanoseconds in the file's own clock (see kineto_time.h); nothing is rebased here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/trace/trace_event.h"

namespace meshwork::profiler {

// What a category says an event is (kineto_categories.h).
enum class KinetoRole : std::uint8_t {
    HostOp,        // cpu_op, user_annotation, python_function, Operator, ...
    HostLaunch,    // cuda_runtime / cuda_driver / hip / mtia runtime: carries the correlation id
    DeviceKernel,  // kernel (name decides compute or communication)
    DeviceMemcpy,
    DeviceMemset,
    DeviceAnnotation,  // gpu_user_annotation: a range on the device timeline
    DeviceSync,        // cuda_sync: waiting, not work
    Ignored,           // Trace spans and other bookkeeping
};

// Message size and group of one collective, from record_param_comms / nccl:* args.
struct KinetoCommInfo {
    std::int64_t bytes = 0;  // 0 = unknown
    int group_size = 0;      // 0 = unknown
    std::string group;       // Process Group Name
    std::string collective;  // "allreduce", "all_gather", ... as PyTorch names it
};

struct KinetoEvent {
    KinetoRole role = KinetoRole::HostOp;
    EventKind kind = EventKind::Marker;
    std::string name;
    std::int64_t pid = 0, tid = 0;
    std::int64_t start_ns = 0, end_ns = 0;
    std::int64_t correlation = 0;  // args.correlation
    std::int64_t external_id = 0;  // args."External id" (any case)
    std::int64_t bytes = 0;        // copies: args.bytes / args.size
    int comm = -1;                 // index into KinetoFile::comms, -1 = none
};

// One end of a flow arrow ("s" or "f"), e.g. ac2g: CPU launch -> GPU kernel.
struct KinetoFlow {
    std::int64_t id = 0;
    std::int64_t pid = 0, tid = 0;
    std::int64_t ts_ns = 0;
    bool start = false;
};

struct KinetoCounter {
    std::int64_t pid = 0;
    std::string name;
    std::int64_t time_ns = 0;
    double value = 0;
};

// A "[memory]" instant event (torch.profiler with profile_memory=True): one allocation (Bytes >
// 0) or free (Bytes < 0) and the allocator's totals for that device after it.
struct KinetoMemory {
    std::int64_t time_ns = 0;
    std::int64_t addr = 0;
    std::int64_t bytes = 0;  // signed, as the file gives it
    std::int64_t total_allocated = 0;
    std::int64_t total_reserved = 0;
    std::int64_t device = -1;  // "Device Id": -1 the host
};

struct KinetoFile {
    std::string path;
    std::vector<KinetoEvent> events;
    std::vector<KinetoCommInfo> comms;
    std::vector<KinetoFlow> flows;
    std::vector<KinetoCounter> counters;
    std::vector<KinetoMemory> memory;
    std::map<std::int64_t, std::string> process_names;  // "M" process_name
    std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names;
    std::optional<std::int64_t> base_time_ns;  // baseTimeNanoseconds: ts are relative to it
    std::string display_time_unit;             // display only: ts is always microseconds
    std::optional<int> rank, world_size;       // distributedInfo
    std::string backend;                       // distributedInfo.backend
    std::string device_name;                   // deviceProperties[0].name
    std::int64_t skipped = 0;                  // records not kept (instants, metadata, ...)
};

// Parses `path` (plain or gzip). InputError naming the file and the field for malformed
// JSON, a wrong type, an out-of-range time, and for files that are not profiler traces
// (an execution trace, a memory snapshot, an empty trace), saying what they are.
KinetoFile read_kineto_file(const std::string& path);
// The same parser built for any CPU of this architecture; read_kineto_file() uses it when the
// CPU lacks what the faster build needs.
KinetoFile read_kineto_file_portable(const std::string& path);

}  // namespace meshwork::profiler
