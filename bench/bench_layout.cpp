// Cost of the foundation operations the GUI and the search repeat: loading and validating
// a layout, building its mesh and mapping ranks.
#include <benchmark/benchmark.h>

#include "core/common/resources.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_validate.h"
#include "core/mesh/device_mesh.h"

using namespace meshwork;

static void BM_LoadLayout(benchmark::State& state) {
    const std::string path = resource_dir() + "/layouts/llama3.1-405b-h100-16384.json";
    for (auto _ : state) benchmark::DoNotOptimize(load_layout(path));
}
BENCHMARK(BM_LoadLayout)->Unit(benchmark::kMicrosecond);

static void BM_ValidateLayout(benchmark::State& state) {
    const Layout l = load_layout(resource_dir() + "/layouts/llama3.1-405b-h100-16384.json");
    for (auto _ : state) benchmark::DoNotOptimize(validate_layout(l, "bench"));
}
BENCHMARK(BM_ValidateLayout)->Unit(benchmark::kMicrosecond);

static void BM_MeshGroups(benchmark::State& state) {
    MeshShape s;
    s.tp = 8;
    s.pp = 16;
    s.dp = static_cast<int>(state.range(0)) / 128;
    const DeviceMesh mesh(s, 8);
    for (auto _ : state) benchmark::DoNotOptimize(mesh.groups(Axis::Dp));
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_MeshGroups)->Arg(1024)->Arg(16384)->Unit(benchmark::kMicrosecond);

static void BM_RankCoords(benchmark::State& state) {
    MeshShape s;
    s.tp = 8;
    s.pp = 16;
    s.dp = 128;
    const DeviceMesh mesh(s, 8);
    int r = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(mesh.coords(r));
        r = (r + 1) % mesh.world_size();
    }
}
BENCHMARK(BM_RankCoords);

BENCHMARK_MAIN();
