#include "core/search/candidate.h"


namespace meshwork::search {

void apply_candidate(const Candidate& c, ParallelConfig& par, Placement& pl, TrainingConfig& tr) {
    static_cast<AxisSizes&>(par.mesh) = c;
    par.vpp = c.vpp;
    par.sequence_parallel = c.sequence_parallel;
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
    l.training.fsdp_fp32_shards = o.fp32_shards_at(l.training.zero_stage);
    apply_tuning(c.tuning,
                 l.training.recompute == Recompute::Selective ? recompute_module_list(c.tuning.recompute_modules)
                                                              : std::vector<RecomputeModule>{},
                 l.parallel, l.training);
    if (l.training.recompute == Recompute::Selective && c.tuning.recompute_modules == 0)
        l.training.recompute_modules = o.knobs.recompute_modules.value_or(std::vector<RecomputeModule>{});
    if (!l.model.is_moe()) {  // no MoE knob on a dense model: the layout's defaults
        const ParallelConfig defaults;
        l.parallel.moe_dispatcher = defaults.moe_dispatcher;
        l.parallel.moe_flex_backend = defaults.moe_flex_backend;
        l.parallel.moe_a2a_overlap = false;
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
    s += ", zero" + std::to_string(c.zero_stage);
    s += tuning_label(c);
    return s;
}

}  // namespace meshwork::search
