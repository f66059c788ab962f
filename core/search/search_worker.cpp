#include "core/search/search_worker.h"

#include <algorithm>
#include <array>

namespace meshwork::search {

namespace {
constexpr std::size_t kClosestKept = 3;
}

SearchWorker::SearchWorker(const SearchRequest& req, const SearchSpace& space,
                           const CostModel& cost, std::size_t keep_best)
    : options_(req.options),
      space_(space),
      cost_(cost),
      rules_(rule_context(req.model, req.options)),
      tuner_(req.options, req.model, static_cast<std::size_t>(space.max_pp())),
      best_(keep_best, &ranks_before),
      keep_best_(keep_best),
      closest_(kClosestKept, &closer_to_fitting) {
    parallel_.mesh.order = options_.order;
    training_.global_batch_size = options_.global_batch_size;
    training_.seq_length = options_.seq_length;
    training_.dtype = options_.dtype;
    training_.grad_reduce_in_bf16 = options_.grad_reduce_in_bf16;
    // The speed-only knobs are the tuner's, per candidate; room for every recompute module.
    training_.recompute_modules.reserve(std::size(kAllRecomputeModules));
    // Room for the largest shapes up front: the estimates below then never allocate.
    placement_.layers_per_stage.reserve(static_cast<std::size_t>(space.max_chunks()));
    estimate_.stages.reserve(static_cast<std::size_t>(space.max_pp()));
}

bool SearchWorker::run_task(std::size_t index, const std::atomic<bool>& stop,
                            std::atomic<std::int64_t>& processed) {
    const MeshTask& t = space_.tasks()[index];
    const std::uint64_t base = static_cast<std::uint64_t>(index) << 32;
    std::int64_t leaf = 0;
    auto reject_block = [&](Reject why, std::int64_t n) {
        rejected_[static_cast<std::size_t>(why)] += n;
        leaf += n;
        processed.fetch_add(n, std::memory_order_relaxed);
    };
    Candidate c;
    static_cast<AxisSizes&>(c) = t;
    const std::int64_t split_block = space_.split_block();
    for (const bool sp : space_.sequence_parallel(t.tp)) {
        c.sequence_parallel = sp;
        Reject why = check_tensor(rules_, t.tp);
        if (why == Reject::None) why = check_pipeline_depth(rules_, t.pp);
        if (why == Reject::None) why = check_experts(rules_, t.tp, t.cp, t.dp, t.ep, t.etp);
        if (why == Reject::None) why = check_sequence(rules_, t.tp, t.cp, sp);
        if (why != Reject::None) {
            reject_block(why, space_.sp_block(t.pp));
            continue;
        }
        for (const PipelineOption& p : space_.pipelines(t.pp)) {
            c.schedule = p.schedule;
            c.vpp = p.vpp;
            const int chunks = t.pp * p.vpp;
            const auto& splits = space_.splits(chunks);
            why = check_schedule(t.pp, p.vpp, p.schedule);
            if (why != Reject::None) {
                reject_block(why, static_cast<std::int64_t>(splits.size()) * split_block);
                continue;
            }
            for (const StageSplit& s : splits) {
                if (stop.load(std::memory_order_relaxed)) return false;
                c.split = s;
                why = check_split(rules_, chunks, s);
                if (why != Reject::None) {
                    reject_block(why, split_block);
                    continue;
                }
                run_split_block(c, base + static_cast<std::uint64_t>(leaf));
                leaf += split_block;
                processed.fetch_add(split_block, std::memory_order_relaxed);
            }
        }
    }
    return true;
}

void SearchWorker::run_split_block(Candidate& c, std::uint64_t first_ordinal) {
    const auto& zeros = space_.zero_stages();
    const auto& recomputes = space_.recomputes();
    const auto& mbs = space_.micro_batches();
    const std::size_t nr = recomputes.size(), nm = mbs.size();
    apply_candidate(c, parallel_, placement_, training_);

    // Memory only grows with the micro-batch and as the ZeRO stage drops: once a
    // (zero, recompute, mbs) overflows, every larger mbs at that or a lower stage does too.
    // Zero stages therefore run from the highest down; ordinals stay in ascending order.
    std::array<std::size_t, 3> oom_from{nm, nm, nm};
    for (std::size_t zi = zeros.size(); zi-- > 0;) {
        c.zero_stage = zeros[zi];
        training_.zero_stage = c.zero_stage;
        training_.fsdp_fp32_shards = options_.fp32_shards_at(c.zero_stage);
        const Reject zero_rule = check_zero(c.pp, c.zero_stage);
        for (std::size_t ri = 0; ri < nr; ++ri) {
            c.recompute = recomputes[ri];
            training_.recompute = c.recompute;
            for (std::size_t mi = 0; mi < nm; ++mi) {
                auto count = [&](Reject why) { ++rejected_[static_cast<std::size_t>(why)]; };
                c.micro_batch_size = mbs[mi];
                const Reject batch_rule =
                    check_batch(rules_, c.dp, c.pp, c.micro_batch_size, c.schedule);
                if (batch_rule != Reject::None) {
                    count(batch_rule);
                    continue;
                }
                if (zero_rule != Reject::None) {
                    count(zero_rule);
                    continue;
                }
                if (options_.memory_pruning && mi >= oom_from[ri]) {
                    count(Reject::OutOfMemory);
                    continue;
                }
                training_.micro_batch_size = c.micro_batch_size;
                // The candidate's speed-only knobs (tuning.h); `fits` is exact: the tuner
                // first costs the least-memory tuning.
                // Candidates that cannot beat the worst kept result are not tuned further.
                const auto& kept = best_.items();
                const double must_beat =
                    kept.size() >= keep_best_ && !kept.empty() && options_.min_mfu <= 0 ? kept.back().tokens_per_s
                                                                                       : 0.0;
                calls_ += tuner_.tune(c, cost_, parallel_, placement_, training_, estimate_, must_beat);
                Scored s;
                s.tokens_per_s = estimate_.tokens_per_s;
                s.ordinal = first_ordinal + (zi * nr + ri) * nm + mi;
                s.peak_bytes =
                    estimate_.stages[static_cast<std::size_t>(estimate_.worst_stage)].peak_bytes;
                if (!estimate_.fits) {
                    count(Reject::OutOfMemory);
                    if (options_.memory_pruning) oom_from[ri] = std::min(oom_from[ri], mi);
                    s.overflow_bytes = estimate_.max_overflow_bytes;
                    if (closest_.would_keep(s)) {
                        s.candidate = c;
                        closest_.insert(s);
                    }
                    continue;
                }
                if (estimate_.mfu < options_.min_mfu) {
                    count(Reject::BelowMinMfu);
                    continue;
                }
                ++evaluated_;
                if (best_.would_keep(s)) {
                    s.candidate = c;
                    s.step_time_s = estimate_.step_time_s;
                    s.mfu = estimate_.mfu;
                    best_.insert(s);
                }
            }
        }
    }
}

}  // namespace meshwork::search
