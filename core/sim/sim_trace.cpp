#include "core/sim/sim_trace.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace meshwork::sim {

namespace {

std::int64_t to_ns(double s) { return static_cast<std::int64_t>(std::llround(std::max(0.0, s) * 1e9)); }

// The lanes of one stage's timeline, as slots into StageTimeline::tracks (-1: the layout has
// no such lane).
struct Tracks {
    int compute = -1, tp = -1, ep = -1, cp = -1, pp = -1, dp = -1, host = -1, host_wait = -1;
};

// One stage's timeline, built once: its lanes (rank left out) and its events, whose `track`
// is a slot of `tracks` until written for a rank.
struct StageTimeline {
    std::vector<TrackInfo> tracks;
    std::vector<TraceEvent> events;
    std::vector<int> lane_of_event;  // the slots, kept once events are rewritten for a rank
};

// Builds each stage's timeline into a StageTimeline, or, given a `direct` sink (one rank per
// stage), writes it there as it goes: buffering a timeline only to write it once made the
// simulator's trace 2.7x slower to write (bench_cost BM_Simulate405BTimeline).
class Writer {
public:
    Writer(const TraceInput& in, TraceSink* direct) : in_(in), direct_(direct) {}

    // Starts the timeline of a new stage, of `rank` when written directly, and returns its lanes.
    Tracks begin_stage(StageTimeline& stage, int rank) {
        stage_ = &stage;
        last_end_.clear();
        direct_ids_.clear();
        const auto& c = *in_.costs;
        auto lane = [&](TrackKind kind, int index, const char* name) {
            stage.tracks.push_back({rank, kind, index, name});
            if (direct_) direct_ids_.push_back(direct_->add_track(stage.tracks.back()));
            return static_cast<int>(stage.tracks.size()) - 1;
        };
        Tracks t;
        t.compute = lane(TrackKind::ComputeStream, 0, "compute");
        int comm = 0;
        if (c.tp > 1) t.tp = lane(TrackKind::CommStream, comm++, "comm:tp");
        if (c.ep > 1 || c.etp > 1) t.ep = lane(TrackKind::CommStream, comm++, "comm:ep");
        if (c.cp > 1) t.cp = lane(TrackKind::CommStream, comm++, "comm:cp");
        if (c.pp > 1) t.pp = lane(TrackKind::CommStream, comm++, "comm:pp");
        if (c.dp > 1 || c.cp > 1 || c.edp > 1) t.dp = lane(TrackKind::CommStream, comm++, "comm:dp");
        if (in_.host_sharing_s > 0) t.host_wait = lane(TrackKind::CommStream, comm++, "comm:host sharing");
        t.host = lane(TrackKind::Host, 0, "host");
        return t;
    }

    // Emits [cursor, cursor + dur) and advances the cursor; zero-length spans are skipped.
    void span(int rank, int track, EventKind kind, const std::string& name, double& cursor, double dur,
              double bytes, double flops, int mb, int layer, int group) {
        if (track < 0 || !(dur > 0)) return;
        TraceEvent& e = direct_ ? direct_event_ : stage_->events.emplace_back();
        e.rank = rank;
        e.track = track;
        e.kind = kind;
        e.name = name;
        e.start_ns = to_ns(cursor);
        e.end_ns = std::max(e.start_ns, to_ns(cursor + dur));
        e.bytes = static_cast<std::int64_t>(std::max(0.0, bytes));
        e.flops = std::max(0.0, flops);
        e.step = 0;
        e.micro_batch = mb;
        e.layer = layer;
        e.group_size = group;
        e.correlation_id = ++correlation_;
        cursor += dur;
        if (direct_) {
            e.track = direct_ids_[static_cast<std::size_t>(track)];
            direct_->add_event(e);
            ++direct_written_;
        }
    }

