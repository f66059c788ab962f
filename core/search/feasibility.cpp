#include "core/search/feasibility.h"

namespace meshwork::search {

RuleContext rule_context(const ModelSpec& m, const SearchOptions& o) {
    RuleContext r;
    r.heads = m.num_heads;
    r.kv_heads = m.num_kv_heads;
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
    if (r.heads % tp != 0) return Reject::Tp;
    if (!r.uses_mla && r.kv_heads % tp != 0 && tp % r.kv_heads != 0) return Reject::Tp;
    if (r.has_dense_mlp && r.ffn_hidden % tp != 0) return Reject::Tp;
    return Reject::None;
}

Reject check_pipeline_depth(const RuleContext& r, int pp) {
    return pp > r.layers ? Reject::Pp : Reject::None;
}

Reject check_experts(const RuleContext& r, int tp, int cp, int dp, int ep, int etp) {
    if (!r.moe) {
        if (ep > 1) return Reject::Ep;
        if (etp > 1) return Reject::Etp;
        return Reject::None;
    }
    const long long fold = static_cast<long long>(tp) * cp * dp;
    if (fold % (static_cast<long long>(ep) * etp) != 0) return Reject::Ep;
    if (r.experts % ep != 0) return Reject::Ep;
    if (r.expert_ffn_hidden % etp != 0) return Reject::Etp;
    return Reject::None;
}

Reject check_sequence(const RuleContext& r, int tp, int cp, bool sp) {
    if (cp > 1 && r.seq_length % (2 * cp) != 0) return Reject::Cp;
    if (sp && tp > 1 && (r.seq_length / cp) % tp != 0) return Reject::SequenceParallel;
    return Reject::None;
}

Reject check_schedule(int pp, int vpp, Schedule schedule) {
    if (schedule == Schedule::Interleaved) {
        if (vpp < 2 || pp < 2) return Reject::Schedule;
    } else if (vpp > 1) {
        return Reject::Vpp;
    }
    return Reject::None;
}

Reject check_split(const RuleContext& r, int chunks, const StageSplit& s) {
    if (s.balanced()) return r.layers < chunks ? Reject::LayersPerStage : Reject::None;
    if (s.first < 1 || s.last < 1 || (chunks > 2 && s.middle < 1) || chunks < 2) {
        return Reject::LayersPerStage;
    }
    const long long sum =
        static_cast<long long>(s.first) + s.last + static_cast<long long>(chunks - 2) * s.middle;
    return sum != r.layers ? Reject::LayersPerStage : Reject::None;
}

Reject check_batch(const RuleContext& r, int dp, int pp, int mbs, Schedule schedule) {
    const long long per_step = static_cast<long long>(dp) * mbs;
    if (r.global_batch_size % per_step != 0) return Reject::GlobalBatch;
    if (schedule == Schedule::Interleaved && pp >= 2) {
        const long long m = r.global_batch_size / per_step;
        if (m > 0 && m % pp != 0) return Reject::GlobalBatch;
    }
    return Reject::None;
}

Reject check_zero(int pp, int zero_stage) {
    return zero_stage >= 2 && pp > 1 ? Reject::ZeroWithPipeline : Reject::None;
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
