// Remote timeline benchmark (plain timed harness; results in docs/BENCHMARKS.md "Remote
// traces"): what one timeline frame costs through `ssh HOST meshwork-cli serve-trace`,
// against the same queries on the local file.
//   bench_remote_trace TRACE HOST [PIXELS=1600] [LANES=32]
// HOST is reached with the `ssh` on PATH (tests/support/ssh-standin runs it here) and
// $MESHWORK_REMOTE_CLI names the remote meshwork-cli. For each zoom, from the whole trace
// down to 1/4096 of it, one frame = the windows of LANES tracks at PIXELS items, asked in
// one round trip (as RemoteTraceSource does); 10 frames at random offsets per zoom.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "profiler/analysis/timeline_queries.h"
#include "profiler/remote/trace_client.h"
#include "profiler/store/trace_reader.h"

using namespace meshwork::profiler;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_remote_trace TRACE HOST [PIXELS=1600] [LANES=32]\n");
        return 2;
    }
    const std::string path = argv[1], host = argv[2];
    const std::size_t pixels = argc > 3 ? std::stoul(argv[3]) : 1600;
    const std::size_t lanes = argc > 4 ? std::stoul(argv[4]) : 32;

    const auto local = TraceReader::open(path);
    auto t = Clock::now();
    remote::TraceClient client(remote::ssh_serve_command(host, path, remote::remote_cli_from_environment()),
                               host + ":" + path);
    const double connect_ms = ms_since(t);
    const auto hello_bytes = client.bytes_received();
    auto order = timeline_track_order(local.tracks());
    order.resize(std::min(order.size(), lanes));
    std::printf("%s: %lld events, %zu tracks; frames of %zu lanes x %zu pixels\n", path.c_str(),
                static_cast<long long>(local.event_count()), local.tracks().size(), order.size(), pixels);
    std::printf("connect (ssh + hello): %.1f ms, hello %llu bytes\n", connect_ms,
                static_cast<unsigned long long>(hello_bytes));
    std::printf("%10s %12s %12s %12s %12s %12s\n", "zoom", "items/frame", "bytes/frame", "remote med", "remote max",
                "local med");
    std::mt19937_64 rng(7);
    const std::int64_t span = local.end_ns() - local.start_ns() + 1;
    for (std::int64_t div = 1; div <= 4096; div *= 8) {
        const std::int64_t width = std::max<std::int64_t>(1, span / div);
        std::vector<double> remote_ms, local_ms;
        std::size_t items = 0;
        std::uint64_t bytes = 0;
        constexpr int kFrames = 10;
        for (int f = 0; f < kFrames; ++f) {
            const std::int64_t t0 =
                local.start_ns() + (div == 1 ? 0 : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(span - width)));
            const auto before = client.bytes_received();
            t = Clock::now();
            const auto windows = client.windows(order, t0, t0 + width, pixels);
            remote_ms.push_back(ms_since(t));
            bytes += client.bytes_received() - before;
            t = Clock::now();
            std::size_t local_items = 0;
            for (const int track : order) local_items += local.window(track, t0, t0 + width, pixels).size();
            local_ms.push_back(ms_since(t));
            std::size_t remote_items = 0;
            for (const auto& w : windows) remote_items += w.size();
            if (remote_items != local_items) {
                std::fprintf(stderr, "mismatch: %zu items remote, %zu local\n", remote_items, local_items);
                return 1;
            }
            items += remote_items;
        }
        std::printf("%10s %12zu %12llu %11.2f %11.2f %11.2f\n", ("1/" + std::to_string(div)).c_str(), items / kFrames,
                    static_cast<unsigned long long>(bytes / kFrames), median(remote_ms),
                    *std::max_element(remote_ms.begin(), remote_ms.end()), median(local_ms));
    }
    return 0;
}
