#include "core/search/feasibility.h"

#include "core/layout/layout_rules.h"

namespace meshwork::search {

RuleContext rule_context(const ModelSpec& m, const SearchOptions& o) {
    RuleContext r;
    r.heads = m.num_heads;
    r.kv_heads = m.num_kv_heads;
    r.global_kv_heads = m.global_attention.num_kv_heads;
    r.uses_mla = m.uses_mla;
    r.has_dense_mlp = m.num_moe_blocks() < m.num_layers;
    r.ffn_hidden = m.ffn_hidden_size;
    r.layers = m.num_layers;
    r.moe = m.is_moe();
    r.experts = m.moe.num_experts;
    r.expert_ffn_hidden = m.moe.expert_ffn_hidden;
    r.seq_length = o.seq_length;
    r.global_batch_size = o.global_batch_size;
    return r;
}

Reject check_tensor(const RuleContext& r, int tp) {
    if (!rules::tp_divides_heads(r.heads, tp)) return Reject::Tp;
    if (!rules::tp_fits_kv_heads(r.kv_heads, tp, r.uses_mla)) return Reject::Tp;
    if (r.global_kv_heads > 0 && !rules::tp_fits_kv_heads(r.global_kv_heads, tp, r.uses_mla)) return Reject::Tp;
    if (!rules::tp_divides_mlp(r.ffn_hidden, tp, r.has_dense_mlp)) return Reject::Tp;
    return Reject::None;
}

Reject check_pipeline_depth(const RuleContext& r, int pp) {
    return rules::pp_within_layers(pp, r.layers) ? Reject::None : Reject::Pp;
}

Reject check_experts(const RuleContext& r, int tp, int cp, int dp, int ep, int etp) {
    if (!rules::expert_axis_needs_experts(r.moe, ep)) return Reject::Ep;
    if (!rules::expert_axis_needs_experts(r.moe, etp)) return Reject::Etp;
    if (!r.moe) return Reject::None;
    if (!rules::experts_fold(tp, cp, dp, ep, etp)) return Reject::Ep;
    if (!rules::ep_divides_experts(r.experts, ep)) return Reject::Ep;
    if (!rules::etp_divides_expert_mlp(r.expert_ffn_hidden, etp)) return Reject::Etp;
    return Reject::None;
}

Reject check_sequence(const RuleContext& r, int tp, int cp, bool sp) {
    if (!rules::cp_balances_sequence(r.seq_length, cp)) return Reject::Cp;
    if (!rules::sp_divides_sequence(r.seq_length, cp, tp, sp)) return Reject::SequenceParallel;
    return Reject::None;
}

Reject check_schedule(int pp, int vpp, Schedule schedule) {
    if (!rules::interleaved_has_chunks(schedule, pp, vpp)) return Reject::Schedule;
    if (!rules::vpp_needs_interleaved(schedule, vpp)) return Reject::Vpp;
    return Reject::None;
}

Reject check_split(const RuleContext& r, int chunks, const StageSplit& s) {
    if (s.balanced()) return r.layers < chunks ? Reject::LayersPerStage : Reject::None;
    if (chunks < 2 || !rules::chunk_holds_enough(s.first, true) || !rules::chunk_holds_enough(s.last, true) ||
        (chunks > 2 && !rules::chunk_holds_enough(s.middle, false))) {
        return Reject::LayersPerStage;
    }
    const long long sum =
        static_cast<long long>(s.first) + s.last + static_cast<long long>(chunks - 2) * s.middle;
    return sum != r.layers ? Reject::LayersPerStage : Reject::None;
}

Reject check_batch(const RuleContext& r, int dp, int pp, int mbs, Schedule schedule) {
    if (!rules::batch_divides(r.global_batch_size, dp, mbs)) return Reject::GlobalBatch;
    const long long micro_batches = r.global_batch_size / (static_cast<long long>(dp) * mbs);
    if (!rules::interleaved_micro_batches(schedule, pp, micro_batches)) return Reject::GlobalBatch;
    return Reject::None;
}

Reject check_zero(int pp, int zero_stage) {
    return rules::zero_allows_pipeline(zero_stage, pp) ? Reject::None : Reject::ZeroWithPipeline;
}

Reject first_violation(const RuleContext& r, const Candidate& c) {
    for (Reject v : {check_tensor(r, c.tp), check_pipeline_depth(r, c.pp),
                     check_experts(r, c.tp, c.cp, c.dp, c.ep, c.etp),
                     check_sequence(r, c.tp, c.cp, c.sequence_parallel),
                     check_schedule(c.pp, c.vpp, c.schedule), check_split(r, c.pp * c.vpp, c.split),
                     check_batch(r, c.dp, c.pp, c.micro_batch_size, c.schedule),
                     check_zero(c.pp, c.zero_stage)}) {
        if (v != Reject::None) return v;
    }
    return Reject::None;
}

}  // namespace meshwork::search
