// Pipeline schedules (GPipe, 1F1B, interleaved 1F1B): the order in which each pipeline rank
// runs the forward and backward passes of its micro-batches. One generator for both the
// simulator (core/sim) and the engine (core/engine), so that prediction and execution
// follow the same order.
#pragma once

#include <string>
#include <vector>

#include "core/layout/layout.h"

namespace meshwork {

enum class PipeOpKind { Forward, Backward };

struct PipeOp {
    PipeOpKind kind = PipeOpKind::Forward;
    int micro_batch = 0;
    int chunk = 0;  // model chunk on this rank, 0..vpp-1; global chunk = chunk·pp + rank
    bool operator==(const PipeOp&) const = default;
};

// ops[rank] is the ordered list of passes of pipeline rank `rank`. Every (micro_batch,
// chunk) appears exactly once as Forward and once as Backward on each rank.
struct PipelineSchedule {
    Schedule kind = Schedule::OneFOneB;
    int pp = 1;
    int vpp = 1;
    int num_micro_batches = 1;
    std::vector<std::vector<PipeOp>> ops;

    // Forward passes a rank runs before its first backward (its warm-up), which bounds the
    // micro-batches whose activations it holds at once.
    [[nodiscard]] int warmup_forwards(int rank) const;
    // Most forward passes whose backward has not yet run, over the whole schedule.
    [[nodiscard]] int max_in_flight(int rank) const;
};

// Micro-batches the interleaved schedule runs through each chunk before the next chunk
// (Megatron-LM's microbatch_group_size_per_vp_stage, core/model_parallel_config.py:431 at
// d98e8a64): pp when pp divides m (Megatron's default, :567-568), else the smallest N in
// [pp, m] whose last group m % N is 0 or at least pp. Megatron refuses a last group smaller
// than pp (pipeline_parallel/schedules.py:1172-1181): its chunks would wait for one another
// ("dependency bubbles"; with the warm-up of :964-965 some shapes never finish). 0 when
// m < pp (no such N: Megatron refuses, :1160-1169).
int interleaved_group_size(int pp, int num_micro_batches);

// Throws InputError (field "training.schedule") when the shape is not schedulable:
// interleaved needs vpp ≥ 2 and at least pp micro-batches.
PipelineSchedule build_pipeline_schedule(Schedule kind, int pp, int vpp, int num_micro_batches);

// "F3.1" = forward of micro-batch 3 on chunk 1, "B0" = backward of micro-batch 0 (chunk 0).
std::string to_string(const PipeOp& op);

}  // namespace meshwork
