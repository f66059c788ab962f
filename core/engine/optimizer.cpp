#include "core/engine/optimizer.h"

#include <algorithm>

namespace meshwork::engine {

Optimizer::Optimizer(RankContext& ctx, ParamStore& store, const EngineOptions& options,
                     int zero_stage)
    : options_(options) {
    for (int gi = 0; gi < kReduceGroups; ++gi) {
        const auto g = static_cast<ReduceGroup>(gi);
        GroupState& st = groups_[gi];
        st.comm = g == ReduceGroup::Dense ? Axis::DpCp : Axis::Edp;
        const std::size_t n = store.group_count(g);
        const int size = ctx.size(st.comm), rank = ctx.rank(st.comm);
        st.sharded = zero_stage >= 1 && size > 1;
        st.begin = 0;
        st.count = n;
        if (st.sharded) {
            // Uneven shards: the first n % size ranks hold one float more.
            const std::size_t base = n / static_cast<std::size_t>(size), extra = n % static_cast<std::size_t>(size);
            for (int r = 0; r < size; ++r) st.counts.push_back(base + (static_cast<std::size_t>(r) < extra ? 1 : 0));
            for (int r = 0; r < rank; ++r) st.begin += st.counts[static_cast<std::size_t>(r)];
            st.count = st.counts[static_cast<std::size_t>(rank)];
        }
        const MemoryKindScope kind(ctx.be, MemoryKind::Optimizer);
        st.m = Floats(ctx.be, st.count);
        st.v = Floats(ctx.be, st.count);
        ctx.be.fill(st.m.data(), st.count, 0.0f, ctx.compute);
        ctx.be.fill(st.v.data(), st.count, 0.0f, ctx.compute);
    }
}

std::size_t Optimizer::state_floats() const {
    return 2 * (groups_[0].count + groups_[1].count);
}

void Optimizer::adam_range(RankContext& ctx, ParamStore& store, ReduceGroup g, std::size_t begin,
                           std::size_t count, float* m, float* v, int step) {
    // Per parameter: norms are not decayed, and a shard boundary may cut a parameter.
    const std::size_t end = begin + count;
    for (const ParamInfo& p : store.all()) {
        if (p.group != g) continue;
        const std::size_t lo = std::max(begin, p.offset), hi = std::min(end, p.offset + p.count());
        if (lo >= hi) continue;
        Backend::AdamW hp{options_.lr, options_.beta1, options_.beta2, options_.adam_eps,
                          p.weight_decay ? options_.weight_decay : 0.0f, step};
        ctx.be.adamw(store.values(g).data() + lo, store.grads(g).data() + lo, m + (lo - begin),
                     v + (lo - begin), hi - lo, hp, ctx.compute);
    }
}

void Optimizer::step(RankContext& ctx, ParamStore& store, int step) {
    // The trace's "optimizer.step" op spans the updates only: the gradient collectives are
    // traced as themselves, so a measured step's compute does not count them twice (and
    // calibrate does not take their time for compute).
    if (ctx.size(Axis::Tp) > 1) {
        for (int id = 0; id < static_cast<int>(store.all().size()); ++id) {
            if (store.info(id).tp_partial_grad) ctx.all_reduce(Axis::Tp, store.grad(id), store.info(id).count());
        }
    }
    for (int gi = 0; gi < kReduceGroups; ++gi) {
        const auto g = static_cast<ReduceGroup>(gi);
        GroupState& st = groups_[gi];
        const std::size_t n = store.group_count(g);
        if (n == 0) continue;
        float* grads = store.grads(g).data();
        if (!st.sharded) {
            const std::size_t bucket = std::max<std::size_t>(1, options_.bucket_bytes / sizeof(float));
            for (std::size_t at = 0; at < n && ctx.size(st.comm) > 1; at += bucket) {
                ctx.all_reduce(st.comm, grads + at, std::min(bucket, n - at));
            }
            RankContext::Op op(ctx, "optimizer.step", -1, 0);
            adam_range(ctx, store, g, 0, n, st.m.data(), st.v.data(), step);
            continue;
        }
        // ZeRO: each rank reduces, updates and then shares only its shard.
        Floats shard(ctx.be, st.count);
        ctx.reduce_scatter_v(st.comm, grads, shard.data(), st.counts);
        {
            RankContext::Op op(ctx, "optimizer.step", -1, 0);
            ctx.be.copy(grads + st.begin, shard.data(), st.count * sizeof(float), ctx.compute);
            adam_range(ctx, store, g, st.begin, st.count, st.m.data(), st.v.data(), step);
            ctx.be.copy(shard.data(), store.values(g).data() + st.begin, st.count * sizeof(float),
                        ctx.compute);
        }
        ctx.all_gather_v(st.comm, shard.data(), store.values(g).data(), st.counts);
    }
}

}  // namespace meshwork::engine
