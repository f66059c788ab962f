// Layout search over the full space of Llama 3.1 405B on 16,384 H100 (seq 8192, global
// batch 2048): layouts per second, cost-model estimates per second, and what memory
// pruning saves (docs/BENCHMARKS.md, "Layout search").
#include <benchmark/benchmark.h>

#include <chrono>

#include "core/cluster/cluster_spec.h"
#include "core/cost/cost_model.h"
#include "core/model/hf_config.h"
#include "core/search/search.h"

using namespace meshwork;
using namespace meshwork::search;

namespace {

SearchRequest llama405b_request() {
    SearchRequest r;
    r.model_ref = "llama3.1-405b";
    r.model = load_model(r.model_ref);
    r.cluster_ref = "dgx-h100";
    r.cluster = load_cluster(r.cluster_ref);
    r.options.gpus = 16384;
    r.options.global_batch_size = 2048;
    r.options.seq_length = 8192;
    return r;
}

void report(benchmark::State& state, const SearchResult& r, double seconds) {
    state.counters["space"] = static_cast<double>(r.space_size);
    state.counters["estimates"] = static_cast<double>(r.cost_model_calls);
    state.counters["threads"] = r.threads;
    state.counters["layouts_per_s"] = static_cast<double>(r.space_size) / seconds;
    state.counters["estimates_per_s"] = static_cast<double>(r.cost_model_calls) / seconds;
}

}  // namespace

// Arg: memory pruning on (1) or off (0); threads = every core.
static void BM_Search405B(benchmark::State& state) {
    SearchRequest req = llama405b_request();
    req.options.memory_pruning = state.range(0) != 0;
    SearchResult r;
    double seconds = 0;
    for (auto _ : state) {
        const auto t0 = std::chrono::steady_clock::now();
        r = run_search(req);
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        benchmark::DoNotOptimize(r.results.data());
    }
    report(state, r, seconds);
}
BENCHMARK(BM_Search405B)
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

// The same search on one thread: the per-core rate.
static void BM_Search405BOneThread(benchmark::State& state) {
    SearchRequest req = llama405b_request();
    req.options.threads = 1;
    SearchResult r;
    double seconds = 0;
    for (auto _ : state) {
        const auto t0 = std::chrono::steady_clock::now();
        r = run_search(req);
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    report(state, r, seconds);
}
BENCHMARK(BM_Search405BOneThread)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

// Pruned and unpruned searches back to back in each iteration, so that the ratio is taken
// under the same machine load.
static void BM_PruningSpeedup(benchmark::State& state) {
    SearchRequest req = llama405b_request();
    double pruned_s = 0, full_s = 0;
    for (auto _ : state) {
        req.options.memory_pruning = true;
        auto t0 = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(run_search(req).evaluated);
        pruned_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        req.options.memory_pruning = false;
        t0 = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(run_search(req).evaluated);
        full_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    state.counters["pruned_s"] = pruned_s / static_cast<double>(state.iterations());
    state.counters["unpruned_s"] = full_s / static_cast<double>(state.iterations());
    state.counters["speedup"] = full_s / pruned_s;
}
BENCHMARK(BM_PruningSpeedup)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

// One cost-model estimate of the layout the search ranks first.
static void BM_EstimateBestLayout(benchmark::State& state) {
    SearchRequest req = llama405b_request();
    req.options.top_k = 1;
    const Layout best = run_search(req).results.front().layout;
    const CostModel model(best);
    Estimate e;
    for (auto _ : state) {
        model.estimate(best.parallel, best.placement, best.training, e);
        benchmark::DoNotOptimize(e.step_time_s);
    }
}
BENCHMARK(BM_EstimateBestLayout)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
