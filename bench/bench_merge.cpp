// Merge benchmark (plain timed harness; results in docs/BENCHMARKS.md "Merge at scale").
//   bench_merge [--ranks N=256] [--events-per-rank E=40000] [--dir DIR=/tmp/bench_merge]
//               [--threads T]... [--cli PATH]...
// Writes N per-rank Meshwork traces of one run (compute and communication streams, a host
// lane with a barrier, E events a rank, clocks skewed up to 5 ms), then merges them, each
// variant in a child process of its own so that its peak resident memory (ru_maxrss from
// wait4) is its own: merge_traces in-process with each --threads value (default: 1 and one
// per core), and `PATH merge DIR --out OUT` for each --cli (e.g. the binary before a change
// and after, in one run). Prints wall time, peak memory and events/s per variant.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "profiler/merge/trace_merge.h"
#include "profiler/store/trace_output.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_writer.h"

using namespace meshwork;
using namespace meshwork::profiler;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

struct Options {
    int ranks = 256;
    std::int64_t events_per_rank = 40'000;
    std::string dir = "/tmp/bench_merge";
    std::vector<unsigned> threads;
    std::vector<std::string> clis;
};

// One rank's trace: a barrier, then steps of 8 kernels and 2 collectives, 1-20 us each.
void write_rank(const std::string& path, int rank, int world, std::int64_t events) {
    auto w = TraceWriter::create(path);
    TraceRunInfo info;
    info.source = "meshwork-cpu";
    info.world_size = world;
    info.extra["run_id"] = "bench-merge";
    const std::int64_t skew = (rank * 7919LL) % 5000 * 1000;
    info.start_time_unix_ns = 1'700'000'000'000'000'000LL + skew;
    w->set_run_info(info);
    const int compute = w->add_track({rank, TrackKind::ComputeStream, 0, "compute"});
    const int comm = w->add_track({rank, TrackKind::CommStream, 0, "comm:dp"});
    const int host = w->add_track({rank, TrackKind::Host, 0, "host"});
    TraceEvent e;
    e.track = host;
    e.rank = rank;
    e.kind = EventKind::Marker;
    e.name = "barrier";
    e.start_ns = skew + 90'000;
    e.end_ns = skew + 100'000;
    w->add_event(e);
    std::int64_t t = skew + 100'000;
    for (std::int64_t i = 1; i < events; ++i) {
        const bool collective = i % 5 == 0;
        e.track = collective ? comm : compute;
        e.kind = collective ? EventKind::Communication : EventKind::Compute;
        e.name = collective ? "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"
                            : "sm90_xmma_gemm_bf16_kernel_" + std::to_string(i % 50);
        const std::int64_t dur = 1000 + (i * 2654435761LL) % 19000;
        e.start_ns = t;
        e.end_ns = t + dur;
        e.step = static_cast<int>(i / 1000);
        e.bytes = collective ? 1 << 20 : 0;
        e.group_size = collective ? world : 0;
        w->add_event(e);
        if (!collective) t += dur;
    }
    w->close();
}

std::vector<std::string> generate(const Options& o) {
    fs::create_directories(o.dir + "/ranks");
    std::vector<std::string> paths;
    for (int r = 0; r < o.ranks; ++r) {
        char name[64];
        std::snprintf(name, sizeof name, "/ranks/rank%05d.sqlite", r);
        paths.push_back(o.dir + name);
    }
    const auto t0 = Clock::now();
    std::vector<std::jthread> pool;
    const unsigned n = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned k = 0; k < n; ++k) {
        pool.emplace_back([&, k] {
            for (std::size_t r = k; r < paths.size(); r += n) write_rank(paths[r], static_cast<int>(r), o.ranks, o.events_per_rank);
        });
    }
    pool.clear();
    std::uintmax_t bytes = 0;
    for (const auto& p : paths) bytes += fs::file_size(p);
    std::printf("inputs: %d ranks x %lld events = %lld events, %.1f MB, written in %.1f s\n", o.ranks,
                static_cast<long long>(o.events_per_rank), static_cast<long long>(o.events_per_rank) * o.ranks,
                static_cast<double>(bytes) / 1e6, std::chrono::duration<double>(Clock::now() - t0).count());
    return paths;
}

// Runs `child` in a forked process; prints its wall time and peak resident memory.
template <class Fn>
void measure(const std::string& label, const std::string& out, std::int64_t events, Fn child) {
    std::fflush(stdout);
    const auto t0 = Clock::now();
    const pid_t pid = fork();
    if (pid == 0) _exit(child());
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::uintmax_t size = 0;
    std::error_code ec;
    if (ok) size = fs::file_size(out, ec);
    std::printf("%-44s %s wall %7.2f s  peak RSS %8.1f MB  %9.0f events/s  user %6.2f s  sys %5.2f s  out %.1f MB\n",
                label.c_str(), ok ? "ok    " : "FAILED", wall, static_cast<double>(usage.ru_maxrss) / 1024.0,
                static_cast<double>(events) / wall,
                static_cast<double>(usage.ru_utime.tv_sec) + static_cast<double>(usage.ru_utime.tv_usec) / 1e6,
                static_cast<double>(usage.ru_stime.tv_sec) + static_cast<double>(usage.ru_stime.tv_usec) / 1e6,
                static_cast<double>(size) / 1e6);
    fs::remove(out, ec);
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--ranks") o.ranks = std::stoi(value);
        else if (flag == "--events-per-rank") o.events_per_rank = std::stoll(value);
        else if (flag == "--dir") o.dir = value;
        else if (flag == "--threads") o.threads.push_back(static_cast<unsigned>(std::stoul(value)));
        else if (flag == "--cli") o.clis.push_back(value);
        else {
            std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
            return 2;
        }
    }
    if (o.threads.empty()) o.threads = {1, std::max(1u, std::thread::hardware_concurrency())};
    std::printf("machine: %u hardware threads\n", std::thread::hardware_concurrency());
    const auto paths = generate(o);
    const std::int64_t events = o.events_per_rank * o.ranks;
    const std::string out = o.dir + "/merged.sqlite";
    for (const auto& cli : o.clis) {
        measure("cli " + cli, out, events, [&] {
            // The verb's per-input report is not the figure.
            if (std::freopen("/dev/null", "w", stdout) == nullptr) return 126;
            execl(cli.c_str(), cli.c_str(), "merge", (o.dir + "/ranks").c_str(), "--out", out.c_str(),
                  static_cast<char*>(nullptr));
            return 127;
        });
    }
    for (unsigned t : o.threads) {
        measure("merge_traces, threads " + std::to_string(t), out, events, [&] {
            try {
                TraceOutput output(out);
                MergeOptions mo;
                mo.threads = t;
                const auto r = merge_traces(paths, output.writer(), mo);
                output.commit();
                return r.events == events ? 0 : 1;
            } catch (const std::exception& e) {
                std::fprintf(stderr, "%s\n", e.what());
                return 1;
            }
        });
    }
    fs::remove_all(o.dir + "/ranks");
    return 0;
}
