// Cost of the cost model and the simulator: one estimate (the GUI recomputes it on every
// edit, the search millions of times) and one simulated step, and how both grow with the
// world size and the number of micro-batches. Results: docs/BENCHMARKS.md.
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include "core/common/resources.h"
#include "core/cost/cost_model.h"
#include "core/layout/layout_json.h"
#include "core/sim/simulate.h"

using namespace meshwork;

namespace {

Layout llama405b() { return load_layout(resource_dir() + "/layouts/llama3.1-405b-h100-16384.json"); }

// Llama 3.1 405B, TP8 PP16, dp = world / 128, `m` micro-batches of one sequence.
Layout scaled(int world, int m) {
    Layout l = llama405b();
    l.gpus = world;
    l.parallel.mesh.dp = world / 128;
    l.training.global_batch_size = m * l.parallel.mesh.dp;
    return l;
}

double max_rss_bytes() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) * 1024.0;
}

// Counts what the simulator writes, storing nothing.
class CountingSink : public TraceSink {
public:
    void set_run_info(const TraceRunInfo&) override {}
    int add_track(const TrackInfo&) override { return tracks_++; }
    void add_event(const TraceEvent&) override { ++events_; }
    void add_counter(int, int, const std::string&, std::int64_t, double) override {}
    void close() override {}
    long events_ = 0;
    int tracks_ = 0;
};

}  // namespace

// One estimate with a reused CostModel and output (the search's and the GUI's path).
static void BM_Estimate405B(benchmark::State& state) {
    const Layout l = llama405b();
    const CostModel model(l);
    Estimate e;
    for (auto _ : state) {
        model.estimate(l, e);
        benchmark::DoNotOptimize(e.step_time_s);
    }
}
BENCHMARK(BM_Estimate405B)->Unit(benchmark::kMicrosecond);

// The convenience path: validation, CostModel construction, estimate.
static void BM_EstimateLayout405B(benchmark::State& state) {
    const Layout l = llama405b();
    for (auto _ : state) benchmark::DoNotOptimize(estimate_layout(l).step_time_s);
}
BENCHMARK(BM_EstimateLayout405B)->Unit(benchmark::kMicrosecond);

static void BM_EstimateScaling(benchmark::State& state) {
    const Layout l = scaled(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
    const CostModel model(l);
    Estimate e;
    for (auto _ : state) {
        model.estimate(l, e);
        benchmark::DoNotOptimize(e.step_time_s);
    }
}
BENCHMARK(BM_EstimateScaling)
    ->ArgsProduct({{1024, 16384, 32768}, {16, 64, 256}})
    ->Unit(benchmark::kMicrosecond);

// Llama 3.1 405B on 16,384 H100, TP8 PP16 DP128, 16 micro-batches: validation, schedule,
// simulation and metrics, no timeline.
static void BM_Simulate405B(benchmark::State& state) {
    const Layout l = llama405b();
    std::size_t bytes = 0;
    for (auto _ : state) bytes = simulate_layout(l).memory_bytes;
    state.counters["sim_state_bytes"] = static_cast<double>(bytes);
    state.counters["max_rss_bytes"] = max_rss_bytes();
}
BENCHMARK(BM_Simulate405B)->Unit(benchmark::kMillisecond);

static void BM_SimulateScaling(benchmark::State& state) {
    const Layout l = scaled(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
    SimulationResult r;
    for (auto _ : state) r = simulate_layout(l);
    state.counters["sim_state_bytes"] = static_cast<double>(r.memory_bytes);
    state.counters["events"] = static_cast<double>(r.sim_events);
}
BENCHMARK(BM_SimulateScaling)
    ->ArgsProduct({{1024, 16384, 32768}, {16, 64, 256}})
    ->Unit(benchmark::kMillisecond);

// The same with the predicted timeline written to a sink that only counts.
static void BM_Simulate405BTimeline(benchmark::State& state) {
    const Layout l = llama405b();
    long events = 0;
    for (auto _ : state) {
        CountingSink sink;
        simulate_layout(l, &sink);
        events = sink.events_;
    }
    state.counters["trace_events"] = static_cast<double>(events);
    state.counters["max_rss_bytes"] = max_rss_bytes();
}
BENCHMARK(BM_Simulate405BTimeline)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
