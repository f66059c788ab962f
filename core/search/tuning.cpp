#include "core/search/tuning.h"

#include <bit>
#include <utility>

#include "core/layout/layout_rules.h"
#include "core/search/candidate.h"
#include "core/search/search_options.h"

namespace meshwork::search {

namespace {

constexpr std::uint32_t bit(RecomputeModule m) { return 1u << static_cast<unsigned>(m); }
constexpr std::uint32_t kModuleBits = 1u << std::size(kAllRecomputeModules);

std::uint32_t bits_of(const std::vector<RecomputeModule>& modules) {
    std::uint32_t b = 0;
    for (const RecomputeModule m : modules) b |= bit(m);
    return b;
}

// The modules that free something on `model`, as Megatron-LM accepts them (mla_up_proj only
// with MLA: transformer_config.py:1969-1973 at d98e8a64; the MoE modules only where there are
// MoE layers, mlp only where there are dense ones; docs/cost-model.md "Module-level
// recomputation").
std::uint32_t applicable_modules(const ModelSpec& model) {
    std::uint32_t b = bit(RecomputeModule::CoreAttn) | bit(RecomputeModule::Layernorm);
    if (model.uses_mla) b |= bit(RecomputeModule::MlaUpProj);
    bool dense_layers = !model.is_moe();
    bool moe_layers = false;
    for (int i = 0; i < model.num_layers; ++i) (model.is_moe_block(i) ? moe_layers : dense_layers) = true;
    if (dense_layers) b |= bit(RecomputeModule::Mlp);
    if (moe_layers) {
        b |= bit(RecomputeModule::MoeAct) | bit(RecomputeModule::Moe);
        if (model.moe.num_shared_experts > 0) b |= bit(RecomputeModule::SharedExperts);
    }
    return b;
}

// Which knobs apply to a candidate (Tuning::applicable bits).
enum Applies : std::uint8_t {
    kTpOverlap = 1,
    kGradReduce = 2,
    kParamGather = 4,
    kDispatcher = 8,
    kA2a = 16,
    kModules = 32,
    kGraphs = 64,
};

// A data-parallel gradient reduction exists: dense gradients over dp × cp, experts' over
// t·c·d/(ep·etp) (docs/cost-model.md, "Gradients and optimizer").
bool has_dp_reduction(const Candidate& c, bool moe) {
    if (c.dp * c.cp > 1) return true;
    return moe && c.tp * c.cp * c.dp > c.ep * c.etp;
}

}  // namespace

std::vector<RecomputeModule> recompute_module_list(std::uint32_t bits) {
    std::vector<RecomputeModule> out;
    for (const RecomputeModule m : kAllRecomputeModules)
        if ((bits & bit(m)) != 0) out.push_back(m);
    return out;
}

void apply_tuning(const Tuning& t, const std::vector<RecomputeModule>& modules, ParallelConfig& p,
                  TrainingConfig& tr) {
    p.tp_comm_overlap = t.tp_comm_overlap;
    p.overlap_grad_reduce = t.overlap_grad_reduce;
    p.overlap_param_gather = t.overlap_grad_reduce && t.overlap_param_gather;
    p.moe_dispatcher = t.moe_dispatcher;
    p.moe_flex_backend = t.moe_flex_backend;
    p.moe_a2a_overlap = t.moe_a2a_overlap;
    tr.recompute_modules.assign(modules.begin(), modules.end());
    tr.cuda_graphs = t.cuda_graphs;
    // A module list is read only with per-layer graphs (full iteration captures everything,
    // none nothing): the layout's own list stays with per-layer, else it goes.
    if (tr.cuda_graphs != CudaGraphs::PerLayer) tr.cuda_graph_modules = GraphModules{};
}

std::string tuning_label(const Candidate& c) {
    const Tuning& t = c.tuning;
    std::string s;
    if ((t.applicable & kModules) != 0)
        s += ", modules " + (t.recompute_modules == 0 ? std::string("core_attn")
                                                       : join_recompute_modules(recompute_module_list(t.recompute_modules), "+"));
    if ((t.applicable & kTpOverlap) != 0) s += ", tp overlap " + to_string(t.tp_comm_overlap);
    if ((t.applicable & kGradReduce) != 0) {
        if (!t.overlap_grad_reduce)
            s += ", no dp overlap";
        else if ((t.applicable & kParamGather) != 0 && t.overlap_param_gather)
            s += ", dp overlap grad+param";
        else
            s += ", dp overlap grad";
    }
    if ((t.applicable & kDispatcher) != 0) {
        s += ", dispatcher " + to_string(t.moe_dispatcher);
        if (t.moe_dispatcher == MoeDispatcher::Flex) s += "/" + to_string(t.moe_flex_backend);
    }
    if ((t.applicable & kA2a) != 0) s += t.moe_a2a_overlap ? ", a2a overlap" : ", no a2a overlap";
    if ((t.applicable & kGraphs) != 0)
        s += t.cuda_graphs == CudaGraphs::None ? ", no cuda graphs" : ", cuda graphs " + to_string(t.cuda_graphs);
    return s;
}

Tuner::Tuner(const SearchOptions& o, const ModelSpec& model, std::size_t max_pp)
    : pins_(o.knobs), dtype_(o.dtype), mtp_layers_(model.mtp_layers), moe_(model.is_moe()) {
    if (pins_.recompute_modules)
        pinned_modules_ = *pins_.recompute_modules;
    else
        searched_modules_ = applicable_modules(model);
    lists_.reserve(kModuleBits);
    for (std::uint32_t b = 0; b < kModuleBits; ++b) lists_.push_back(recompute_module_list(b));
    trial_.stages.reserve(max_pp);
}

const std::vector<RecomputeModule>& Tuner::modules(std::uint32_t bits) const {
    return pins_.recompute_modules ? pinned_modules_ : lists_[bits];
}

int Tuner::tune(Candidate& c, const CostModel& cost, ParallelConfig& par, const Placement& pl, TrainingConfig& tr,
                Estimate& out, double must_beat_tokens_per_s) {
    int calls = 0;
    Tuning best;
    // Where a knob does not apply it keeps its pin or the layout's default (what validation
    // accepts: no TP overlap without SP, no all-to-all overlap where Megatron does not run it).
    const bool tp_applies = c.sequence_parallel && c.tp > 1;
    const bool dp_applies = has_dp_reduction(c, moe_);
    const bool gather_applies = dp_applies && (c.zero_stage == 1 || c.zero_stage == 2);
    const bool dispatch_applies = moe_ && c.ep > 1;
    const bool modules_apply = c.recompute == Recompute::Selective;
    // The capture values the candidate's rules allow (none always is).
    auto graphs_allowed = [&](CudaGraphs g, bool a2a_overlap) {
        return rules::per_layer_graphs_without_full_recompute(g, c.recompute) &&
               rules::per_layer_graphs_without_fsdp_a2a_overlap(g, c.zero_stage, a2a_overlap) &&
               rules::full_iteration_graphs_capturable(g, moe_, tr.moe_capacity_factor, tr.moe_rank_capacity_factor);
    };
    const bool graphs_apply =
        graphs_allowed(CudaGraphs::PerLayer, false) || graphs_allowed(CudaGraphs::FullIteration, false);
    const CudaGraphs graphs_pin = pins_.cuda_graphs.value_or(CudaGraphs::None);
    best.tp_comm_overlap = tp_applies ? pins_.tp_comm_overlap.value_or(TpOverlap::None) : TpOverlap::None;
    best.overlap_grad_reduce = pins_.overlap_grad_reduce.value_or(true);
    best.overlap_param_gather = best.overlap_grad_reduce && pins_.overlap_param_gather.value_or(true);
    best.moe_dispatcher = pins_.moe_dispatcher.value_or(MoeDispatcher::AllToAll);
    best.moe_flex_backend = pins_.moe_flex_backend.value_or(MoeFlexBackend::DeepEP);
    auto a2a_runs = [&](const Tuning& t) {
        return rules::moe_a2a_overlap_runs(c.ep, t.moe_dispatcher, c.pp, c.vpp, c.recompute, dtype_, mtp_layers_);
    };
    best.moe_a2a_overlap = pins_.moe_a2a_overlap.value_or(false) && a2a_runs(best);
    best.cuda_graphs = graphs_allowed(graphs_pin, best.moe_a2a_overlap) ? graphs_pin : CudaGraphs::None;
    // The least memory: every applicable module (only the modules change memory).
    if (modules_apply) best.recompute_modules = pins_.recompute_modules ? bits_of(pinned_modules_) : searched_modules_;
    best.applicable = static_cast<std::uint8_t>((tp_applies ? kTpOverlap : 0) | (dp_applies ? kGradReduce : 0) |
                                                (gather_applies ? kParamGather : 0) |
                                                (dispatch_applies ? kDispatcher : 0) | (modules_apply ? kModules : 0) |
                                                (graphs_apply ? kGraphs : 0));

    auto evaluate = [&](const Tuning& t, Estimate& e) {
        apply_tuning(t, modules_apply ? modules(t.recompute_modules) : lists_[0], par, tr);
        cost.estimate(par, pl, tr, e);
        ++calls;
    };
    evaluate(best, out);
    auto finish = [&] {
        if (a2a_runs(best)) best.applicable |= kA2a;
        c.tuning = best;
        apply_tuning(best, modules_apply ? modules(best.recompute_modules) : lists_[0], par, tr);
        return calls;
    };
    if (!out.fits) return finish();
    // No tuning runs faster than the kernels of the busiest rank less what the modules rerun
    // (the knobs hide communication, change the modules rerun, and slow compute only by
    // interference) — except the dispatcher, whose permutation passes are kernels too. When
    // even that bound cannot beat `must_beat_tokens_per_s` the candidate cannot make the
    // results: the rest of the tuning is skipped (results unchanged, fewer estimates).
    const bool dispatcher_searched = dispatch_applies && (!pins_.moe_dispatcher || !pins_.moe_flex_backend);
    const double floor_s = out.time.compute_s - out.time.recompute_s;
    if (!dispatcher_searched && must_beat_tokens_per_s > 0 && floor_s > 0 &&
        out.tokens_per_s * out.step_time_s / floor_s < must_beat_tokens_per_s) {
        return finish();
    }

    // Keeps `t` when it fits and is faster (or, with `or_equal`, no slower: within a relative
    // 1e-9, as a module whose layers are not on the busiest stage changes the step time only
    // by the rounding of the sums).
    auto consider = [&](const Tuning& t, bool or_equal) {
        evaluate(t, trial_);
        if (!trial_.fits) return;
        if (trial_.step_time_s < out.step_time_s ||
            (or_equal && trial_.step_time_s <= out.step_time_s * (1 + 1e-9))) {
            best = t;
            std::swap(out, trial_);
        }
    };
    // Recompute modules, steepest descent: each round costs dropping each module and keeps
    // the fastest drop that still fits (none slower: more modules never run faster, each
    // reruns work), until no drop fits. One module stays: none is `recompute none`, a
    // candidate of its own.
    if (modules_apply && !pins_.recompute_modules) {
        while (std::popcount(best.recompute_modules) > 1) {
            const Tuning from = best;
            for (const RecomputeModule m : kAllRecomputeModules) {
                if ((from.recompute_modules & bit(m)) == 0) continue;
                Tuning t = from;
                t.recompute_modules &= ~bit(m);
                // The first drop that fits is taken even when no faster; later ones must be faster.
                consider(t, best == from);
            }
            if (best == from) break;
        }
    }
    if (tp_applies && !pins_.tp_comm_overlap) {
        for (const TpOverlap v : {TpOverlap::Pipe, TpOverlap::Ring}) {
            Tuning t = best;
            t.tp_comm_overlap = v;
            consider(t, false);
        }
    }
    if (dp_applies && !pins_.overlap_grad_reduce && best.overlap_grad_reduce) {
        Tuning t = best;
        t.overlap_grad_reduce = false;
        t.overlap_param_gather = false;
        consider(t, false);
    }
    if (gather_applies && !pins_.overlap_param_gather && best.overlap_grad_reduce && best.overlap_param_gather) {
        Tuning t = best;
        t.overlap_param_gather = false;
        consider(t, false);
    }
    if (dispatch_applies && (!pins_.moe_dispatcher || (*pins_.moe_dispatcher == MoeDispatcher::Flex &&
                                                       !pins_.moe_flex_backend))) {
        constexpr std::pair<MoeDispatcher, MoeFlexBackend> kDispatch[] = {
            {MoeDispatcher::AllToAll, MoeFlexBackend::DeepEP},
            {MoeDispatcher::Flex, MoeFlexBackend::DeepEP},
            {MoeDispatcher::Flex, MoeFlexBackend::HybridEP},
            {MoeDispatcher::AllGather, MoeFlexBackend::DeepEP}};
        const Tuning start = best;
        for (const auto& [d, b] : kDispatch) {
            if (pins_.moe_dispatcher && d != *pins_.moe_dispatcher) continue;
            if (d == start.moe_dispatcher && (d != MoeDispatcher::Flex || b == start.moe_flex_backend)) continue;
            Tuning t = best;
            t.moe_dispatcher = d;
            t.moe_flex_backend = b;
            t.moe_a2a_overlap = t.moe_a2a_overlap && a2a_runs(t);
            consider(t, false);
        }
    }
    if (!pins_.moe_a2a_overlap && !best.moe_a2a_overlap && a2a_runs(best)) {
        Tuning t = best;
        t.moe_a2a_overlap = true;
        if (!graphs_allowed(t.cuda_graphs, true)) t.cuda_graphs = CudaGraphs::None;
        consider(t, false);
    }
    // CUDA graphs last: they remove launch time the GPU waits for, which the knobs above
    // change by changing the halves' GPU time. Per layer first; full iteration is kept only
    // when faster (the cost model charges both alike, so it wins only where per layer is
    // not allowed: full recomputation).
    if (graphs_apply && !pins_.cuda_graphs) {
        for (const CudaGraphs g : {CudaGraphs::PerLayer, CudaGraphs::FullIteration}) {
            if (!graphs_allowed(g, best.moe_a2a_overlap)) continue;
            Tuning t = best;
            t.cuda_graphs = g;
            consider(t, false);
        }
    }
    return finish();
}

}  // namespace meshwork::search