    void forward(int rank, const Tracks& t, const ChunkCost& cc, double start, double zero, int mb) {
        const auto& c = *in_.costs;
        double at = start;
        double dp_at = start;
        span(rank, t.dp, EventKind::Communication, "all_gather(dp).params", dp_at, zero, 0, 0, mb, -1, c.dp);
        at += zero;
        const int last = c.pp * c.vpp - 1;
        if (cc.chunk == 0) {
            span(rank, t.compute, EventKind::Compute, "embedding.fwd", at, c.embedding.fwd.compute_s(), 0, 0, mb, -1, 0);
            comm(rank, t.tp, c.sequence_parallel ? "reduce_scatter(tp)" : "all_reduce(tp)", at,
                 c.embedding.fwd.tp_s, 0, mb, -1, c.tp);
        }
        for (int l = cc.first_layer; l < cc.first_layer + cc.layers; ++l) {
            const bool moe = in_.model->model().is_moe_block(l);
            const auto& b = moe ? c.moe : c.dense;
            const std::string prefix = "block." + std::to_string(l) + ".";
            span(rank, t.compute, EventKind::Compute, prefix + "attention.fwd", at, b.fwd.attention_s, 0,
                 b.attention_flops_fwd, mb, l, 0);
            overlapped(rank, t.cp, "ring_exchange(cp)", at, b.fwd.cp_s, b.fwd.cp_total_s, 0, mb, l, c.cp);
            tp_half(rank, t, at, b.fwd.tp_s / 2, b.fwd.tp_total_s / 2, b.tp_bytes, mb, l);
            span(rank, t.compute, EventKind::Compute, prefix + (moe ? "moe.fwd" : "mlp.fwd"), at, b.fwd.mlp_s, 0,
                 b.mlp_flops_fwd, mb, l, 0);
            comm(rank, t.ep, "all_to_all(ep)", at, b.fwd.ep_s, b.ep_bytes, mb, l, c.ep);
            tp_half(rank, t, at, b.fwd.tp_s / 2, b.fwd.tp_total_s / 2, b.tp_bytes, mb, l);
        }
        if (cc.chunk == last) {
            span(rank, t.compute, EventKind::Compute, "lm_head.fwd", at, c.head.fwd.compute_s(), 0,
                 c.head.model_flops / 3.0, mb, -1, 0);
            comm(rank, t.tp, "all_gather(tp)", at, c.head.fwd.tp_s, 0, mb, -1, c.tp);
        }
    }

    void backward(int rank, const Tracks& t, const ChunkCost& cc, double start, double zero, int mb) {
        const auto& c = *in_.costs;
        double at = start;
        double dp_at = start;
        span(rank, t.dp, EventKind::Communication, "reduce_scatter(dp).grads", dp_at, zero, 0, 0, mb, -1, c.dp);
        at += zero;
        const int last = c.pp * c.vpp - 1;
        if (cc.chunk == last) {
            span(rank, t.compute, EventKind::Compute, "lm_head.bwd", at, c.head.bwd.compute_s(), 0,
                 2.0 * c.head.model_flops / 3.0, mb, -1, 0);
            comm(rank, t.tp, "reduce_scatter(tp)", at, c.head.bwd.tp_s, 0, mb, -1, c.tp);
        }
        const int rec_end = cc.first_layer + cc.recomputed_layers;
        for (int l = cc.first_layer + cc.layers - 1; l >= cc.first_layer; --l) {
            const bool moe = in_.model->model().is_moe_block(l);
            const auto& b = moe ? c.moe : c.dense;
            const std::string prefix = "block." + std::to_string(l) + ".";
            if (l < rec_end) {
                span(rank, t.compute, EventKind::Compute, prefix + "recompute", at, b.full_recompute.total_s(), 0,
                     b.recompute_flops_full, mb, l, 0);
            } else if (c.recompute == Recompute::Selective || c.recompute == Recompute::SelectiveOp) {
                // Op-level checkpointing; core attention alone (Megatron's default); or the
                // layout's recompute_modules.
                const char* what = c.recompute == Recompute::SelectiveOp      ? "ops.recompute"
                                   : c.recompute_modules.only_core_attn() ? "attention.recompute"
                                                                           : "modules.recompute";
                span(rank, t.compute, EventKind::Compute, prefix + what, at,
                     b.selective_recompute_s, 0, b.recompute_flops_selective, mb, l, 0);
            }
            tp_half(rank, t, at, b.bwd.tp_s / 2, b.bwd.tp_total_s / 2, b.tp_bytes, mb, l);
            comm(rank, t.ep, "all_to_all(ep)", at, b.bwd.ep_s, b.ep_bytes, mb, l, c.ep);
            span(rank, t.compute, EventKind::Compute, prefix + (moe ? "moe.bwd" : "mlp.bwd"), at, b.bwd.mlp_s, 0,
                 2.0 * b.mlp_flops_fwd, mb, l, 0);
            tp_half(rank, t, at, b.bwd.tp_s / 2, b.bwd.tp_total_s / 2, b.tp_bytes, mb, l);
            span(rank, t.compute, EventKind::Compute, prefix + "attention.bwd", at, b.bwd.attention_s, 0,
                 2.0 * b.attention_flops_fwd, mb, l, 0);
            overlapped(rank, t.cp, "ring_exchange(cp)", at, b.bwd.cp_s, b.bwd.cp_total_s, 0, mb, l, c.cp);
        }
        if (cc.chunk == 0) {
            span(rank, t.compute, EventKind::Compute, "embedding.bwd", at, c.embedding.bwd.compute_s(), 0, 0, mb, -1, 0);
            comm(rank, t.tp, "all_gather(tp)", at, c.embedding.bwd.tp_s, 0, mb, -1, c.tp);
        }
    }

