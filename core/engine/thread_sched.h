// What the scheduler did to the calling thread: its time on a CPU, its time runnable but
// waiting for one (the run queue), and its CPU time by the POSIX thread clock. The CPU
// engine records them per rank thread and step (RankContext::end_step_sched) so that
// calibrate can tell waiting for a core from waiting for a peer (docs/profiler.md,
// "Calibrate", host cores).
#pragma once

#include <cstdint>

namespace meshwork::engine {

struct ThreadSched {
    bool available = false;             // false where /proc/thread-self/schedstat cannot be read
    std::int64_t on_cpu_ns = 0;         // schedstat field 1: time spent on a CPU
    std::int64_t run_queue_wait_ns = 0; // schedstat field 2: time runnable, waiting for a CPU
    std::int64_t timeslices = 0;        // schedstat field 3: times it was put on a CPU
};

// Linux's per-thread scheduler statistics (Documentation/scheduler/sched-stats.rst,
// "/proc/<pid>/schedstat"); not available elsewhere, or with CONFIG_SCHED_INFO off.
ThreadSched read_thread_sched();

// The host's CPU time and this process's, cumulative: what other processes took from the
// host's cores over an interval is the host's busy time less this process's (calibrate's
// host cores).
struct HostCpu {
    bool available = false;        // false where /proc/stat cannot be read
    double host_busy_cpu_s = 0;    // every CPU's non-idle time (/proc/stat "cpu" line)
    double host_niced_cpu_s = 0;   // ... of it, processes at a positive nice ("nice" column)
    double process_cpu_s = 0;      // this process's user + system time (getrusage)
};
HostCpu read_host_cpu();

// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID: user and system time), ns.
std::int64_t thread_cpu_ns();

// The logical CPUs this process may run on (its affinity mask; containers and taskset
// limit it), at least 1.
int usable_cores();

}  // namespace meshwork::engine
