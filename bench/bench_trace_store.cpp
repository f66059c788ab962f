// Trace store benchmark (plain timed harness; results in docs/BENCHMARKS.md "Trace store").
//   bench_trace_store [EVENTS=10000000] [PATH=/tmp/bench_trace_store.sqlite] [keep]
// Writes EVENTS events over 8 tracks (4 ranks x compute + communication stream) with
// 1-20 us kernels back to back, then measures ingest rate, close time, file size per event
// and window queries of 4000 items per track at zooms from the whole trace down to 4 us.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_writer.h"

using namespace meshwork;
using namespace meshwork::profiler;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    const std::int64_t n_events = argc > 1 ? std::stoll(argv[1]) : 10'000'000;
    const std::string path = argc > 2 ? argv[2] : "/tmp/bench_trace_store.sqlite";
    constexpr int kTracks = 8;
    constexpr std::size_t kItems = 4000;

    std::vector<std::string> names;
    for (int i = 0; i < 200; ++i) names.push_back("sm90_xmma_gemm_bf16_kernel_" + std::to_string(i));
    names.push_back("ncclDevKernel_AllReduce_Sum_bf16_RING_LL");

    auto writer = TraceWriter::create(path);
    TraceRunInfo info;
    info.source = "bench";
    info.world_size = kTracks / 2;
    writer->set_run_info(info);
    std::vector<int> tracks;
    for (int t = 0; t < kTracks; ++t) {
        tracks.push_back(writer->add_track(
            {t / 2, t % 2 ? TrackKind::CommStream : TrackKind::ComputeStream, 0,
             t % 2 ? "comm" : "compute"}));
    }
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<std::int64_t> dur(1000, 20000);
    std::uniform_int_distribution<int> pick(0, 199);
    std::vector<std::int64_t> clock(kTracks, 0);

    const auto t_ingest = Clock::now();
    TraceEvent e;
    for (std::int64_t i = 0; i < n_events; ++i) {
        const int t = static_cast<int>(i % kTracks);
        e.track = tracks[t];
        e.rank = t / 2;
        const bool comm = t % 2 == 1;
        e.kind = comm ? EventKind::Communication : EventKind::Compute;
        e.name = comm ? names.back() : names[static_cast<std::size_t>(pick(rng))];
        e.start_ns = clock[t] + 200;
        e.end_ns = e.start_ns + dur(rng);
        clock[t] = e.end_ns;
        e.bytes = comm ? 1 << 20 : 0;
        e.flops = comm ? 0 : 1e9;
        e.step = static_cast<int>(i / 100000);
        writer->add_event(e);
    }
    writer->flush();
    const double ingest_s = seconds_since(t_ingest);
    const auto t_close = Clock::now();
    writer->close();
    const double close_s = seconds_since(t_close);
    const auto bytes = std::filesystem::file_size(path);

    std::printf("events                 %lld\n", static_cast<long long>(n_events));
    std::printf("ingest                 %.2f s  (%.0f events/s, producer to committed)\n", ingest_s,
                static_cast<double>(n_events) / ingest_s);
    std::printf("close                  %.2f s  (timeline chunks + level of detail)\n", close_s);
    std::printf("file                   %.1f MB  (%.1f bytes/event)\n", static_cast<double>(bytes) / 1e6,
                static_cast<double>(bytes) / static_cast<double>(n_events));

    auto reader = TraceReader::open(path);
    const std::int64_t t0 = reader.start_ns();
    const std::int64_t span = reader.end_ns() - t0;
    std::printf("window queries (%zu items max, 20 random windows per zoom, track 0):\n", kItems);
    std::printf("  %-14s %10s %10s %10s\n", "window", "median ms", "max ms", "items");
    double worst_ms = 0;
    for (std::int64_t w = span; w >= 4000; w /= 8) {
        std::vector<double> ms;
        std::size_t items = 0;
        std::uniform_int_distribution<std::int64_t> at(t0, t0 + std::max<std::int64_t>(0, span - w));
        for (int k = 0; k < 20; ++k) {
            const std::int64_t a = at(rng);
            const auto q = Clock::now();
            const auto got = reader.window(tracks[0], a, a + w, kItems);
            ms.push_back(seconds_since(q) * 1e3);
            items = std::max(items, got.size());
            if (got.size() > kItems) {
                std::printf("ERROR: %zu items returned for a %zu-item window\n", got.size(), kItems);
                return 1;
            }
        }
        std::sort(ms.begin(), ms.end());
        worst_ms = std::max(worst_ms, ms.back());
        std::printf("  %-11.6f s %10.2f %10.2f %10zu\n", static_cast<double>(w) / 1e9, ms[ms.size() / 2],
                    ms.back(), items);
    }
    std::printf("window worst           %.2f ms\n", worst_ms);
    if (!(argc > 3 && std::string(argv[3]) == "keep")) std::filesystem::remove(path);
    return 0;
}
