// The engine's reference layouts: the matrix of small layouts (tiny models, sequence 32,
// micro-batch 2, global batch 8, fp32) on which every parallelism of the engine is checked
// against the unsharded reference, in process (tests/core/engine), under MPI (tests/mpi)
// and on GPUs (tests/gpu), and timed (bench/bench_engine).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/layout/layout_overrides.h"
#include "core/mesh/mesh_shape.h"

namespace meshwork::engine {

struct ReferenceLayout {
    const char* name;
    const char* model;
    AxisSizes axes;  // etp stays 1
    int vpp;
    const char* schedule;
    bool sp;
    int zero;
};

inline const std::vector<ReferenceLayout>& reference_layouts() {
    static const std::vector<ReferenceLayout> cases = {
        {"DP2", "tiny", {.dp = 2}, 1, "1f1b", false, 0},
        {"TP2", "tiny", {.tp = 2}, 1, "1f1b", false, 0},
        {"TP2+SP", "tiny", {.tp = 2}, 1, "1f1b", true, 0},
        {"PP2 1F1B", "tiny", {.pp = 2}, 1, "1f1b", false, 0},
        {"PP2 interleaved v2", "tiny", {.pp = 2}, 2, "interleaved", false, 0},
        {"PP4 GPipe", "tiny", {.pp = 4}, 1, "gpipe", false, 0},
        {"EP2", "tiny-moe", {.dp = 2, .ep = 2}, 1, "1f1b", false, 0},
        {"EP2xTP2+SP", "tiny-moe", {.tp = 2, .dp = 2, .ep = 2}, 1, "1f1b", true, 0},
        {"EP2xTP2", "tiny-moe", {.tp = 2, .dp = 2, .ep = 2}, 1, "1f1b", false, 0},
        {"CP2", "tiny", {.cp = 2}, 1, "1f1b", false, 0},
        {"ZeRO-1 DP2", "tiny", {.dp = 2}, 1, "1f1b", false, 1},
        {"TP2xPP2xDP2", "tiny", {.tp = 2, .dp = 2, .pp = 2}, 1, "1f1b", false, 0},
        {"EP4xPP2xCP2 ZeRO-1", "tiny-moe", {.cp = 2, .dp = 2, .pp = 2, .ep = 4}, 1, "1f1b", false, 1},
    };
    return cases;
}

inline LayoutOverrides overrides_of(const ReferenceLayout& c) {
    LayoutOverrides o;
    o.model = c.model;
    o.tp = c.axes.tp;
    o.pp = c.axes.pp;
    o.dp = c.axes.dp;
    o.cp = c.axes.cp;
    o.ep = c.axes.ep;
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
