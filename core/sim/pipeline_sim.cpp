#include "core/sim/pipeline_sim.h"

#include <algorithm>
#include <cmath>
#include <limits>
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

namespace {

// Every rank on a device of its own: passes take their times.
PipelineRun run_dedicated(const PipelineSchedule& s, const PipelineTimes& t) {
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

// Ranks whose threads share `t.host_cores` cores (processor sharing, as a fluid): a running
// pass of duration D whose threads compute for C of it (u = C/D) would use
// threads_per_rank · u cores; while the running passes would use more than the cores in
// all, every computing thread gets the same share rho of a core, so the pass advances at
// 1 / (1 − u + u/rho) of its own pace (its waits inside collectives keep their length, its
// compute takes 1/rho as long), rho such that the threads use exactly the cores. Time moves
// from event to event: a pass ends, or a rank's next pass can start (its stream is free
// and its input has arrived). Sends block the sender without a core, as above.
PipelineRun run_shared(const PipelineSchedule& s, const PipelineTimes& t) {
    const int pp = s.pp, v = s.vpp, m = s.num_micro_batches;
    const int chunks = pp * v;
    const auto npp = static_cast<std::size_t>(pp);
    PipelineRun run;
    run.timing.resize(npp);
    run.rank_end_s.assign(npp, 0.0);
    run.rank_busy_s.assign(npp, 0.0);
    run.rank_core_wait_s.assign(npp, 0.0);
    std::size_t total = 0;
    for (int r = 0; r < pp; ++r) {
        run.timing[static_cast<std::size_t>(r)].resize(s.ops[static_cast<std::size_t>(r)].size());
        total += s.ops[static_cast<std::size_t>(r)].size();
    }
    const auto slots = static_cast<std::size_t>(chunks) * static_cast<std::size_t>(m);
    std::vector<double> fwd_input(slots, -1.0), bwd_input(slots, -1.0);
    auto slot = [m](int g, int mb) { return static_cast<std::size_t>(g) * static_cast<std::size_t>(m) + static_cast<std::size_t>(mb); };
    for (int mb = 0; mb < m; ++mb) fwd_input[slot(0, mb)] = 0.0;
    std::vector<std::size_t> next(npp, 0);
    std::vector<double> free_at(npp, 0.0);
    struct Running {
        bool on = false;
        double left_s = 0;  // of the pass's own (unshared) time
        double u = 0;       // computing share of the pass
    };
    std::vector<Running> cur(npp);
    auto cpu_of = [&t](bool fwd, std::size_t g) {
        const auto& cpu = fwd ? t.chunk_fwd_cpu_s : t.chunk_bwd_cpu_s;
        return g < cpu.size() ? std::max(0.0, cpu[g]) : 0.0;
    };
    // When rank r's next pass may start; < 0 while its input is not produced.
    auto ready_at = [&](int r) {
        const auto& ops = s.ops[static_cast<std::size_t>(r)];
        const std::size_t i = next[static_cast<std::size_t>(r)];
        if (i >= ops.size()) return -1.0;
        const PipeOp& op = ops[i];
        const int g = op.chunk * pp + r;
        const bool fwd = op.kind == PipeOpKind::Forward;
        const double input = fwd ? fwd_input[slot(g, op.micro_batch)]
                                 : (g == chunks - 1 ? 0.0 : bwd_input[slot(g, op.micro_batch)]);
        return input < 0 ? -1.0 : std::max(free_at[static_cast<std::size_t>(r)], input);
    };
    std::size_t done = 0;
    double now = 0;
    // Ends rank r's running pass at `now`: hands its output on and frees the stream.
    auto finish = [&](int r) {
        const auto ur = static_cast<std::size_t>(r);
        const PipeOp& op = s.ops[ur][next[ur]];
        const int g = op.chunk * pp + r;
        const bool fwd = op.kind == PipeOpKind::Forward;
        PassTiming& pt = run.timing[ur][next[ur]];
        pt.end_s = now;
        pt.release_s = now;
        const int to = fwd ? g + 1 : g - 1;
        if (to >= 0 && to < chunks) {
            const int dest = to % pp;
            const double arrive = dest == r ? now : now + t.p2p_s;
            if (dest != r) pt.release_s = arrive;
            (fwd ? fwd_input : bwd_input)[slot(to, op.micro_batch)] = arrive;
        }
        free_at[ur] = pt.release_s;
        run.rank_busy_s[ur] += pt.release_s - pt.start_s;
        cur[ur].on = false;
        ++next[ur];
        ++done;
    };
    while (done < total) {
        ++run.events;
        // Start every pass that can start now (a pass of no time ends at once).
        for (bool started = true; started;) {
            started = false;
            for (int r = 0; r < pp; ++r) {
                const auto ur = static_cast<std::size_t>(r);
                const double at = ready_at(r);
                if (cur[ur].on || at < 0 || at > now) continue;
                const PipeOp& op = s.ops[ur][next[ur]];
                const auto g = static_cast<std::size_t>(op.chunk * pp + r);
                const bool fwd = op.kind == PipeOpKind::Forward;
                const double dur = std::max(0.0, fwd ? t.chunk_fwd_s[g] : t.chunk_bwd_s[g]);
                run.timing[ur][next[ur]].start_s = at;
                started = true;
                if (dur <= 0) {
                    finish(r);
                    continue;
                }
                cur[ur] = {true, dur, std::min(1.0, cpu_of(fwd, g) / dur)};
            }
        }
        if (done == total) break;
        // Cores the running passes' threads use: a thread computing u of its pass at a share
        // rho of a core uses u / (1 − u + u/rho) of one. rho = 1 when they fit, else the share
        // at which they use the cores exactly (that use grows with rho: bisection).
        auto use = [&](double share) {
            double sum = 0;
            for (const auto& c : cur) {
                if (c.on && c.u > 0) sum += t.threads_per_rank * c.u / (1.0 - c.u + c.u / share);
            }
            return sum;
        };
        double rho = 1.0;
        if (use(1.0) > t.host_cores) {
            double lo = 0, hi = 1;
            for (int k = 0; k < 60; ++k) (use(0.5 * (lo + hi)) > t.host_cores ? hi : lo) = 0.5 * (lo + hi);
            rho = std::max(0.5 * (lo + hi), 1e-12);
        }
        double step = std::numeric_limits<double>::infinity();
        int first = -1;
        for (int r = 0; r < pp; ++r) {
            const Running& c = cur[static_cast<std::size_t>(r)];
            if (!c.on) {
                const double at = ready_at(r);
                if (at > now) step = std::min(step, at - now);
                continue;
            }
            const double speed = 1.0 / (1.0 - c.u + c.u / rho);
            if (c.left_s / speed < step) step = c.left_s / speed, first = r;
        }
        if (!std::isfinite(step)) break;  // nothing runs and nothing can start: deadlock
        for (int r = 0; r < pp; ++r) {
            Running& c = cur[static_cast<std::size_t>(r)];
            if (!c.on) continue;
            const double denom = 1.0 - c.u + c.u / rho;
            run.rank_core_wait_s[static_cast<std::size_t>(r)] += step * c.u * (1.0 / rho - 1.0) / denom;
            c.left_s -= step / denom;
        }
        now += step;
        for (int r = 0; r < pp; ++r) {
            Running& c = cur[static_cast<std::size_t>(r)];
            if (c.on && (r == first || c.left_s <= 1e-12 * now)) finish(r);
        }
    }
    if (done != total) {
        throw RuntimeError("pipeline simulation deadlocked after " + std::to_string(done) + " of " +
                           std::to_string(total) + " passes");
    }
    for (int r = 0; r < pp; ++r) run.rank_end_s[static_cast<std::size_t>(r)] = free_at[static_cast<std::size_t>(r)];
    for (double e : run.rank_end_s) run.span_s = std::max(run.span_s, e);
    run.memory_bytes = 2 * slots * sizeof(double) + total * sizeof(PassTiming) +
                       npp * (4 * sizeof(double) + sizeof(std::size_t) + sizeof(Running));
    return run;
}

}  // namespace

PipelineRun run_pipeline(const PipelineSchedule& s, const PipelineTimes& t) {
    if (t.host_cores > 0 && t.threads_per_rank * s.pp > t.host_cores) return run_shared(s, t);
    return run_dedicated(s, t);
}

}  // namespace meshwork::sim
