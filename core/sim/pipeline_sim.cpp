#include "core/sim/pipeline_sim.h"

#include <algorithm>
#include <queue>

#include "core/common/error.h"

namespace meshwork::sim {

namespace {

// An event: at `time_s`, rank `rank` may be able to start its next pass (its stream came
// free, or an input it waits for arrived).
struct Event {
    double time_s;
    int rank;
    bool operator>(const Event& o) const {
        return time_s != o.time_s ? time_s > o.time_s : rank > o.rank;
    }
};

}  // namespace

PipelineRun run_pipeline(const PipelineSchedule& s, const PipelineTimes& t) {
    const int pp = s.pp, v = s.vpp, m = s.num_micro_batches;
    const int chunks = pp * v;
    PipelineRun run;
    run.timing.resize(static_cast<std::size_t>(pp));
    run.rank_end_s.assign(static_cast<std::size_t>(pp), 0.0);
    run.rank_busy_s.assign(static_cast<std::size_t>(pp), 0.0);
    for (int r = 0; r < pp; ++r) {
        run.timing[static_cast<std::size_t>(r)].resize(s.ops[static_cast<std::size_t>(r)].size());
    }
    // Arrival time of the input of each (chunk, micro-batch) pass; < 0 = not yet produced.
    const auto slots = static_cast<std::size_t>(chunks) * static_cast<std::size_t>(m);
    std::vector<double> fwd_input(slots, -1.0), bwd_input(slots, -1.0);
    auto slot = [m](int g, int mb) { return static_cast<std::size_t>(g) * static_cast<std::size_t>(m) + static_cast<std::size_t>(mb); };
    for (int mb = 0; mb < m; ++mb) fwd_input[slot(0, mb)] = 0.0;  // data is loaded up front
    std::vector<std::size_t> next(static_cast<std::size_t>(pp), 0);
    std::vector<double> free_at(static_cast<std::size_t>(pp), 0.0);

    std::vector<Event> storage;
    storage.reserve(static_cast<std::size_t>(4 * pp + 16));
    std::priority_queue<Event, std::vector<Event>, std::greater<>> queue(std::greater<>{}, std::move(storage));
    for (int r = 0; r < pp; ++r) queue.push({0.0, r});

    std::size_t done = 0, total = 0;
    for (const auto& ops : s.ops) total += ops.size();
    while (!queue.empty()) {
        const Event ev = queue.top();
        queue.pop();
        ++run.events;
        const int r = ev.rank;
        const auto& ops = s.ops[static_cast<std::size_t>(r)];
        auto& i = next[static_cast<std::size_t>(r)];
        // Start every pass of this rank whose input is there, in schedule order.
        while (i < ops.size()) {
            const PipeOp& op = ops[i];
            const int g = op.chunk * pp + r;
            const bool fwd = op.kind == PipeOpKind::Forward;
            // The last chunk's backward starts from its own forward's loss.
            const double input = fwd ? fwd_input[slot(g, op.micro_batch)]
                                     : (g == chunks - 1 ? 0.0 : bwd_input[slot(g, op.micro_batch)]);
            if (input < 0) break;
            PassTiming& pt = run.timing[static_cast<std::size_t>(r)][i];
            pt.start_s = std::max(free_at[static_cast<std::size_t>(r)], input);
            const double dur = fwd ? t.chunk_fwd_s[static_cast<std::size_t>(g)] : t.chunk_bwd_s[static_cast<std::size_t>(g)];
            pt.end_s = pt.start_s + std::max(0.0, dur);
            pt.release_s = pt.end_s;
            // Hand the output on: the activation to chunk g + 1, the gradient to g − 1.
            const int to = fwd ? g + 1 : g - 1;
            if (to >= 0 && to < chunks) {
                const int dest = to % pp;
                const double arrive = dest == r ? pt.end_s : pt.end_s + t.p2p_s;
                if (dest != r) pt.release_s = arrive;  // the send blocks this stream
                (fwd ? fwd_input : bwd_input)[slot(to, op.micro_batch)] = arrive;
                if (dest != r) queue.push({arrive, dest});
            }
            free_at[static_cast<std::size_t>(r)] = pt.release_s;
            run.rank_busy_s[static_cast<std::size_t>(r)] += pt.release_s - pt.start_s;
            ++i;
            ++done;
        }
        run.rank_end_s[static_cast<std::size_t>(r)] = free_at[static_cast<std::size_t>(r)];
    }
    if (done != total) {
        throw RuntimeError("pipeline simulation deadlocked after " + std::to_string(done) + " of " +
                           std::to_string(total) + " passes");
    }
    for (double e : run.rank_end_s) run.span_s = std::max(run.span_s, e);
    run.memory_bytes = 2 * slots * sizeof(double) + total * sizeof(PassTiming) +
                       static_cast<std::size_t>(pp) * (3 * sizeof(double) + sizeof(std::size_t)) +
                       static_cast<std::size_t>(4 * pp + 16) * sizeof(Event);
    return run;
}

}  // namespace meshwork::sim
