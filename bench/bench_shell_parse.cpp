// What reading bash text costs against the interpreter's work budget (core/export/
// shell_parse_cache.cpp, kParseUnitsPerByte): the time to lex and parse a byte of real
// launch scripts, and the time of one budget unit, measured the same way on the same machine
// (a script that spends the whole budget in a loop). Units per byte = the first / the second.
// Results: docs/RELIABILITY.md, "import-args".
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/error.h"
#include "core/export/shell_lexer.h"
#include "core/export/shell_parse_cache.h"
#include "core/export/shell_script.h"

using namespace meshwork;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The real Megatron-LM launch scripts (../shared/realworld/megatron beside the source tree).
std::vector<std::string> real_scripts() {
    std::vector<std::string> out;
    const fs::path dir = fs::path(MESHWORK_SOURCE_DIR) / ".." / "shared" / "realworld" / "megatron";
    if (!fs::is_directory(dir)) return out;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (e.path().extension() == ".sh") out.push_back(read(e.path()));
    }
    return out;
}

}  // namespace

static void BM_LexParseRealScripts(benchmark::State& state) {
    const auto scripts = real_scripts();
    if (scripts.empty()) {
        state.SkipWithError("../shared/realworld/megatron is not beside the source tree");
        return;
    }
    std::int64_t bytes = 0;
    for (auto _ : state) {
        for (const auto& s : scripts) {
            const shell::Lexed lexed = shell::lex_shell(s, "bench.sh");
            benchmark::DoNotOptimize(shell::assigned_names(lexed.tokens));
            benchmark::DoNotOptimize(shell::parse_shell(lexed, "bench.sh"));
            bytes += static_cast<std::int64_t>(s.size());
        }
    }
    state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_LexParseRealScripts)->Unit(benchmark::kMicrosecond);

// One iteration spends a budget of `range(0)` units in a loop of arithmetic and expansion
// (the shape of tests/fixtures/hostile/megatron-nested-loops.sh); items = units.
static void BM_SpendBudget(benchmark::State& state) {
    const std::string script =
        "X=0\nfor a in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do\n"
        "  for b in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do\n"
        "    for c in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do\n"
        "      for d in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do\n"
        "        X=$((X + a * b)); Y=\"${X}-${a}-${b}\"\n"
        "      done\n    done\n  done\ndone\n";
    ScriptOptions options;
    options.work_budget = state.range(0);
    for (auto _ : state) {
        try {
            explore_shell_script(script, "bench.sh", options, 64, [](const ScriptRun&) {});
            state.SkipWithError("the loop did not spend the budget");
            return;
        } catch (const InputError&) {
        }
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SpendBudget)->Arg(20'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
