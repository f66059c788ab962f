// Writes the simulated step as trace events: every pass split into its layers (attention,
// MLP/MoE, their collectives), stage-to-stage sends, the gradient reduction and the
// optimizer step, on tracks per rank (compute, comm:tp, comm:ep, comm:cp, comm:pp, comm:dp,
// host). Each stage's timeline is built once, for its representative rank; with every rank
// requested, the ranks of a stage (same pp coordinate) replay it: the same events at the
// same times on tracks of their own, so the writing, not the simulation, grows with the
// world size.
#pragma once

#include <cstdint>
#include <vector>

#include "core/cost/cost_model.h"
#include "core/sim/pipeline_sim.h"
#include "core/trace/trace_event.h"

namespace meshwork::sim {

// The end of the step on one rank, as simulated.
struct RankTail {
    // The data-parallel gradient reductions, in the order they ran on the rank's
    // communicator: per model chunk (local chunk index), or -1 for the tied-embedding
    // all-reduce; with overlap they start during the backward (core/cost/dp_overlap.h).
    struct Reduction {
        double start_s = 0, end_s = 0;
        int chunk = 0;
    };
    std::vector<Reduction> reductions;
    double optimizer_start_s = 0, optimizer_end_s = 0;
    double gather_start_s = 0, gather_end_s = 0;
};

struct TraceInput {
    const CostModel* model = nullptr;
    const cost::LayoutCosts* costs = nullptr;
    const Placement* placement = nullptr;
    const PipelineSchedule* schedule = nullptr;
    const PipelineRun* run = nullptr;
    const std::vector<ChunkCost>* chunks = nullptr;   // by global chunk
    const std::vector<double>* zero_fwd_s = nullptr;  // exposed ZeRO-3 gather per chunk pass
    const std::vector<double>* zero_bwd_s = nullptr;
    const std::vector<RankTail>* tails = nullptr;
    std::vector<int> global_rank;                     // representative rank of each stage
    // Every rank of the job, in rank order: the stage (pp coordinate) whose timeline it
    // replays. Empty: only the representative ranks are written.
    std::vector<int> stage_of_rank;
    double step_s = 0;
    // Waiting for a shared host core (Estimate's TimeBreakdown::host_sharing_s): written as
    // a communication event at the end of each rank's step, where a measured CPU run shows
    // it (ranks wait in collectives for peers that have no core).
    double host_sharing_s = 0;
};

// Returns the number of events written.
std::int64_t write_sim_trace(const TraceInput& in, TraceSink& sink);

}  // namespace meshwork::sim
