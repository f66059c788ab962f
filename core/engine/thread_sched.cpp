#include "core/engine/thread_sched.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <thread>

#ifdef __linux__
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>
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

HostCpu read_host_cpu() {
    HostCpu h;
#ifdef __linux__
    // proc(5): the "cpu" line of /proc/stat in USER_HZ ticks: user nice system idle iowait
    // irq softirq steal guest guest_nice; guest time is already inside user and nice.
    if (std::FILE* f = std::fopen("/proc/stat", "r")) {
        unsigned long long v[8] = {};
        if (std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                        &v[5], &v[6], &v[7]) == 8) {
            const long hz = sysconf(_SC_CLK_TCK);
            const unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
            if (hz > 0) {
                h.host_busy_cpu_s = static_cast<double>(busy) / static_cast<double>(hz);
                h.host_niced_cpu_s = static_cast<double>(v[1]) / static_cast<double>(hz);
                h.available = true;
            }
        }
        std::fclose(f);
    }
    rusage ru{};
    if (h.available && getrusage(RUSAGE_SELF, &ru) == 0) {
        h.process_cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                          static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    } else {
        h.available = false;
    }
#endif
    return h;
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
