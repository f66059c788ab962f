#include "core/engine/thread_sched.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <thread>

#ifdef __linux__
#include <sched.h>
#endif

namespace meshwork::engine {

ThreadSched read_thread_sched() {
    ThreadSched s;
#ifdef __linux__
    // /proc/thread-self exists since Linux 3.17; one read of three numbers.
    if (std::FILE* f = std::fopen("/proc/thread-self/schedstat", "r")) {
        long long on_cpu = 0, wait = 0, slices = 0;
        if (std::fscanf(f, "%lld %lld %lld", &on_cpu, &wait, &slices) == 3 && on_cpu >= 0 && wait >= 0) {
            s.available = true;
            s.on_cpu_ns = on_cpu;
            s.run_queue_wait_ns = wait;
            s.timeslices = slices;
        }
        std::fclose(f);
    }
#endif
    return s;
}

std::int64_t thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int usable_cores() {
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace meshwork::engine
