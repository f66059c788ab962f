// Discrete-event simulation of one training step of a pipeline: per pipeline rank a
// compute stream that runs the passes of the shared schedule generator
// (core/schedule/pipeline_schedule.h) in order, stage-to-stage transfers that block the
// sending stream (Megatron's batched send/recv), and cross-rank dependencies (a forward
// needs the previous chunk's activation, a backward the next chunk's gradient).
//
// Ranks of the same pipeline stage that differ only in tp, cp, dp or ep coordinates do the
// same work at the same time, so one representative rank per stage is simulated: the cost
// grows with pp × vpp × micro-batches, not with the world size.
#pragma once

#include <cstdint>
#include <vector>

#include "core/schedule/pipeline_schedule.h"

namespace meshwork::sim {

struct PipelineTimes {
    // chunk_fwd_s[g], chunk_bwd_s[g]: one micro-batch through global chunk g (g = c·pp + r).
    std::vector<double> chunk_fwd_s;
    std::vector<double> chunk_bwd_s;
    double p2p_s = 0;  // one stage-to-stage transfer
    // Ranks sharing a host's cores (the CPU engine's rank threads; docs/cost-model.md, "Ranks
    // sharing a host"): `host_cores` cores (0 = every rank on a device of its own), each
    // simulated rank standing for `threads_per_rank` threads, and of each pass the part
    // that computes (chunk_fwd_cpu_s[g] ≤ chunk_fwd_s[g]; the rest, waiting inside
    // collectives, needs no core). Processor sharing: while the running passes' threads
    // would compute on more than `host_cores` cores at once, each gets an equal share.
    double host_cores = 0;
    double threads_per_rank = 1;
    std::vector<double> chunk_fwd_cpu_s, chunk_bwd_cpu_s;
};

// When each pass of the schedule ran.
struct PassTiming {
    double start_s = 0;
    double end_s = 0;       // end of the kernels
    double release_s = 0;   // end of the blocking send that follows (= end_s when none)
};

struct PipelineRun {
    // timing[r][i]: pass i of schedule.ops[r].
    std::vector<std::vector<PassTiming>> timing;
    std::vector<double> rank_end_s;   // when each rank's compute stream finished
    std::vector<double> rank_busy_s;  // kernels + blocking sends on each rank
    double span_s = 0;                // last pass end over all ranks
    // Per rank: time its compute waited for a shared core (runnable, not running); 0 without
    // host sharing.
    std::vector<double> rank_core_wait_s;
    std::int64_t events = 0;          // events the simulation processed
    std::size_t memory_bytes = 0;     // bytes the simulation allocated
};

// Runs the schedule (with processor sharing when times.host_cores > 0 and the ranks'
// threads outnumber the cores). Throws RuntimeError if the schedule deadlocks (it cannot
// for the schedules the generator builds).
PipelineRun run_pipeline(const PipelineSchedule& schedule, const PipelineTimes& times);

}  // namespace meshwork::sim
