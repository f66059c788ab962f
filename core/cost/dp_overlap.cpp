#include "core/cost/dp_overlap.h"

#include <algorithm>
#include <cmath>

namespace meshwork::cost {

namespace {
double nonneg(double v) { return std::isfinite(v) && v > 0 ? v : 0.0; }
}  // namespace

double ddp_bucket_params(int dp) { return std::max(40e6, 1e6 * std::max(1, dp)); }

int ddp_bucket_count(double params, int dp) {
    if (!(params > 0)) return 1;
    const double n = std::ceil(params / ddp_bucket_params(dp));
    return n >= 1e6 ? 1'000'000 : std::max(1, static_cast<int>(n));
}

DpQueue run_dp_queue(std::span<const DpCollective> collectives, double interference, std::vector<double>* start_s) {
    DpQueue q;
    if (start_s != nullptr) start_s->clear();
    double free_at = -1e300;
    for (const DpCollective& col : collectives) {
        const double start = std::max(col.ready_s, free_at);
        const double end = start + nonneg(col.duration_s);
        if (start_s != nullptr) start_s->push_back(start);
        q.hidden_s += nonneg(std::min(end, 0.0) - start);
        free_at = end;
    }
    q.finish_s = collectives.empty() ? 0.0 : free_at;
    q.tail_s = std::max({0.0, q.finish_s, std::clamp(interference, 0.0, 0.9) * q.hidden_s});
    return q;
}

GradLaunch grad_launch(const LayoutCosts& c, int rank) {
    if (!c.overlap_grad_reduce) return GradLaunch::AfterBackward;
    if (c.pp <= 1) return GradLaunch::Buckets;
    switch (c.schedule) {
        case Schedule::Interleaved: return GradLaunch::PerChunk;
        case Schedule::OneFOneB: return rank == 0 ? GradLaunch::Buckets : GradLaunch::AfterBackward;
        case Schedule::GPipe: break;
    }
    return GradLaunch::Buckets;
}

DpCollective buckets_in_last_backward(double reduce_s, double window_s, int buckets) {
    const double r = nonneg(reduce_s);
    const int n = std::max(1, buckets);
    // Bucket b is ready at (b + 1)/n of the window; queued, the last one ends at the later of
    // its own ready time + r/n and the first ready time + r (no gap left).
    const double exposed = std::max(r / n, r - (n - 1) * nonneg(window_s) / n);
    return DpCollective{exposed - r, r};
}

GatherExposure rank_gather_exposure(const LayoutCosts& c, std::span<const ChunkGather> chunks, double fill_s,
                                    double params, int group) {
    GatherExposure g;
    double total = 0;
    for (const ChunkGather& ch : chunks) total += nonneg(ch.gather_s);
    if (total <= 0) return g;
    const double share = std::clamp(c.dp_overlap, 0.0, 1.0);
    if (!c.overlap_param_gather) {
        g.exposed_s = total;
    } else if (c.schedule == Schedule::Interleaved && c.pp > 1) {
        // Chunks 0 and 1 start with the step; chunk k + 1 at the first forward of chunk k,
        // needed a group of forwards later.
        g.exposed_s = nonneg(chunks[0].gather_s - share * nonneg(fill_s));
        for (std::size_t k = 1; k < chunks.size(); ++k) {
            g.exposed_s += nonneg(chunks[k].gather_s - share * std::max(1, group) * nonneg(chunks[k - 1].fwd_s));
        }
    } else {
        // The first forward's pre-hook starts and waits for its bucket, then starts the next
        // one, which runs beside that bucket's layers.
        const int n = ddp_bucket_count(params, c.dp);
        double first_fwd = 0;  // the first micro-batch through every chunk of the rank
        for (const ChunkGather& ch : chunks) first_fwd += nonneg(ch.fwd_s);
        const double per_bucket = total / n;
        g.exposed_s = per_bucket + (n - 1) * nonneg(per_bucket - share * first_fwd / n);
    }
    g.exposed_s = std::min(g.exposed_s, total);
    g.hidden_s = nonneg(total - g.exposed_s);
    return g;
}

double step_gather_s(const LayoutCosts& c, std::span<const GatherExposure> ranks, double interference) {
    const double u = std::clamp(interference, 0.0, 0.9);
    double worst = 0, sum = 0, most_hidden = 0;
    for (const GatherExposure& g : ranks) {
        worst = std::max(worst, g.exposed_s + u * g.hidden_s);
        sum += g.exposed_s;
        most_hidden = std::max(most_hidden, g.hidden_s);
    }
    const bool chained = c.overlap_param_gather && !(c.schedule == Schedule::Interleaved && c.pp > 1);
    return chained ? sum + u * most_hidden : worst;
}

}  // namespace meshwork::cost
