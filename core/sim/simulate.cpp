#include "core/sim/simulate.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/cost/cost_model.h"
#include "core/cost/group_topology.h"
#include "core/cost/host_sharing.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_validate.h"
#include "core/sim/pipeline_sim.h"
#include "core/sim/sim_trace.h"

namespace meshwork {

using namespace cost;
using namespace sim;

namespace {

double nonneg(double v) { return std::isfinite(v) && v > 0 ? v : 0.0; }

}  // namespace

SimulationResult simulate_layout(const Layout& layout, TraceSink* sink) {
    require_valid_layout(layout, layout.name.empty() ? std::string("<layout>") : layout.name);
    const CostModel model(layout);
    SimulationResult res;
    Estimate& e = res.estimate;
    model.estimate(layout, e);  // memory per stage and the end-of-step costs per rank
    const double estimate_step = e.step_time_s;

    LayoutCosts c;
    model.prepare(layout.parallel, layout.training, c);
    const int pp = c.pp, v = c.vpp, chunks = pp * v, m = c.micro_batches;
    const PipelineSchedule schedule = build_pipeline_schedule(c.schedule, pp, v, m);

    // Pass durations per global chunk, with the exposed ZeRO-2/3 traffic of each pass.
    std::vector<ChunkCost> cc(static_cast<std::size_t>(chunks));
    std::vector<double> zero_fwd(static_cast<std::size_t>(chunks)), zero_bwd(static_cast<std::size_t>(chunks));
    PipelineTimes times;
    times.p2p_s = c.p2p_s;
    times.chunk_fwd_s.resize(static_cast<std::size_t>(chunks));
    times.chunk_bwd_s.resize(static_cast<std::size_t>(chunks));
    for (int g = 0; g < chunks; ++g) {
        const auto i = static_cast<std::size_t>(g);
        cc[i] = model.chunk_cost(c, layout.placement, g);
        const GradSyncCost sync = grad_sync_cost(c, cc[i].dense_params, cc[i].expert_params);
        zero_fwd[i] = std::max(0.0, sync.per_pass_gather_s - cc[i].fwd.compute_s());
        zero_bwd[i] = std::max(0.0, sync.per_pass_gather_s - cc[i].bwd.compute_s()) +
                      std::max(0.0, sync.per_micro_batch_reduce_s - c.dp_overlap * cc[i].bwd.compute_s());
        times.chunk_fwd_s[i] = nonneg(cc[i].fwd.total_s() + zero_fwd[i]);
        times.chunk_bwd_s[i] = nonneg(cc[i].bwd.total_s() + zero_bwd[i]);
    }
    const PipelineRun run = run_pipeline(schedule, times);

    // End of the step: bucketed gradient reduction overlapping the rank's last backward
    // passes, a global barrier (gradient norm), the optimizer, the parameter all-gather
    // overlapping the next step's first forward.
    std::vector<RankTail> tails(static_cast<std::size_t>(pp));
    double barrier = run.span_s;
    for (int r = 0; r < pp; ++r) {
        const auto& st = e.stages[static_cast<std::size_t>(r)];
        const auto& ops = schedule.ops[static_cast<std::size_t>(r)];
        const auto& tm = run.timing[static_cast<std::size_t>(r)];
        double window = 0;
        for (std::size_t k = ops.size() >= static_cast<std::size_t>(v) ? ops.size() - static_cast<std::size_t>(v) : 0;
             k < ops.size(); ++k) {
            window += tm[k].end_s - tm[k].start_s;
        }
        const double end = run.rank_end_s[static_cast<std::size_t>(r)];
        RankTail& t = tails[static_cast<std::size_t>(r)];
        t.reduce_start_s = std::max(0.0, end - std::min(st.dp_reduce_s * c.dp_overlap, window));
        t.reduce_end_s = std::max(end, t.reduce_start_s + st.dp_reduce_s);
        barrier = std::max(barrier, t.reduce_end_s);
    }
    double step = barrier, optimizer = 0;
    for (int r = 0; r < pp; ++r) {
        const auto& st = e.stages[static_cast<std::size_t>(r)];
        RankTail& t = tails[static_cast<std::size_t>(r)];
        t.optimizer_start_s = barrier;
        t.optimizer_end_s = barrier + st.optimizer_s;
        const auto& tm = run.timing[static_cast<std::size_t>(r)];
        const double first_fwd = tm.empty() ? 0.0 : tm.front().end_s - tm.front().start_s;
        const double exposed_gather = std::max(0.0, st.dp_gather_s - c.dp_overlap * first_fwd);
        // The rest of the gather runs under the next step's first forward: the timeline of
        // this step shows the exposed part.
        t.gather_start_s = t.optimizer_end_s;
        t.gather_end_s = t.optimizer_end_s + exposed_gather;
        step = std::max(step, t.optimizer_end_s + exposed_gather);
        optimizer = std::max(optimizer, st.optimizer_s);
    }

    // --- metrics from the simulated timeline ---------------------------------------------
    int busiest = 0;
    for (int r = 1; r < pp; ++r) {
        if (run.rank_busy_s[static_cast<std::size_t>(r)] > run.rank_busy_s[static_cast<std::size_t>(busiest)]) busiest = r;
    }
    TimeBreakdown& tb = e.time;
    tb = TimeBreakdown{};
    double sends = 0;
    {
        const auto& ops = schedule.ops[static_cast<std::size_t>(busiest)];
        const auto& tm = run.timing[static_cast<std::size_t>(busiest)];
        for (std::size_t i = 0; i < ops.size(); ++i) {
            const auto& ch = cc[static_cast<std::size_t>(ops[i].chunk * pp + busiest)];
            const PassParts& p = ops[i].kind == PipeOpKind::Forward ? ch.fwd : ch.bwd;
            tb.compute_s += p.compute_s();
            tb.recompute_s += p.recompute_s;
            tb.tp_comm_s += p.tp_s;
            tb.cp_comm_s += p.cp_s;
            tb.ep_comm_s += p.ep_s;
            tb.dp_comm_s += ops[i].kind == PipeOpKind::Forward ? zero_fwd[static_cast<std::size_t>(ops[i].chunk * pp + busiest)]
                                                              : zero_bwd[static_cast<std::size_t>(ops[i].chunk * pp + busiest)];
            sends += tm[i].release_s - tm[i].end_s;
        }
    }
    const double span = run.span_s;
    tb.pipeline_s = nonneg(span);
    tb.pp_comm_s = nonneg(sends);
    tb.bubble_s = nonneg(span - run.rank_busy_s[static_cast<std::size_t>(busiest)]);
    tb.optimizer_s = nonneg(optimizer);
    const double tail_comm = nonneg(step - span - optimizer);
    const auto& bst = e.stages[static_cast<std::size_t>(busiest)];
    tb.dp_comm_total_s = bst.dp_reduce_s + bst.dp_gather_s + tb.dp_comm_s;
    tb.dp_comm_s = nonneg(tb.dp_comm_s + tail_comm);

    // Ranks that share a host's cores wait for a core beyond their own timeline: the step
    // takes at least the node's compute over its cores (one rank of each stage stands for
    // the stage's ranks).
    double sum_rank_compute = 0;
    for (int r = 0; r < pp; ++r) {
        const auto& ops = schedule.ops[static_cast<std::size_t>(r)];
        for (const auto& op : ops) {
            const auto& ch = cc[static_cast<std::size_t>(op.chunk * pp + r)];
            sum_rank_compute += (op.kind == PipeOpKind::Forward ? ch.fwd : ch.bwd).compute_s();
        }
        sum_rank_compute += e.stages[static_cast<std::size_t>(r)].optimizer_s;
    }
    tb.host_sharing_s = nonneg(host_bound_step_s(layout.cluster, layout.gpus, sum_rank_compute / pp) - step);
    step += tb.host_sharing_s;
    e.step_time_s = nonneg(step);
    const double safe_step = e.step_time_s > 0 ? e.step_time_s : 1e-30;
    const double scale = estimate_step > 0 ? estimate_step / safe_step : 0.0;
    e.tokens_per_s = nonneg(c.tokens_per_step / safe_step);
    e.model_tflops_per_gpu = nonneg(e.model_tflops_per_gpu * scale);
    e.hardware_tflops_per_gpu = nonneg(e.hardware_tflops_per_gpu * scale);
    e.mfu = nonneg(e.mfu * scale);
    e.bubble_fraction = span > 0 ? nonneg(tb.bubble_s / span) : 0.0;
    e.exposed_comm_s = nonneg(tb.tp_comm_s + tb.cp_comm_s + tb.ep_comm_s + tb.pp_comm_s + tb.dp_comm_s);
    e.busiest_stage = busiest;
    for (int r = 0; r < pp; ++r) {
        e.stages[static_cast<std::size_t>(r)].in_flight = schedule.max_in_flight(r);
    }

    res.simulated_ranks = pp;
    res.sim_events = run.events;
    std::size_t schedule_bytes = 0;
    for (const auto& ops : schedule.ops) schedule_bytes += ops.capacity() * sizeof(PipeOp);
    res.memory_bytes = run.memory_bytes + schedule_bytes + cc.capacity() * sizeof(ChunkCost) +
                       (zero_fwd.capacity() + zero_bwd.capacity() + times.chunk_fwd_s.capacity() +
                        times.chunk_bwd_s.capacity()) * sizeof(double) +
                       tails.capacity() * sizeof(RankTail) + e.stages.capacity() * sizeof(StageMemory);

    if (sink != nullptr) {
        TraceRunInfo info;
        info.tool_version = MESHWORK_VERSION;
        info.source = "meshwork-sim";
        info.layout_json = layout_to_json(layout).dump();
        info.cluster = layout.cluster.name;
        info.clock_domain = "simulated";
        info.world_size = layout.gpus;
        info.extra["representative_ranks"] = "one per pipeline stage (tp = cp = dp = ep = 0)";
        info.extra["step_time_s"] = std::to_string(e.step_time_s);
        // The cores of the simulated host, as a CPU run records the cores of its host.
        if (layout.cluster.host_cores > 0) info.extra["host_cores"] = std::to_string(layout.cluster.host_cores);
        sink->set_run_info(info);
        TraceInput in;
        in.model = &model;
        in.costs = &c;
        in.placement = &layout.placement;
        in.schedule = &schedule;
        in.run = &run;
        in.chunks = &cc;
        in.zero_fwd_s = &zero_fwd;
        in.zero_bwd_s = &zero_bwd;
        in.tails = &tails;
        in.step_s = e.step_time_s;
        in.host_sharing_s = tb.host_sharing_s;
        const int pp_stride = mesh_strides(layout.parallel.mesh).value_or(MeshStrides{}).pp;
        for (int r = 0; r < pp; ++r) in.global_rank.push_back(r * pp_stride);
        res.trace_events = write_sim_trace(in, *sink);
    }
    return res;
}

}  // namespace meshwork
