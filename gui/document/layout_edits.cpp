#include "gui/document/layout_edits.h"

#include <algorithm>
#include <cstdlib>

namespace meshwork::gui {

namespace {
std::string blocks_text(const std::vector<int>& blocks) {
    if (blocks.size() == 1) return "block " + std::to_string(blocks.front());
    const auto [lo, hi] = std::minmax_element(blocks.begin(), blocks.end());
    return std::to_string(blocks.size()) + " blocks (" + std::to_string(*lo) + "–" +
           std::to_string(*hi) + ")";
}
}  // namespace

int chunk_of_block(const Layout& layout, int block) {
    const auto split = layout.stage_layers();
    int at = 0;
    for (std::size_t c = 0; c < split.size(); ++c) {
        if (block >= at && block < at + split[c]) return static_cast<int>(c);
        at += split[c];
    }
    return -1;
}

ProposedEdit move_blocks_to_stage(const Layout& layout, const std::vector<int>& blocks, int stage) {
    ProposedEdit edit{layout, "", ""};
    const int pp = layout.parallel.mesh.pp;
    std::vector<int> split = layout.stage_layers();
    if (blocks.empty()) {
        edit.refused = "nothing to move: drop transformer blocks";
        return edit;
    }
    if (split.empty()) {
        edit.refused = "the model has fewer layers than pipeline chunks";
        return edit;
    }
    if (stage < 0 || stage >= pp) {
        edit.refused = "no pipeline stage " + std::to_string(stage);
        return edit;
    }
    const auto [lo_it, hi_it] = std::minmax_element(blocks.begin(), blocks.end());
    const int lo = *lo_it, hi = *hi_it;
    if (lo < 0 || hi >= layout.model.num_layers) {
        edit.refused = "block " + std::to_string(lo < 0 ? lo : hi) + " is not a layer of " +
                       layout.model.name;
        return edit;
    }
    // The chunk of this stage closest to the dropped blocks.
    const auto first = layout.stage_first_layer();
    const int chunks = static_cast<int>(split.size());
    int target = -1;
    int best_distance = 0;
    for (int c = stage; c < chunks; c += pp) {
        const int begin = first[static_cast<std::size_t>(c)];
        const int end = begin + split[static_cast<std::size_t>(c)];  // exclusive
        const int distance = hi < begin ? begin - hi : (lo >= end ? lo - end + 1 : 0);
        if (target < 0 || distance < best_distance) {
            target = c;
            best_distance = distance;
        }
    }
    const auto t = static_cast<std::size_t>(target);
    const int begin = first[t];
    const int end = begin + split[t];
    edit.description = "Move " + blocks_text(blocks) + " to stage " + std::to_string(stage);
    if (lo >= begin && hi < end) {
        edit.refused = blocks_text(blocks) + " already on stage " + std::to_string(stage);
        return edit;
    }
    // Rebuild the boundaries: chunk `target` becomes [new_begin, new_end).
    std::vector<int> bounds(first.begin(), first.end());  // chunk starts
    bounds.push_back(layout.model.num_layers);
    const int new_begin = std::min(begin, lo);
    const int new_end = std::max(end, hi + 1);
    for (int c = 0; c <= chunks; ++c) {
        auto& b = bounds[static_cast<std::size_t>(c)];
        if (c <= target) b = std::min(b, new_begin);       // chunks before shrink from the right
        if (c > target) b = std::max(b, new_end);          // chunks after shrink from the left
    }
    bounds[t] = new_begin;
    for (int c = 0; c < chunks; ++c) {
        split[static_cast<std::size_t>(c)] =
            bounds[static_cast<std::size_t>(c) + 1] - bounds[static_cast<std::size_t>(c)];
    }
    edit.layout.placement.layers_per_stage = split;
    return edit;
}

ProposedEdit move_experts_to_ep_rank(const Layout& layout, const std::vector<int>& experts,
                                     int ep_rank) {
    ProposedEdit edit{layout, "", ""};
    if (!layout.model.is_moe()) {
        edit.refused = layout.model.name + " has no experts";
        return edit;
    }
    if (ep_rank < 0 || ep_rank >= layout.parallel.mesh.ep) {
        edit.refused = "no EP rank " + std::to_string(ep_rank);
        return edit;
    }
    if (experts.empty()) {
        edit.refused = "nothing to move: drop routed experts";
        return edit;
    }
    auto placed = layout.ep_experts();
    const auto r = static_cast<std::size_t>(ep_rank);
    bool moved = false;
    for (int e : experts) {
        if (std::find(placed[r].begin(), placed[r].end(), e) != placed[r].end()) continue;
        for (auto& list : placed) list.erase(std::remove(list.begin(), list.end(), e), list.end());
        placed[r].push_back(e);
        moved = true;
    }
    if (!moved) {
        edit.refused = (experts.size() == 1 ? "expert " + std::to_string(experts.front()) + " is"
                                            : std::string("these experts are")) +
                       " already on EP rank " + std::to_string(ep_rank);
        return edit;
    }
    std::sort(placed[r].begin(), placed[r].end());
    edit.layout.placement.experts_per_ep_rank = placed;
    edit.description = (experts.size() == 1 ? "Move expert " + std::to_string(experts.front())
                                            : "Move " + std::to_string(experts.size()) + " experts") +
                       " to EP rank " + std::to_string(ep_rank);
    return edit;
}

ProposedEdit set_mesh_axis(const Layout& layout, const std::string& axis, int value) {
    ProposedEdit edit{layout, "Set " + axis + " = " + std::to_string(value), ""};
    if (value < 1) {
        edit.refused = axis + " must be at least 1";
        return edit;
    }
    auto& m = edit.layout.parallel.mesh;
    int* slot = nullptr;
    if (axis == "tp") slot = &m.tp;
    else if (axis == "pp") slot = &m.pp;
    else if (axis == "cp") slot = &m.cp;
    else if (axis == "ep") slot = &m.ep;
    else if (axis == "etp") slot = &m.etp;
    else if (axis == "vpp") slot = &edit.layout.parallel.vpp;
    if (!slot) {
        edit.refused = "unknown axis " + axis;
        return edit;
    }
    if (*slot == value) {
        edit.refused = axis + " is already " + std::to_string(value);
        return edit;
    }
    *slot = value;
    const long long model_parallel = static_cast<long long>(m.tp) * m.pp * m.cp;
    if (layout.gpus % model_parallel != 0) {
        edit.refused = "tp×pp×cp = " + std::to_string(model_parallel) + " does not divide the " +
                       std::to_string(layout.gpus) + " GPUs";
        return edit;
    }
    m.dp = static_cast<int>(layout.gpus / model_parallel);
    auto& placement = edit.layout.placement;
    const auto chunks = static_cast<std::size_t>(m.pp) * static_cast<std::size_t>(edit.layout.parallel.vpp);
    if (!placement.layers_per_stage.empty() && placement.layers_per_stage.size() != chunks) {
        placement.layers_per_stage.clear();
    }
    if (!placement.experts_per_ep_rank.empty() &&
        placement.experts_per_ep_rank.size() != static_cast<std::size_t>(m.ep)) {
        placement.experts_per_ep_rank.clear();
    }
    // A virtual pipeline needs the interleaved schedule and the other way round.
    if (axis == "vpp") {
        if (value > 1) edit.layout.training.schedule = Schedule::Interleaved;
        else if (edit.layout.training.schedule == Schedule::Interleaved)
            edit.layout.training.schedule = Schedule::OneFOneB;
    }
    return edit;
}

ProposedEdit set_axis_order(const Layout& layout, const std::string& order) {
    ProposedEdit edit{layout, "Set rank order " + order, ""};
    if (layout.parallel.mesh.order == order) {
        edit.refused = "the order is already " + order;
        return edit;
    }
    edit.layout.parallel.mesh.order = order;
    return edit;
}

ProposedEdit set_sequence_parallel(const Layout& layout, bool on) {
    ProposedEdit edit{layout, std::string(on ? "Turn sequence parallelism on" : "Turn sequence parallelism off"), ""};
    if (layout.parallel.sequence_parallel == on) {
        edit.refused = std::string("sequence parallelism is already ") + (on ? "on" : "off");
        return edit;
    }
    edit.layout.parallel.sequence_parallel = on;
    if (!on) edit.layout.parallel.tp_comm_overlap = TpOverlap::None;
    return edit;
}

ProposedEdit set_tp_comm_overlap(const Layout& layout, TpOverlap overlap) {
    ProposedEdit edit{layout, "Set TP communication overlap " + to_string(overlap), ""};
    if (layout.parallel.tp_comm_overlap == overlap) {
        edit.refused = "TP communication overlap is already " + to_string(overlap);
        return edit;
    }
    edit.layout.parallel.tp_comm_overlap = overlap;
    return edit;
}

ProposedEdit set_dp_overlap(const Layout& layout, bool on) {
    ProposedEdit edit{layout, std::string(on ? "Overlap the data-parallel communication" : "Run the data-parallel communication after the backward"), ""};
    if (layout.parallel.overlap_grad_reduce == on && layout.parallel.overlap_param_gather == on) {
        edit.refused = std::string("the data-parallel overlap is already ") + (on ? "on" : "off");
        return edit;
    }
    edit.layout.parallel.overlap_grad_reduce = on;
    edit.layout.parallel.overlap_param_gather = on;
    return edit;
}

ProposedEdit set_moe_dispatch(const Layout& layout, MoeDispatcher dispatcher, MoeFlexBackend backend) {
    const std::string name = to_string(dispatcher) + (dispatcher == MoeDispatcher::Flex ? " (" + to_string(backend) + ")" : "");
    ProposedEdit edit{layout, "Set MoE dispatch to " + name, ""};
    auto& p = edit.layout.parallel;
    p.moe_dispatcher = dispatcher;
    if (dispatcher == MoeDispatcher::Flex) p.moe_flex_backend = backend;
    if (dispatcher == MoeDispatcher::AllGather) p.moe_a2a_overlap = false;
    if (p.moe_dispatcher == layout.parallel.moe_dispatcher && p.moe_flex_backend == layout.parallel.moe_flex_backend) {
        edit.refused = "MoE dispatch is already " + name;
    }
    return edit;
}

ProposedEdit set_moe_a2a_overlap(const Layout& layout, bool on) {
    ProposedEdit edit{layout, std::string(on ? "Overlap the MoE all-to-all" : "Run the MoE all-to-all exposed"), ""};
    if (layout.parallel.moe_a2a_overlap == on) {
        edit.refused = std::string("the MoE all-to-all overlap is already ") + (on ? "on" : "off");
        return edit;
    }
    edit.layout.parallel.moe_a2a_overlap = on;
    return edit;
}

}  // namespace meshwork::gui

namespace meshwork::gui {

ProposedEdit set_model(const Layout& layout, const ModelSpec& model, const std::string& model_ref) {
    ProposedEdit edit{layout, "Use model " + model.name, ""};
    edit.layout.model = model;
    edit.layout.model_ref = model_ref;
    edit.layout.placement = {};
    if (!model.is_moe()) {
        edit.layout.parallel.mesh.ep = 1;
        edit.layout.parallel.mesh.etp = 1;
    }
    return edit;
}

}  // namespace meshwork::gui
