// A generated multi-rank trace that carries its layout, for the rank overview's and grouped
// lanes' tests and the cluster-scale frame benchmark (bench/bench_gui_cluster.cpp): per rank
// a compute stream, comm:tp, comm:dp and a host lane of step markers; collectives end when
// the last rank of their mesh group has arrived, so a slow rank makes the others wait as in
// a real job. Written with the profiler's TraceWriter.
#pragma once

#include <cstdint>
#include <string>

#include "core/layout/layout.h"

namespace meshwork::gui::test {

struct ClusterTraceShape {
    // A bundled layout (resources/layouts); its mesh is the trace's unless overridden.
    std::string layout = "gpt3-175b-a100-1024";
    int tp = 0, dp = 0, pp = 0;  // > 0: overrides the layout's (gpus follows)
    int steps = 4;
    int kernels_per_step = 24;  // per rank; an all_reduce(tp) after every 4
    int slow_rank = -1;         // its kernels take `slow_factor` times longer
    double slow_factor = 1.0;
    std::uint32_t seed = 5;
};

// The layout the trace carries.
Layout cluster_trace_layout(const ClusterTraceShape& shape);
// Events written: ranks × steps × (kernels + kernels / 4 + 2).
std::int64_t write_cluster_trace(const ClusterTraceShape& shape, const std::string& path);

}  // namespace meshwork::gui::test
