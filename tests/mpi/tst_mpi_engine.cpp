// Under mpirun -np 4: the communicator suite on the MPI communicator, then a representative
// part of the layout matrix, each rank checking its shards against the unsharded reference
// (computed in every process). Prints one line per check on rank 0; exit 1 on a failure.
#include <cstdio>
#include <iostream>

#include "tests/core/engine/comm_suite.h"
#include "core/engine/reference_layouts.h"
#include "core/engine/comm/mpi_communicator.h"
#include "core/engine/cpu/cpu_backend.h"
#include "core/engine/engine_run.h"
#include "core/layout/layout_validate.h"

using namespace meshwork;
using namespace meshwork::engine;

int main(int argc, char** argv) {
    MpiSession mpi(&argc, &argv);
    if (mpi.world_size() != 4) {
        std::cerr << "run under mpirun -np 4\n";
        return 1;
    }
    auto world = mpi.world(60);
    int failures = 0;
    const bool root = mpi.world_rank() == 0;
    {
        CpuBackend be(mpi.world_rank());
        const std::string err = testing::run_comm_suite(*world, be);
        if (!err.empty()) {
            std::cerr << "FAIL communicator suite: " << err << "\n";
            ++failures;
        } else if (root) {
            std::cout << "PASS communicator suite\n";
        }
    }
    // 4-rank layouts: TP2×PP2 (1F1B), TP2+SP×DP2, EP2×TP2+SP (MoE), CP2×DP2, ZeRO-1 DP4,
    // PP2 interleaved × DP2.
    struct Mpi4 {
        const char* name;
        ReferenceLayout c;
    };
    const Mpi4 cases[] = {
        {"TP2xPP2", {"", "tiny", {.tp = 2, .pp = 2}, 1, "1f1b", false, 0}},
        {"TP2+SPxDP2", {"", "tiny", {.tp = 2, .dp = 2}, 1, "1f1b", true, 0}},
        {"EP2xTP2+SP", {"", "tiny-moe", {.tp = 2, .dp = 2, .ep = 2}, 1, "1f1b", true, 0}},
        {"CP2xDP2", {"", "tiny", {.cp = 2, .dp = 2}, 1, "1f1b", false, 0}},
        {"ZeRO-1 DP4", {"", "tiny", {.dp = 4}, 1, "1f1b", false, 1}},
        {"PP2 interleaved xDP2", {"", "tiny", {.dp = 2, .pp = 2}, 2, "interleaved", false, 0}},
    };
    for (const auto& k : cases) {
        auto o = overrides_of(k.c);
        o.gbs = 8;
        const Layout layout = build_layout(std::nullopt, o);
        require_valid_layout(layout, "<test>");
        EngineOptions options;
        options.steps = 3;
        const ReferenceState ref = run_reference(layout, options);
        RunHooks hooks;
        hooks.reference = &ref;
        const RunResult r = run_rank(layout, options, hooks, *world);
        if (r.mismatch) {
            if (!r.mismatch->on_other_rank) {  // that rank prints it
                std::cerr << "FAIL " << k.name << ": " << r.mismatch->to_string() << "\n";
            }
            ++failures;
        } else if (root) {
            std::cout << "PASS " << k.name << " losses";
            for (const auto& s : r.steps) std::cout << " " << s.loss;
            std::cout << "\n";
        }
    }
    return failures == 0 ? 0 : 1;
}
