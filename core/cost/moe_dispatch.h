// Time of an MoE layer's token dispatch and combine for each dispatcher, and what Megatron-LM's
// MoE all-to-all overlap leaves exposed (docs/cost-model.md, "Expert dispatch").
#pragma once

#include "core/cost/collective_time.h"
#include "core/cost/group_topology.h"
#include "core/layout/layout.h"

namespace meshwork::cost {

// Expected number of `groups` equal groups of `experts` experts that a token's `top_k`
// distinct experts fall into, the experts drawn uniformly (the force-balanced routing of the
// published benchmarks: random router logits, Megatron-LM d98e8a64 moe/router.py:861,
// moe/moe_utils.py:1295): groups · (1 − C(E − E/groups, k) / C(E, k)).
double expected_groups_hit(int experts, int top_k, int groups);

// One rank's dispatch and combine of one micro-batch in one MoE layer, forward (the backward
// moves the same bytes the other way).
struct MoeDispatchCost {
    double dispatch_s = 0;     // dispatch, forward
    double combine_s = 0;      // combine, forward
    double bytes = 0;          // what the rank sends in one dispatch (all tiers)
    double inter_copies = 0;   // copies of each token sent to other nodes (flex: per node)
    double intra_copies = 0;   // copies of each token sent to other GPUs of the node
};

// `tokens` tokens of `token_bytes` each on this rank, routed to `top_k` of `experts` experts
// held by the `ep` group. `backend` says which kernels the flex dispatcher runs: their
// published rate inside an NVLink domain (flex_kernel_rate.h) bounds its NVLink stage.
MoeDispatchCost moe_dispatch_cost(const LinkModel& link, const GroupSpan& ep, MoeDispatcher d,
                                  MoeFlexBackend backend, int experts, int top_k, double tokens,
                                  double token_bytes);

// Share of a rank's forward (and backward) passes that Megatron's combined 1F1B schedule
// pairs with a pass of another micro-batch (the rest run alone): without pipelining the first
// forward and the last backward run alone (pipeline_parallel/combined_1f1b.py:76, :119 at
// d98e8a64); interleaved, the warm-up forwards of pipeline rank 0 plus the one extra forward
// the overlap schedules (schedules.py:964-970) and as many cool-down backwards.
double a2a_overlap_paired_share(int pp, int vpp, int micro_batches, int group);

// Communication one paired layer step (one micro-batch's forward, another's backward) leaves
// exposed, given one all-to-all `a2a_s` and the halves' compute: Megatron issues
// combine_bwd, pre_dispatch_fwd, mlp_bwd, dispatch_fwd, dispatch_bwd, mlp_fwd, combine_fwd,
// pre_dispatch_bwd on a communication and a compute stream
// (models/common/model_chunk_schedule_plan.py:236-301 at d98e8a64), and every node of a
// micro-batch first waits for that micro-batch's previous node (one CUDA event per
// micro-batch, pipeline_parallel/utils.py:324-345): dispatch_fwd waits for pre_dispatch_fwd,
// mlp_fwd for dispatch_fwd, dispatch_bwd for the whole mlp_bwd (its weight gradients
// included, without delay_wgrad_compute). So the step is four pairings, each as long as the
// longer of its two: combine_bwd ‖ pre_dispatch_fwd, dispatch_fwd ‖ mlp_bwd,
// dispatch_bwd ‖ mlp_fwd, combine_fwd ‖ pre_dispatch_bwd; each shows what its all-to-all
// outlasts.
double a2a_overlap_exposed_s(double a2a_s, double fwd_attention_s, double fwd_mlp_s,
                             double bwd_attention_s, double bwd_mlp_s);

}  // namespace meshwork::cost
