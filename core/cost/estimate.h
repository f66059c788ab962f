// What the cost model and the simulator report for a layout (CLI.md, `estimate`).
// Sizes are bytes, times seconds, rates per second.
#pragma once

#include <cstdint>
#include <vector>

namespace meshwork {

// Device memory of one rank of one pipeline stage at its peak (the worst rank of the
// stage: the EP rank with the most experts).
struct StageMemory {
    int stage = 0;
    int layers = 0;                  // transformer blocks on this pipeline rank (all chunks)
    int in_flight = 0;               // forward passes whose activations are held at the peak
    std::int64_t params_bytes = 0;
    std::int64_t grads_bytes = 0;
    std::int64_t optimizer_bytes = 0;
    std::int64_t activations_bytes = 0;
    std::int64_t buffers_bytes = 0;  // communication buffers and transient working memory
    std::int64_t reserved_bytes = 0; // fixed overhead + allocator fragmentation
    std::int64_t peak_bytes = 0;
    bool fits = true;
    std::int64_t overflow_bytes = 0; // peak − HBM when it does not fit, else 0
    // One micro-batch through every model chunk of this rank.
    double forward_s = 0;
    double backward_s = 0;           // with recomputation
    // End of the step on this rank: gradient reduction, parameter all-gather (ZeRO ≥ 1),
    // optimizer step; before any overlap.
    double dp_reduce_s = 0;
    double dp_gather_s = 0;
    double optimizer_s = 0;
};

// Where the step's time goes, on the busiest pipeline rank. Communication figures are the
// part on the critical path unless named *_total_s.
struct TimeBreakdown {
    double pipeline_s = 0;      // forward–backward span of the pipeline (all micro-batches)
    double compute_s = 0;       // kernels, recomputation included
    double recompute_s = 0;
    double bubble_s = 0;        // pipeline fill and drain on the busiest rank
    double tp_comm_s = 0;       // tensor/sequence parallel collectives
    double cp_comm_s = 0;       // context-parallel ring exchange
    double ep_comm_s = 0;       // expert all-to-all
    double pp_comm_s = 0;       // stage-to-stage send/recv
    double dp_comm_s = 0;       // data-parallel gradient reduction + parameter gather after the backward
    double dp_comm_total_s = 0; // the same before overlap with the backward
    double optimizer_s = 0;
    // Waiting for a host core: ranks sharing too few cores (ClusterSpec::host_cores) take
    // longer than their own timeline (core/cost/host_sharing.h); 0 on GPUs.
    double host_sharing_s = 0;
    // GPU time lost to the host's kernel launches and device-to-host synchronisations in the
    // layer passes (core/cost/launch_cost.h), less what CUDA graphs capture.
    double host_launch_s = 0;
    // Activation copies to and from the host not hidden behind the neighbouring layer
    // (training.offload_activation_layers, core/cost/activation_offload.h).
    double activation_offload_s = 0;
};

// One layer pass of one micro-batch on one rank, one direction (core/cost/block_cost.h
// PassParts): what the step's per-layer figures are made of, for audits of a layer's cost.
struct LayerPassParts {
    double attention_s = 0;  // attention half's kernels
    double mlp_s = 0;        // MLP / MoE half's kernels (router, experts, memory passes)
    double recompute_s = 0;  // selective recomputation rerun before this block's backward
    double tp_s = 0, ep_s = 0, cp_s = 0;  // collectives left exposed
    double host_s = 0;       // GPU time lost to the host (launches, synchronisations)
};
struct LayerBreakdown {
    bool present = false;  // the model has layers of this kind
    LayerPassParts fwd, bwd;
};

struct Estimate {
    double step_time_s = 0;
    double tokens_per_s = 0;
    double model_tflops_per_gpu = 0;     // 6·N_active per token + attention, no recompute
    double hardware_tflops_per_gpu = 0;  // what the GPUs execute, recomputation included
    double mfu = 0;                      // model FLOP/s over the dense peak of the dtype
    double bubble_fraction = 0;          // bubble_s / pipeline_s
    double exposed_comm_s = 0;           // communication on the critical path of the step
    bool fits = true;                    // every stage fits in HBM
    int worst_stage = 0;                 // the stage with the highest peak memory
    std::int64_t max_overflow_bytes = 0; // by how much the worst stage overflows (0 if it fits)
    int micro_batches = 0;
    int busiest_stage = 0;               // the pipeline rank with the most work per micro-batch
    std::vector<StageMemory> stages;     // one entry per pipeline stage
    TimeBreakdown time;
    LayerBreakdown dense_layer;  // one dense block, one micro-batch (no full recomputation)
    LayerBreakdown moe_layer;    // one MoE block, likewise
};

}  // namespace meshwork
