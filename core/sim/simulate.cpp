#include "core/sim/simulate.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/cost/cost_model.h"
#include "core/cost/dp_overlap.h"
#include "core/cost/group_topology.h"
#include "core/cost/host_sharing.h"
#include "core/layout/layout_run_info.h"
#include "core/layout/layout_validate.h"
#include "core/sim/pipeline_sim.h"
#include "core/sim/sim_trace.h"

namespace meshwork {

using namespace cost;
using namespace sim;

namespace {

double nonneg(double v) { return std::isfinite(v) && v > 0 ? v : 0.0; }

// The inputs of the discrete-event run: each global chunk's pass costs, with the ZeRO-2/3
// traffic each pass leaves exposed.
struct ChunkTimes {
    std::vector<ChunkCost> costs;
    std::vector<double> zero_fwd_s, zero_bwd_s;
    std::vector<double> reduce_s, gather_s;  // end-of-step data-parallel collectives per chunk
    PipelineTimes times;
};

ChunkTimes chunk_times(const CostModel& model, const LayoutCosts& c, const Placement& placement) {
    const auto chunks = static_cast<std::size_t>(c.pp * c.vpp);
    ChunkTimes out;
    out.costs.resize(chunks);
    out.zero_fwd_s.resize(chunks);
    out.zero_bwd_s.resize(chunks);
    out.reduce_s.resize(chunks);
    out.gather_s.resize(chunks);
    out.times.p2p_s = c.p2p_s;
    out.times.chunk_fwd_s.resize(chunks);
    out.times.chunk_bwd_s.resize(chunks);
    int first_layer = 0;  // carried: chunks in layer order
    for (std::size_t i = 0; i < chunks; ++i) {
        const ChunkCost& cc = out.costs[i] = model.chunk_cost(c, placement, static_cast<int>(i), first_layer);
        first_layer += cc.layers;
        const GradSyncCost sync = grad_sync_cost(c, cc.dense_params, cc.expert_params);
        const ZeroExposure z = zero_exposure(sync.per_pass_gather_s, sync.per_micro_batch_reduce_s,
                                             cc.fwd.compute_s(), cc.bwd.compute_s(), c.dp_overlap,
                                             forward_follows_backward(c));
        out.zero_fwd_s[i] = z.fwd_s;
        out.reduce_s[i] = nonneg(sync.reduce_s);
        out.gather_s[i] = nonneg(sync.gather_s);
        out.zero_bwd_s[i] = z.bwd_s;
        out.times.chunk_fwd_s[i] = nonneg(cc.fwd.total_s() + z.fwd_s);
        out.times.chunk_bwd_s[i] = nonneg(cc.bwd.total_s() + z.bwd_s);
    }
    return out;
}

// End of step (core/cost/dp_overlap.h, the rules the estimate uses): each rank's gradient
// reductions queue from when Megatron launches them, read off the simulated timeline; a
// global barrier (gradient norm), the optimizer, the parameter gathers the next step's first
// forwards wait for. Returns the step's end; fills each rank's tail.
struct StepEnd {
    double step_s = 0;
    double optimizer_s = 0;  // the longest optimizer step of the ranks
};

// Rank r's reductions, relative to the end of its last backward; `chunk_of` gets each one's
// local chunk (-1: the tied embedding).
std::vector<DpCollective> rank_reductions(const LayoutCosts& c, const PipelineSchedule& schedule, const PipelineRun& run,
                                          const ChunkTimes& ct, int r, std::vector<int>& chunk_of) {
    const int pp = c.pp, v = c.vpp, m = c.micro_batches;
    const auto& ops = schedule.ops[static_cast<std::size_t>(r)];
    const auto& tm = run.timing[static_cast<std::size_t>(r)];
    const double end = run.rank_end_s[static_cast<std::size_t>(r)];
    auto reduce = [&](int j) { return ct.reduce_s[static_cast<std::size_t>(j * pp + r)]; };
    std::vector<DpCollective> out;
    chunk_of.clear();
    switch (grad_launch(c, r)) {
        case GradLaunch::AfterBackward:
            for (int j = v - 1; j >= 0; --j) {
                out.push_back({0.0, reduce(j)});
                chunk_of.push_back(j);
            }
            break;
        case GradLaunch::PerChunk: {
            // Each chunk's reduction starts after the backward r places after the chunk's last
            // backward (Megatron aligns the launches across the pipeline), else at the end.
            std::vector<std::size_t> backwards;
            for (std::size_t i = 0; i < ops.size(); ++i) {
                if (ops[i].kind == PipeOpKind::Backward) backwards.push_back(i);
            }
            std::vector<std::pair<double, int>> launches;
            for (std::size_t k = 0; k < backwards.size(); ++k) {
                const PipeOp& op = ops[backwards[k]];
                if (op.micro_batch != m - 1) continue;
                const std::size_t at = k + static_cast<std::size_t>(r);
                const double launch = at < backwards.size() ? tm[backwards[at]].end_s : end;
                launches.emplace_back(-c.dp_overlap * (end - launch), op.chunk);
            }
            std::stable_sort(launches.begin(), launches.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
            for (const auto& [ready, j] : launches) {
                out.push_back({ready, reduce(j)});
                chunk_of.push_back(j);
            }
            break;
        }
        case GradLaunch::Buckets: {
            double total = 0, params = 0;
            for (int j = 0; j < v; ++j) {
                total += reduce(j);
                const ChunkCost& cc = ct.costs[static_cast<std::size_t>(j * pp + r)];
                params += cc.dense_params + cc.expert_params;
            }
            const double last = tm.empty() ? 0.0 : tm.back().end_s - tm.back().start_s;
            out.push_back(buckets_in_last_backward(total, c.dp_overlap * last, ddp_bucket_count(params, c.dp)));
            chunk_of.push_back(0);
            break;
        }
    }
    if ((r == 0 || r == pp - 1) && c.tied_embedding_sync_s > 0) {
        out.push_back({0.0, c.tied_embedding_sync_s});
        chunk_of.push_back(-1);
    }
    return out;
}

// What the next step's first forwards wait for, from each rank's simulated fill.
double gather_wait_s(const LayoutCosts& c, const PipelineRun& run, const ChunkTimes& ct) {
    const int pp = c.pp, v = c.vpp;
    std::vector<GatherExposure> ranks;
    std::vector<ChunkGather> chunks;
    for (int r = 0; r < pp; ++r) {
        chunks.clear();
        double params = 0;
        for (int j = 0; j < v; ++j) {
            const auto g = static_cast<std::size_t>(j * pp + r);
            chunks.push_back({ct.gather_s[g], ct.times.chunk_fwd_s[g]});
            params += ct.costs[g].dense_params + ct.costs[g].expert_params;
        }
        const auto& tm = run.timing[static_cast<std::size_t>(r)];
        const double fill = tm.empty() ? 0.0 : tm.front().start_s;
        ranks.push_back(rank_gather_exposure(c, chunks, fill, params, c.interleaved_group));
    }
    return step_gather_s(c, ranks, c.dp_interference);
}

StepEnd end_of_step(const Estimate& e, const LayoutCosts& c, const PipelineSchedule& schedule,
                    const PipelineRun& run, const ChunkTimes& ct, std::vector<RankTail>& tails) {
    const int pp = c.pp;
    tails.assign(static_cast<std::size_t>(pp), RankTail{});
    double barrier = run.span_s;
    std::vector<int> chunk_of;
    for (int r = 0; r < pp; ++r) {
        const double end = run.rank_end_s[static_cast<std::size_t>(r)];
        const std::vector<DpCollective> reductions = rank_reductions(c, schedule, run, ct, r, chunk_of);
        std::vector<double> starts;
        const DpQueue q = run_dp_queue(reductions, c.dp_interference, &starts);
        RankTail& t = tails[static_cast<std::size_t>(r)];
        for (std::size_t i = 0; i < reductions.size(); ++i) {
            const double start = end + starts[i];
            t.reductions.push_back({start, start + reductions[i].duration_s, chunk_of[i]});
        }
        barrier = std::max(barrier, end + q.tail_s);
    }
    StepEnd out;
    for (int r = 0; r < pp; ++r) {
        const auto& st = e.stages[static_cast<std::size_t>(r)];
        RankTail& t = tails[static_cast<std::size_t>(r)];
        t.optimizer_start_s = barrier;
        t.optimizer_end_s = barrier + st.optimizer_s;
        out.optimizer_s = std::max(out.optimizer_s, st.optimizer_s);
    }
    // The gathers belong to the next step's first forwards: this step's timeline shows what
    // they hold back at its end, after the slowest optimizer.
    const double gather = gather_wait_s(c, run, ct);
    for (RankTail& t : tails) {
        t.gather_start_s = barrier + out.optimizer_s;
        t.gather_end_s = t.gather_start_s + gather;
    }
    out.step_s = barrier + out.optimizer_s + gather;
    return out;
}

// The time breakdown of the busiest rank, read from the simulated timeline.
int breakdown_of_busiest(const LayoutCosts& c, const PipelineSchedule& schedule, const PipelineRun& run,
                         const ChunkTimes& ct, const StepEnd& end, const Estimate& e, TimeBreakdown& tb) {
    const int pp = c.pp;
    int busiest = 0;
    for (int r = 1; r < pp; ++r) {
        if (run.rank_busy_s[static_cast<std::size_t>(r)] > run.rank_busy_s[static_cast<std::size_t>(busiest)]) busiest = r;
    }
    tb = TimeBreakdown{};
    double sends = 0;
    const auto& ops = schedule.ops[static_cast<std::size_t>(busiest)];
    const auto& tm = run.timing[static_cast<std::size_t>(busiest)];
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const auto g = static_cast<std::size_t>(ops[i].chunk * pp + busiest);
        const bool fwd = ops[i].kind == PipeOpKind::Forward;
        const PassParts& p = fwd ? ct.costs[g].fwd : ct.costs[g].bwd;
        tb.compute_s += p.compute_s();
        tb.recompute_s += p.recompute_s;
        tb.tp_comm_s += p.tp_s;
        tb.cp_comm_s += p.cp_s;
        tb.ep_comm_s += p.ep_s;
        tb.activation_offload_s += p.offload_s;
        tb.dp_comm_s += fwd ? ct.zero_fwd_s[g] : ct.zero_bwd_s[g];
        sends += tm[i].release_s - tm[i].end_s;
    }
    const double span = run.span_s;
    tb.pipeline_s = nonneg(span);
    tb.pp_comm_s = nonneg(sends);
    tb.bubble_s = nonneg(span - run.rank_busy_s[static_cast<std::size_t>(busiest)]);
    tb.optimizer_s = nonneg(end.optimizer_s);
    const double tail_comm = nonneg(end.step_s - span - end.optimizer_s);
    const auto& bst = e.stages[static_cast<std::size_t>(busiest)];
    tb.dp_comm_total_s = bst.dp_reduce_s + bst.dp_gather_s + tb.dp_comm_s;
    tb.dp_comm_s = nonneg(tb.dp_comm_s + tail_comm);
    return busiest;
}

// Ranks that share a host's cores (the CPU engine's rank threads; docs/cost-model.md,
// "Ranks sharing a host"): the pipeline runs with processor sharing (pipeline_sim.h), each
// pass's compute needing a core and its waits in collectives none. Returns false (times
// unchanged) when every rank has a core of its own.
bool share_host_cores(const Layout& layout, const LayoutCosts& c, ChunkTimes& ct) {
    const double cores = layout.cluster.host_cores;
    const int ranks = ranks_per_node(layout.cluster, layout.gpus);
    if (cores <= 0 || ranks <= cores) return false;
    ct.times.host_cores = cores;
    // The threads one simulated rank stands for: a stage's ranks on the node.
    ct.times.threads_per_rank = std::max(1.0, static_cast<double>(ranks) / c.pp);
    ct.times.chunk_fwd_cpu_s.resize(ct.costs.size());
    ct.times.chunk_bwd_cpu_s.resize(ct.costs.size());
    // The threads' CPU outside compute ops (ClusterSpec::host_cpu_per_layer_pass_s): per
    // layer of the chunk, half in the forward and half in the backward (as many ops each);
    // it lengthens the pass and needs a core.
    const double overhead_per_layer_s = nonneg(layout.cluster.host_cpu_per_layer_pass_s);
    for (std::size_t g = 0; g < ct.costs.size(); ++g) {
        const double overhead_s = 0.5 * overhead_per_layer_s * ct.costs[g].layers;
        ct.times.chunk_fwd_s[g] += overhead_s;
        ct.times.chunk_bwd_s[g] += overhead_s;
        ct.times.chunk_fwd_cpu_s[g] = nonneg(ct.costs[g].fwd.compute_s()) + overhead_s;
        ct.times.chunk_bwd_cpu_s[g] = nonneg(ct.costs[g].bwd.compute_s()) + overhead_s;
    }
    return true;
}

// The optimizers of a node's ranks run at once: beyond the cores they take turns. The
// longest optimizer step's extra time.
double optimizer_sharing_s(const Layout& layout, const Estimate& e) {
    const double cores = layout.cluster.host_cores;
    const int ranks = ranks_per_node(layout.cluster, layout.gpus);
    if (cores <= 0 || ranks <= cores) return 0;
    double longest = 0;
    for (const auto& st : e.stages) longest = std::max(longest, st.optimizer_s);
    return nonneg(longest * (ranks / cores - 1.0));
}

// The estimate's rates follow the simulated step (the analytical one scaled away).
void rescale_rates(Estimate& e, const LayoutCosts& c, double estimate_step_s, double span_s) {
    const double safe_step = e.step_time_s > 0 ? e.step_time_s : 1e-30;
    const double scale = estimate_step_s > 0 ? estimate_step_s / safe_step : 0.0;
    const TimeBreakdown& tb = e.time;
    e.tokens_per_s = nonneg(c.tokens_per_step / safe_step);
    e.model_tflops_per_gpu = nonneg(e.model_tflops_per_gpu * scale);
    e.hardware_tflops_per_gpu = nonneg(e.hardware_tflops_per_gpu * scale);
    e.mfu = nonneg(e.mfu * scale);
    e.bubble_fraction = span_s > 0 ? nonneg(tb.bubble_s / span_s) : 0.0;
    e.exposed_comm_s = nonneg(tb.tp_comm_s + tb.cp_comm_s + tb.ep_comm_s + tb.pp_comm_s + tb.dp_comm_s);
}

std::size_t simulation_bytes(const PipelineSchedule& schedule, const PipelineRun& run, const ChunkTimes& ct,
                             const std::vector<RankTail>& tails, const Estimate& e) {
    std::size_t schedule_bytes = 0;
    for (const auto& ops : schedule.ops) schedule_bytes += ops.capacity() * sizeof(PipeOp);
    std::size_t reductions_bytes = 0;
    for (const RankTail& t : tails) reductions_bytes += t.reductions.capacity() * sizeof(RankTail::Reduction);
    return run.memory_bytes + schedule_bytes + ct.costs.capacity() * sizeof(ChunkCost) +
           (ct.zero_fwd_s.capacity() + ct.zero_bwd_s.capacity() + ct.reduce_s.capacity() + ct.gather_s.capacity() +
            ct.times.chunk_fwd_s.capacity() +
            ct.times.chunk_bwd_s.capacity()) * sizeof(double) +
           tails.capacity() * sizeof(RankTail) + e.stages.capacity() * sizeof(StageMemory) + reductions_bytes;
}

// "h100-sxm node 3 gpu 5": the device of `rank` in the layout's cluster (ranks fill the
// nodes in order, DeviceMesh::node_of).
std::string device_of(const Layout& layout, const DeviceMesh& mesh, int rank) {
    return layout.cluster.gpu.kind + " node " + std::to_string(mesh.node_of(rank)) + " gpu " +
           std::to_string(mesh.local_gpu_of(rank));
}

std::int64_t write_trace(const Layout& layout, const CostModel& model, const LayoutCosts& c,
                         const PipelineSchedule& schedule, const PipelineRun& run, const ChunkTimes& ct,
                         const std::vector<RankTail>& tails, const Estimate& e, double host_wait_at_end_s,
                         bool all_ranks, TraceSink& sink, int& ranks_written) {
    TraceRunInfo info = layout_run_info(layout, "meshwork-sim", "simulated");
    info.extra["representative_ranks"] = "one per pipeline stage (tp = cp = dp = ep = 0)";
    if (all_ranks) {
        info.extra["replicated_ranks"] = "every rank: the ranks of a pipeline stage replay its representative's timeline";
    }
    info.extra["step_time_s"] = std::to_string(e.step_time_s);
    // The cores of the simulated host, as a CPU run records the cores of its host.
    if (layout.cluster.host_cores > 0) info.extra["host_cores"] = std::to_string(layout.cluster.host_cores);
    sink.set_run_info(info);
    TraceInput in;
    in.model = &model;
    in.costs = &c;
    in.placement = &layout.placement;
    in.schedule = &schedule;
    in.run = &run;
    in.chunks = &ct.costs;
    in.zero_fwd_s = &ct.zero_fwd_s;
    in.zero_bwd_s = &ct.zero_bwd_s;
    in.tails = &tails;
    in.step_s = e.step_time_s;
    // The waits inside the passes are in their stretched times; the optimizers' turns are
    // drawn at the end.
    in.host_sharing_s = host_wait_at_end_s;
    const DeviceMesh mesh = layout.mesh();
    for (int r = 0; r < c.pp; ++r) {
        RankCoords first_of_stage;  // tp = cp = dp = 0
        first_of_stage.pp = r;
        in.global_rank.push_back(mesh.rank_of(first_of_stage));
    }
    if (all_ranks) {
        in.stage_of_rank.resize(static_cast<std::size_t>(mesh.world_size()));
        for (int rank = 0; rank < mesh.world_size(); ++rank) {
            in.stage_of_rank[static_cast<std::size_t>(rank)] = mesh.coords(rank).pp;
            sink.set_rank_info(rank, device_of(layout, mesh, rank), 0);
        }
        ranks_written = mesh.world_size();
    } else {
        for (int rank : in.global_rank) sink.set_rank_info(rank, device_of(layout, mesh, rank), 0);
        ranks_written = c.pp;
    }
    return write_sim_trace(in, sink);
}

}  // namespace

SimulationResult simulate_layout(const Layout& layout, TraceSink* sink, const SimulationOptions& options) {
    require_valid_layout(layout, layout.name.empty() ? std::string("<layout>") : layout.name);
    const CostModel model(layout);
    SimulationResult res;
    Estimate& e = res.estimate;
    model.estimate(layout, e);  // memory per stage and the end-of-step costs per rank
    const double estimate_step = e.step_time_s;

    LayoutCosts c;
    model.prepare(layout.parallel, layout.training, c);
    const PipelineSchedule schedule = build_pipeline_schedule(c.schedule, c.pp, c.vpp, c.micro_batches);
    ChunkTimes ct = chunk_times(model, c, layout.placement);
    // Without shared cores first: what sharing them adds is reported apart.
    double own_cores_step_s = 0;
    if (ChunkTimes shared = ct; share_host_cores(layout, c, shared)) {
        std::vector<RankTail> scratch;
        own_cores_step_s = end_of_step(e, c, schedule, run_pipeline(schedule, ct.times), ct, scratch).step_s;
        ct = std::move(shared);
    }
    const PipelineRun run = run_pipeline(schedule, ct.times);
    std::vector<RankTail> tails;
    const StepEnd end = end_of_step(e, c, schedule, run, ct, tails);

    e.busiest_stage = breakdown_of_busiest(c, schedule, run, ct, end, e, e.time);
    // Drawn at the end of the step: the optimizers' turns on the cores.
    const double optimizer_wait_s = optimizer_sharing_s(layout, e);
    e.step_time_s = nonneg(end.step_s + optimizer_wait_s);
    e.time.host_sharing_s = own_cores_step_s > 0 ? nonneg(e.step_time_s - own_cores_step_s) : 0.0;
    res.host_core_wait_s = 0;
    for (double w : run.rank_core_wait_s) res.host_core_wait_s += w / c.pp;
    if (optimizer_wait_s > 0) {
        double opt = 0;  // each rank's optimizer waits as long as the ranks/cores ratio says
        for (const auto& st : e.stages) opt += st.optimizer_s / c.pp;
        res.host_core_wait_s += opt * (ranks_per_node(layout.cluster, layout.gpus) / layout.cluster.host_cores - 1.0);
    }
    rescale_rates(e, c, estimate_step, run.span_s);
    for (int r = 0; r < c.pp; ++r) {
        e.stages[static_cast<std::size_t>(r)].in_flight = schedule.max_in_flight(r);
    }

    res.simulated_ranks = c.pp;
    res.sim_events = run.events;
    res.memory_bytes = simulation_bytes(schedule, run, ct, tails, e);
    if (sink != nullptr) {
        res.trace_events =
            write_trace(layout, model, c, schedule, run, ct, tails, e, optimizer_wait_s, options.all_ranks, *sink,
                        res.trace_ranks);
    }
    return res;
}

}  // namespace meshwork
