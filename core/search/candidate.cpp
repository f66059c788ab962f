#include "core/search/candidate.h"

#include "core/layout/layout_rules.h"

namespace meshwork::search {

void apply_candidate(const Candidate& c, ParallelConfig& par, Placement& pl, TrainingConfig& tr) {
    static_cast<AxisSizes&>(par.mesh) = c;
    par.vpp = c.vpp;
    par.sequence_parallel = c.sequence_parallel;
    par.tp_comm_overlap = c.tp_comm_overlap;
    write_layers_per_stage(c.split, c.pp * c.vpp, pl.layers_per_stage);
    tr.micro_batch_size = c.micro_batch_size;
    tr.schedule = c.schedule;
    tr.recompute = c.recompute;
    tr.recompute_num_layers = 0;
    tr.zero_stage = c.zero_stage;
}

Layout candidate_layout(const Candidate& c, const SearchRequest& request) {
    const SearchOptions& o = request.options;
    Layout l;
    l.name = request.model.name + "-" + std::to_string(o.gpus) + "gpus-search";
    l.description = "meshwork-cli search: " + candidate_label(c);
    l.model_ref = request.model_ref;
    l.model = request.model;
    l.cluster_ref = request.cluster_ref;
    l.cluster = request.cluster;
    l.gpus = o.gpus;
    l.parallel.mesh.order = o.order;
    l.training.global_batch_size = o.global_batch_size;
    l.training.seq_length = o.seq_length;
    l.training.dtype = o.dtype;
    l.training.grad_reduce_in_bf16 = o.grad_reduce_in_bf16;
    apply_candidate(c, l.parallel, l.placement, l.training);
    if (l.training.recompute == Recompute::Selective) l.training.recompute_modules = o.recompute_modules;
    if (l.model.is_moe()) {
        l.parallel.moe_dispatcher = o.moe_dispatcher;
        l.parallel.moe_flex_backend = o.moe_flex_backend;
        l.parallel.moe_a2a_overlap =
            o.moe_a2a_overlap && rules::moe_a2a_overlap_runs(c.ep, o.moe_dispatcher, c.pp, c.vpp, c.recompute,
                                                             o.dtype, l.model.mtp_layers);
    }
    return l;
}

std::string candidate_label(const Candidate& c) {
    std::string s = "tp" + std::to_string(c.tp) + " pp" + std::to_string(c.pp) + " dp" +
                    std::to_string(c.dp) + " cp" + std::to_string(c.cp);
    if (c.ep > 1 || c.etp > 1) s += " ep" + std::to_string(c.ep) + " etp" + std::to_string(c.etp);
    s += " | " + to_string(c.schedule);
    if (c.vpp > 1) s += " vpp" + std::to_string(c.vpp);
    s += " mbs" + std::to_string(c.micro_batch_size);
    if (!c.split.balanced()) {
        s += " split " + std::to_string(c.split.first) + "/" + std::to_string(c.split.middle) +
             "/" + std::to_string(c.split.last);
    }
    s += " | recompute " + to_string(c.recompute);
    if (c.sequence_parallel) s += ", sp";
    if (c.tp_comm_overlap != TpOverlap::None) s += ", tp overlap " + to_string(c.tp_comm_overlap);
    s += ", zero" + std::to_string(c.zero_stage);
    return s;
}

}  // namespace meshwork::search
