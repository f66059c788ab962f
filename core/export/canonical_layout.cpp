#include "core/export/canonical_layout.h"

#include <algorithm>

namespace meshwork {

Layout canonical_layout(Layout l) {
    const int chunks = l.parallel.mesh.pp * l.parallel.vpp;
    if (!l.placement.layers_per_stage.empty() &&
        l.placement.layers_per_stage == balanced_stage_split(l.model.num_layers, chunks)) {
        l.placement.layers_per_stage.clear();
    }
    if (!l.placement.experts_per_ep_rank.empty()) {
        const auto explicit_split = l.placement.experts_per_ep_rank;
        l.placement.experts_per_ep_rank.clear();
        if (l.ep_experts() != explicit_split) l.placement.experts_per_ep_rank = explicit_split;
    }
    auto& t = l.training;
    if (t.recompute != Recompute::Full) {
        t.recompute_num_layers = 0;
    } else if (t.recompute_num_layers > 0) {
        const auto split = l.stage_layers();
        const int largest = split.empty() ? 0 : *std::max_element(split.begin(), split.end());
        if (t.recompute_num_layers >= largest) t.recompute_num_layers = 0;
    }
    if (l.parallel.mesh.tp == 1) l.parallel.sequence_parallel = false;
    // ZeRO-0 has no parameter gather to overlap: the flag follows the reduction's.
    if (t.zero_stage == 0) l.parallel.overlap_param_gather = l.parallel.overlap_grad_reduce;
    // Without experts the dispatch settings have no meaning; Megatron's import reads the
    // absent flags as their defaults.
    if (!l.model.is_moe()) {
        l.parallel.moe_dispatcher = ParallelConfig{}.moe_dispatcher;
        l.parallel.moe_a2a_overlap = false;
    }
    // The fp8 recipe is read only with fp8 training (exports write it only then).
    if (t.dtype != DType::Fp8) t.fp8_recipe = Fp8Recipe::Tensorwise;
    if (l.parallel.moe_dispatcher != MoeDispatcher::Flex) l.parallel.moe_flex_backend = MoeFlexBackend::DeepEP;
    return l;
}

}  // namespace meshwork
