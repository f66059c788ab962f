// Engine benchmarks (results: docs/BENCHMARKS.md, "Engine").
//   BM_LayerStep_Hidden1024: one training step of a hidden-1024 transformer layer on one CPU
//     rank; counter gemm_share = time inside Backend::gemm / step time (target ≥ 0.8).
//   BM_InprocAllReduce_64MiB_2Ranks: in-process all-reduce of 64 MiB over 2 rank threads;
//     counter of_memcpy = algorithm bandwidth / this machine's 64 MiB memcpy bandwidth
//     measured in the same run (target ≥ 0.5).
//   BM_Memcpy_64MiB: the memcpy baseline on its own.
//   BM_Matrix/<layout>: tokens/s of the tiny demo model for the engine's layout matrix.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "core/engine/comm/inproc_world.h"
#include "core/engine/cpu/cpu_backend.h"
#include "core/engine/engine_run.h"
#include "core/engine/reference_layouts.h"
#include "core/engine/rank_context.h"
#include "core/layout/layout_overrides.h"

using namespace meshwork;
using namespace meshwork::engine;

namespace {

constexpr std::size_t kAllReduceBytes = 64u << 20;

// Times the GEMMs of a CPU backend.
class GemmTimedBackend : public CpuBackend {
public:
    using CpuBackend::CpuBackend;
    void gemm(Transpose ta, Transpose tb, int m, int n, int k, float alpha, const float* a, int lda,
              const float* b, int ldb, float beta, float* c, int ldc, Stream s) override {
        const auto t0 = std::chrono::steady_clock::now();
        CpuBackend::gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
        gemm_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    double gemm_s = 0;
};

Layout hidden_1024_layer() {
    LayoutOverrides o;
    o.model = "tiny";
    o.gpus = 1;
    o.mbs = 4;
    o.gbs = 4;
    o.seq = 256;
    o.dtype = "fp32";
    Layout l = build_layout(std::nullopt, o);
    // One Llama-style layer: hidden 1024, 16 heads of 64 (GQA 16:8), SwiGLU 2816. The byte
    // vocabulary keeps the embedding and LM head small next to the layer.
    l.model.hidden_size = 1024;
    l.model.num_heads = 16;
    l.model.num_kv_heads = 8;
    l.model.head_dim = 64;
    l.model.ffn_hidden_size = 2816;
    l.model.num_layers = 1;
    l.model.max_position_embeddings = 256;
    l.placement = {};
    return l;
}

void BM_LayerStep_Hidden1024(benchmark::State& state) {
    const Layout layout = hidden_1024_layer();
    EngineOptions options;
    CpuBackend::set_blas_threads(1);
    InProcessWorld world(1, 60);
    auto comm = world.communicator(0);
    GemmTimedBackend be(0);
    RankContext ctx(layout, be, *comm, nullptr);
    const TokenStream tokens = make_token_stream(layout, options);
    RankTrainer trainer(layout, options, ctx, tokens);
    trainer.step(1);  // warm-up: first-touch of the activations
    double step_s = 0;
    int step = 2;
    be.gemm_s = 0;
    for (auto _ : state) {
        const StepResult r = trainer.step(step++);
        step_s += r.step_time_s;
        benchmark::DoNotOptimize(r.loss);
    }
    state.counters["gemm_share"] = be.gemm_s / step_s;
    state.counters["tokens_per_s"] = benchmark::Counter(
        static_cast<double>(layout.training.global_batch_size) * layout.training.seq_length * static_cast<double>(state.iterations()) / step_s);
}
BENCHMARK(BM_LayerStep_Hidden1024)->Unit(benchmark::kMillisecond)->Iterations(5);

double memcpy_seconds(std::vector<char>& dst, const std::vector<char>& src, int reps) {
    std::memcpy(dst.data(), src.data(), src.size());
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) {
        std::memcpy(dst.data(), src.data(), src.size());
        benchmark::ClobberMemory();
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}

void BM_Memcpy_64MiB(benchmark::State& state) {
    std::vector<char> src(kAllReduceBytes, 1), dst(kAllReduceBytes, 0);
    for (auto _ : state) {
        std::memcpy(dst.data(), src.data(), src.size());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(kAllReduceBytes));
}
BENCHMARK(BM_Memcpy_64MiB)->Unit(benchmark::kMillisecond);

void BM_InprocAllReduce_64MiB_2Ranks(benchmark::State& state) {
    const std::size_t count = kAllReduceBytes / sizeof(float);
    InProcessWorld world(2, 60);
    std::vector<std::unique_ptr<Communicator>> comms;
    comms.push_back(world.communicator(0));
    comms.push_back(world.communicator(1));
    std::vector<std::vector<float>> bufs(2, std::vector<float>(count, 1.0f));
    CpuBackend be(0);
    double total_s = 0;
    for (auto _ : state) {
        const auto t0 = std::chrono::steady_clock::now();
        std::thread other([&] { comms[1]->all_reduce(bufs[1].data(), bufs[1].data(), count, ReduceOp::Sum, be.compute_stream()); });
        comms[0]->all_reduce(bufs[0].data(), bufs[0].data(), count, ReduceOp::Sum, be.compute_stream());
        other.join();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        total_s += s;
        state.SetIterationTime(s);
    }
    std::vector<char> src(kAllReduceBytes, 1), dst(kAllReduceBytes, 0);
    const double memcpy_s = memcpy_seconds(dst, src, 5);
    const double algbw = static_cast<double>(kAllReduceBytes) * static_cast<double>(state.iterations()) / total_s;
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(kAllReduceBytes));
    state.counters["memcpy_GBps"] = static_cast<double>(kAllReduceBytes) / memcpy_s / 1e9;
    state.counters["algbw_GBps"] = algbw / 1e9;
    state.counters["of_memcpy"] = algbw / (static_cast<double>(kAllReduceBytes) / memcpy_s);
}
BENCHMARK(BM_InprocAllReduce_64MiB_2Ranks)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(10);

void BM_Matrix(benchmark::State& state, LayoutOverrides o) {
    const Layout layout = build_layout(std::nullopt, o);
    EngineOptions options;
    options.steps = 3;
    double tokens_per_s = 0;
    for (auto _ : state) {
        const RunResult r = run_in_process(layout, options, {});
        tokens_per_s = r.steps.back().tokens_per_s;  // after two warm steps
    }
    state.counters["tokens_per_s"] = tokens_per_s;
}

// Benchmark names without spaces: "PP2 1F1B" -> "PP2_1F1B".
std::string bench_name(std::string name) {
    for (char& ch : name) {
        if (ch == ' ') ch = '_';
    }
    return "BM_Matrix/" + name;
}

const bool kMatrixRegistered = [] {
    // The unsharded layout first (the peer of every row), then the engine's reference layouts.
    LayoutOverrides unsharded = overrides_of(reference_layouts().front());
    unsharded.dp = 1;
    unsharded.gpus = 1;
    benchmark::RegisterBenchmark("BM_Matrix/unsharded", BM_Matrix, unsharded)->Unit(benchmark::kMillisecond)->Iterations(1);
    for (const auto& c : reference_layouts()) {
        benchmark::RegisterBenchmark(bench_name(c.name).c_str(), BM_Matrix, overrides_of(c))
            ->Unit(benchmark::kMillisecond)
            ->Iterations(1);
    }
    return true;
}();

}  // namespace

BENCHMARK_MAIN();