    // The TP collectives of half a block: an all-reduce, or with SP an all-gather and a
    // reduce-scatter of the same total volume.
    void tp_half(int rank, const Tracks& t, double& at, double exposed, double total, double bytes, int mb,
                 int layer) {
        const auto& c = *in_.costs;
        if (t.tp < 0) return;
        const auto [start, end] = window(t.tp, at, exposed, total);
        double cursor = start;
        if (c.sequence_parallel) {
            const double half = (end - start) / 2;
            span(rank, t.tp, EventKind::Communication, "all_gather(tp)", cursor, half, bytes, 0, mb, layer, c.tp);
            span(rank, t.tp, EventKind::Communication, "reduce_scatter(tp)", cursor, end - cursor, bytes, 0, mb,
                 layer, c.tp);
        } else {
            span(rank, t.tp, EventKind::Communication, "all_reduce(tp)", cursor, end - start, bytes, 0, mb, layer,
                 c.tp);
        }
    }

    void overlapped(int rank, int track, const char* name, double& at, double exposed, double total,
                    double bytes, int mb, int layer, int group) {
        if (track < 0) return;
        const auto [start, end] = window(track, at, exposed, total);
        double cursor = start;
        span(rank, track, EventKind::Communication, name, cursor, end - start, bytes, 0, mb, layer, group);
    }

    // A collective of `total` seconds of which `exposed` hold the compute stream at `at`:
    // it is drawn over [at + exposed − total, at + exposed), the part before `at` having
    // run under the preceding kernels, never before the previous collective of the same
    // stream. Advances `at` past the exposed part.
    std::pair<double, double> window(int track, double& at, double exposed, double total) {
        if (static_cast<std::size_t>(track) >= last_end_.size()) last_end_.resize(static_cast<std::size_t>(track) + 1, 0.0);
        double& last = last_end_[static_cast<std::size_t>(track)];
        exposed = std::max(0.0, exposed);
        const double start = std::max({0.0, last, at - std::max(0.0, total - exposed)});
        const double end = at + exposed;
        last = end;
        at = end;
        return {std::min(start, end), end};
    }

    // A collective on the critical path: the compute stream waits for it.
    void comm(int rank, int track, const char* name, double& at, double dur, double bytes, int mb, int layer,
              int group) {
        span(rank, track, EventKind::Communication, name, at, dur, bytes, 0, mb, layer, group);
    }

    // Direct writing: the stage is complete; its lanes are summarised now.
    void end_stage() {
        if (direct_) {
            for (int id : direct_ids_) direct_->finish_track(id);
        }
    }
    [[nodiscard]] std::int64_t direct_written() const { return direct_written_; }

private:
    const TraceInput& in_;
    TraceSink* direct_;
    std::vector<int> direct_ids_;  // per lane of the stage: its track id in `direct_`
    TraceEvent direct_event_;      // reused: its name keeps its capacity
    std::int64_t direct_written_ = 0;
    StageTimeline* stage_ = nullptr;
    std::int64_t correlation_ = 0;
    std::vector<double> last_end_;  // per lane of the stage: end of the last overlapped collective
};

// Writes `stage` as the timeline of `rank`: its lanes, then its events on them. Correlation
// ids stay those of the stage's events: a replica's event and its representative's are the
// same simulated operation. The events are rewritten in place for each rank (no copy of
// their names).
// Returns the events written.
std::int64_t write_stage(StageTimeline& stage, int rank, TraceSink& sink) {
    std::vector<int> ids;
    ids.reserve(stage.tracks.size());
    for (TrackInfo t : stage.tracks) {
        t.rank = rank;
        ids.push_back(sink.add_track(t));
    }
    if (stage.lane_of_event.empty()) {
        stage.lane_of_event.reserve(stage.events.size());
        for (const TraceEvent& e : stage.events) stage.lane_of_event.push_back(e.track);
    }
    for (std::size_t i = 0; i < stage.events.size(); ++i) {
        TraceEvent& e = stage.events[i];
        e.rank = rank;
        e.track = ids[static_cast<std::size_t>(stage.lane_of_event[i])];
        sink.add_event(e);
    }
    // The rank is written: a trace writer summarises its lanes now instead of holding a copy
    // of every rank's events until close.
    for (int id : ids) sink.finish_track(id);
    return static_cast<std::int64_t>(stage.events.size());
}

}  // namespace

