// Data-parallel communication overlapped with the pipeline, as Megatron-LM runs it with the
// distributed optimizer (docs/cost-model.md, "Data-parallel overlap"). One set of rules for the
// closed-form estimate (core/cost/cost_model.cpp) and the simulator (core/sim/simulate.cpp):
// they differ only in where the times come from (closed forms vs the simulated timeline).
//
// Upstream facts (NVIDIA/Megatron-LM d98e8a64):
//  - --overlap-grad-reduce: with the default align_grad_reduce (training/config/
//    common_config.py:80), each model chunk's start_grad_sync is the schedule's grad_sync_func
//    (training/training.py:4346-4359). The interleaved schedule launches chunk j's reduction
//    after the backward whose virtual micro-batch id is that of chunk j's last backward plus
//    the pipeline rank (pipeline_parallel/schedules.py:1438-1456), the rest after the last
//    backward (:2063-2069). The non-interleaved schedule lets only the first stage reduce
//    bucket by bucket during its last backward (:2433-2434, 2453-2461); the other stages
//    launch theirs after their last backward (:2476-2480), in the pipeline drain. Without a
//    pipeline the last micro-batch's backward reduces bucket by bucket (:814, hooks in
//    distributed/distributed_data_parallel.py:553-586).
//  - Buckets: max(40M, 1M × dp) parameters by default (distributed_data_parallel.py:133-134).
//  - Collectives of one rank queue on one communicator: they run one after another.
//  - --overlap-param-gather: with the interleaved schedule (align_param_gather, default on,
//    arguments.py:3152-3155; off without interleaving, :1013), every rank starts the gathers of
//    its chunks 0 and 1 when the step starts (schedules.py:1218-1221) and chunk k+1's at its
//    first forward of chunk k (:1341-1353); a chunk's first forward waits for its gather.
//    Without interleaving, each forward pre-hook waits for its bucket's gather and only then
//    starts the next bucket's (distributed_data_parallel.py:517-551,
//    param_and_grad_buffer.py:538-573), the first on the first forward.
//    Off, the optimizer step gathers synchronously (optimizer/distrib_optimizer.py:3175-3195).
#pragma once

#include <span>
#include <vector>

#include "core/cost/block_cost.h"

namespace meshwork::cost {

// Megatron's default DDP bucket, in parameters, for a data-parallel group of `dp`.
double ddp_bucket_params(int dp);
// Buckets of `params` parameters (at least 1).
int ddp_bucket_count(double params, int dp);

// One collective of a rank's end of step. Times are relative to the end of the rank's last
// backward (negative: launched before it).
struct DpCollective {
    double ready_s = 0;
    double duration_s = 0;
};

// The collectives run in order on one communicator, each from max(its ready time, the end of
// the one before). While they run beside the rank's backward, they take a share `interference`
// of the GPU (comm_overlap.h): the rank's compute ends later by interference × the hidden time.
struct DpQueue {
    double finish_s = 0;  // end of the last collective (≤ 0: hidden)
    double hidden_s = 0;  // communication time before the rank's last backward end
    double tail_s = 0;    // max(0, finish, interference × hidden): the rank's delay
};
// `start_s`, when given, gets each collective's start (relative to the rank's last backward
// end); the estimate passes none and allocates nothing.
DpQueue run_dp_queue(std::span<const DpCollective> collectives, double interference,
                     std::vector<double>* start_s = nullptr);

// How a rank launches its gradient reduction.
enum class GradLaunch {
    AfterBackward,  // after its last backward (no --overlap-grad-reduce; 1F1B stages after the first)
    PerChunk,       // each model chunk after its last backward plus the rank's offset (interleaved)
    Buckets,        // bucket by bucket during its last backward (no pipeline, 1F1B first stage, GPipe)
};
GradLaunch grad_launch(const LayoutCosts& c, int rank);

// `buckets` equal buckets of a `reduce_s` reduction, ready one after another over the last
// `window_s` of backward, queued: the single collective that ends when they do.
DpCollective buckets_in_last_backward(double reduce_s, double window_s, int buckets);

// Per model chunk of a rank (local chunk order), what its parameter gather needs.
struct ChunkGather {
    double gather_s = 0;  // the chunk's parameter all-gather
    double fwd_s = 0;     // one micro-batch's forward through the chunk
};
struct GatherExposure {
    double exposed_s = 0;  // gather time the rank's forwards wait for
    double hidden_s = 0;   // gather time beside its forwards
};
// One rank: `fill_s` is when its first forward can start at the earliest (the pipeline fill),
// `params` the parameters it holds (for the bucket count), `group` the interleaved schedule's
// micro-batch group.
GatherExposure rank_gather_exposure(const LayoutCosts& c, std::span<const ChunkGather> chunks, double fill_s,
                                    double params, int group);
// What the step waits for, over the ranks (`interference` of the data-parallel tier):
// without overlap the slowest rank's gather after the optimizer; interleaved the most any
// rank's first forward is held back (every rank starts at once); otherwise each rank's first
// bucket delays the pipeline fill in turn.
double step_gather_s(const LayoutCosts& c, std::span<const GatherExposure> ranks, double interference);

}  // namespace meshwork::cost
