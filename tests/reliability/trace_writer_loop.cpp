// Helper for tst_crash_safety: writes events through TraceWriter until it is killed, like a
// profiled run. Event k carries k in correlation_id so the test can tell which ones survived.
//
//   trace_writer_loop TRACE PROGRESS
//
// After each batch has been handed to the writer it appends "COUNT MONOTONIC_NS" to PROGRESS
// with write(2), so the line survives a SIGKILL of this process (the page cache keeps it) and
// the test knows how many events had been added by which time. SIGINT ends the loop, closes
// the trace and prints the final count on stdout.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <string>
#include <thread>
#include <unistd.h>

#include "profiler/store/trace_writer.h"

namespace {

std::atomic<bool> stop_requested{false};
extern "C" void on_sigint(int /*signal*/) { stop_requested.store(true); }

std::int64_t monotonic_ns() {
    // steady_clock is CLOCK_MONOTONIC on Linux: the same clock in the test process.
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

constexpr int kBatch = 200;  // events per batch; a batch every 5 ms: 40k events/s
constexpr const char* kNames[] = {"block.0.attention.fwd", "block.0.mlp.fwd", "all_reduce(tp)",
                                  "block.0.mlp.bwd"};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: trace_writer_loop TRACE PROGRESS\n");
        return 2;
    }
    std::signal(SIGINT, on_sigint);
    const int progress = ::open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (progress < 0) return 1;

    auto writer = meshwork::profiler::TraceWriter::create(argv[1]);
    meshwork::TraceRunInfo info;
    info.source = "meshwork-cpu";
    info.clock_domain = "steady";
    info.world_size = 1;
    writer->set_run_info(info);
    const int track = writer->add_track({0, meshwork::TrackKind::ComputeStream, 0, "compute"});
    std::printf("ready\n");
    std::fflush(stdout);

    std::int64_t count = 0;
    while (!stop_requested.load()) {
        for (int i = 0; i < kBatch; ++i, ++count) {
            meshwork::TraceEvent e;
            e.track = track;
            e.kind = meshwork::EventKind::Compute;
            e.name = kNames[count % 4];
            e.start_ns = count * 1000;
            e.end_ns = count * 1000 + 800;
            e.step = static_cast<int>(count / 10000);
            e.correlation_id = count;
            writer->add_event(e);
        }
        const std::string line = std::to_string(count) + " " + std::to_string(monotonic_ns()) + "\n";
        if (::write(progress, line.data(), line.size()) < 0) return 1;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    writer->close();
    std::printf("%lld\n", static_cast<long long>(count));
    return 0;
}