std::int64_t write_sim_trace(const TraceInput& in, TraceSink& sink) {
    const bool all_ranks = !in.stage_of_rank.empty();
    Writer w(in, all_ranks ? nullptr : &sink);
    const auto& c = *in.costs;
    const auto& s = *in.schedule;
    const auto& run = *in.run;
    // Every rank: each stage's timeline is kept until all ranks are written from it. One
    // rank per stage: written as it is built.
    std::vector<StageTimeline> stages(static_cast<std::size_t>(c.pp));
    for (int r = 0; r < c.pp; ++r) {
        const int rank = in.global_rank[static_cast<std::size_t>(r)];
        const Tracks t = w.begin_stage(stages[static_cast<std::size_t>(r)], rank);
        double at = 0;
        w.span(rank, t.host, EventKind::Marker, "step 0", at, in.step_s, 0, 0, -1, -1, 0);
        const auto& ops = s.ops[static_cast<std::size_t>(r)];
        for (std::size_t i = 0; i < ops.size(); ++i) {
            const PipeOp& op = ops[i];
            const int g = op.chunk * c.pp + r;
            const ChunkCost& cc = (*in.chunks)[static_cast<std::size_t>(g)];
            const PassTiming& pt = run.timing[static_cast<std::size_t>(r)][i];
            if (op.kind == PipeOpKind::Forward) {
                w.forward(rank, t, cc, pt.start_s, (*in.zero_fwd_s)[static_cast<std::size_t>(g)], op.micro_batch);
            } else {
                w.backward(rank, t, cc, pt.start_s, (*in.zero_bwd_s)[static_cast<std::size_t>(g)], op.micro_batch);
            }
            double send_at = pt.end_s;
            w.span(rank, t.pp, EventKind::Communication, op.kind == PipeOpKind::Forward ? "send(pp).activation" : "send(pp).grad",
                   send_at, pt.release_s - pt.end_s, c.p2p_bytes, 0, op.micro_batch, -1, 2);
        }
        const RankTail& tail = (*in.tails)[static_cast<std::size_t>(r)];
        for (const RankTail::Reduction& red : tail.reductions) {
            double dp_at = red.start_s;
            if (red.chunk < 0) {
                w.span(rank, t.dp, EventKind::Communication, "all_reduce(pp).embedding_grads", dp_at,
                       red.end_s - red.start_s, 0, 0, -1, -1, 2);
                continue;
            }
            const std::string name = std::string(c.zero_stage == 0 ? "all_reduce(dp).grads" : "reduce_scatter(dp).grads") +
                                     (c.vpp > 1 ? ".chunk" + std::to_string(red.chunk) : std::string());
            w.span(rank, t.dp, EventKind::Communication, name, dp_at, red.end_s - red.start_s, 0, 0, -1, -1,
                   c.cp > 1 ? c.dp * c.cp : c.dp);
        }
        double opt_at = tail.optimizer_start_s;
        w.span(rank, t.compute, EventKind::Compute, "optimizer.step", opt_at,
               tail.optimizer_end_s - tail.optimizer_start_s, 0, 0, -1, -1, 0);
        double g_at = tail.gather_start_s;
        w.span(rank, t.dp, EventKind::Communication, "all_gather(dp).params", g_at,
               tail.gather_end_s - tail.gather_start_s, 0, 0, -1, -1, c.cp > 1 ? c.dp * c.cp : c.dp);
        if (in.host_sharing_s > 0) {
            double wait_at = std::max(tail.optimizer_end_s, tail.gather_end_s);
            w.span(rank, t.host_wait, EventKind::Communication, "host_sharing.wait", wait_at,
                   in.step_s - wait_at, 0, 0, -1, -1, 0);
        }
        w.end_stage();
    }
    if (!all_ranks) return w.direct_written();
    std::int64_t written = 0;
    for (std::size_t rank = 0; rank < in.stage_of_rank.size(); ++rank) {
        written += write_stage(stages.at(static_cast<std::size_t>(in.stage_of_rank[rank])), static_cast<int>(rank), sink);
    }
    return written;
}

}  // namespace meshwork::sim
