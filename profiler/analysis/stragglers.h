// The ranks that hold a job back, step by step, from the per rank × step metrics
// (rank_steps.h): `meshwork-cli stats --stragglers`. The rule and its thresholds are in
// stragglers.cpp and docs/profiler.md ("Stragglers").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/mesh/device_mesh.h"
#include "profiler/analysis/rank_steps.h"

namespace meshwork::profiler {

enum class StragglerReason {
    Compute,  // its compute takes longer than its peers' and they wait for it
    Late,     // its compute is typical, yet its peers wait for it (a host, input or link stall)
};

const char* to_string(StragglerReason reason);  // "compute", "late"

struct Straggler {
    int rank = 0;
    int step = 0;
    double slowdown = 0;      // its compute / the median compute of its peers in the step
    bool slowdown_on_cpu = false;  // compute compared on CPU time (RankStepCell::compute_on_cpu_s), not wall time
    StragglerReason reason = StragglerReason::Compute;
    int peers = 0;            // the other ranks of its pipeline stage present in the step
    int waited_by = 0;        // peers whose longest wait in the step was for this rank
    double peer_wait_s = 0;   // median collective wait of its peers in the step
    double own_wait_s = 0;    // its own collective wait in the step
    double step_s = 0;        // median step time of its stage in the step
};

struct StragglerReport {
    std::vector<int> steps_checked;  // the steps looked at: all but a first warm-up step
    // The ranks held back their peers in at least half of the steps checked: every step in
    // which they did, by step, then rank.
    std::vector<Straggler> stragglers;
    // Ranks that held their peers back in fewer steps: one-off stalls (a rank descheduled on
    // a shared host, a page-fault storm, a slow read) rather than a rank that holds the job back.
    std::vector<Straggler> transient;
};

// `mesh`: the mesh of the layout the trace carries (trace_layout.h), so that ranks are
// compared with the ranks of their own pipeline stage; without one, every rank with every other.
StragglerReport find_stragglers(const RankStepMatrix& matrix, const std::optional<DeviceMesh>& mesh);

}  // namespace meshwork::profiler
