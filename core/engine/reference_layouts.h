// The engine's reference layouts: the matrix of small layouts (tiny models, sequence 32,
// micro-batch 2, global batch 8, fp32) on which every parallelism of the engine is checked
// against the unsharded reference, in process (tests/core/engine), under MPI (tests/mpi)
// and on GPUs (tests/gpu), and timed (bench/bench_engine).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/layout/layout_overrides.h"

namespace meshwork::engine {

struct ReferenceLayout {
    const char* name;
    const char* model;
    int tp, pp, dp, cp, ep, vpp;
    const char* schedule;
    bool sp;
    int zero;
};

inline const std::vector<ReferenceLayout>& reference_layouts() {
    static const std::vector<ReferenceLayout> cases = {
        {"DP2", "tiny", 1, 1, 2, 1, 1, 1, "1f1b", false, 0},
        {"TP2", "tiny", 2, 1, 1, 1, 1, 1, "1f1b", false, 0},
        {"TP2+SP", "tiny", 2, 1, 1, 1, 1, 1, "1f1b", true, 0},
        {"PP2 1F1B", "tiny", 1, 2, 1, 1, 1, 1, "1f1b", false, 0},
        {"PP2 interleaved v2", "tiny", 1, 2, 1, 1, 1, 2, "interleaved", false, 0},
        {"PP4 GPipe", "tiny", 1, 4, 1, 1, 1, 1, "gpipe", false, 0},
        {"EP2", "tiny-moe", 1, 1, 2, 1, 2, 1, "1f1b", false, 0},
        {"EP2xTP2+SP", "tiny-moe", 2, 1, 2, 1, 2, 1, "1f1b", true, 0},
        {"EP2xTP2", "tiny-moe", 2, 1, 2, 1, 2, 1, "1f1b", false, 0},
        {"CP2", "tiny", 1, 1, 1, 2, 1, 1, "1f1b", false, 0},
        {"ZeRO-1 DP2", "tiny", 1, 1, 2, 1, 1, 1, "1f1b", false, 1},
        {"TP2xPP2xDP2", "tiny", 2, 2, 2, 1, 1, 1, "1f1b", false, 0},
        {"EP4xPP2xCP2 ZeRO-1", "tiny-moe", 1, 2, 2, 2, 4, 1, "1f1b", false, 1},
    };
    return cases;
}

inline LayoutOverrides overrides_of(const ReferenceLayout& c) {
    LayoutOverrides o;
    o.model = c.model;
    o.tp = c.tp;
    o.pp = c.pp;
    o.dp = c.dp;
    o.cp = c.cp;
    o.ep = c.ep;
    o.vpp = c.vpp;
    o.mbs = 2;
    o.gbs = 8;
    o.seq = 32;
    o.schedule = c.schedule;
    o.sequence_parallel = c.sp;
    o.zero = c.zero;
    o.dtype = "fp32";
    return o;
}

}  // namespace meshwork::engine
