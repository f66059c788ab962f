// Edits a person makes on the canvas and the axis editor, turned into a new Layout.
// Each returns the proposed layout and a short description for the undo history; whether
// the proposal is allowed is decided by validate_layout() in LayoutDocument::apply().
#pragma once

#include <string>
#include <vector>

#include "core/layout/layout.h"

namespace meshwork::gui {

struct ProposedEdit {
    Layout layout;
    std::string description;  // "Move block 20 to stage 1"
    std::string refused;      // non-empty when the edit cannot even be formed
    // Consecutive edits with the same key become one undo step (a spin box stepped, a
    // chooser walked with the arrow keys); empty: never merged.
    std::string merge_key = {};
};

// Moves the stage boundary so that the model chunk(s) of pipeline stage `stage` take the
// dropped transformer blocks: blocks left of the stage extend it to the left, blocks right
// of it extend it to the right. Chunks that would be left empty make the result invalid
// (validation says which). With vpp > 1 the chunk of `stage` nearest the blocks is used.
ProposedEdit move_blocks_to_stage(const Layout& layout, const std::vector<int>& blocks, int stage);

// Moves routed experts onto EP rank `ep_rank`, taking them from wherever they were.
ProposedEdit move_experts_to_ep_rank(const Layout& layout, const std::vector<int>& experts,
                                     int ep_rank);

// Sets one mesh axis ("tp", "pp", "cp", "ep", "etp", "vpp") keeping the world size: dp
// follows as gpus / (tp·pp·cp). Placements that no longer match the mesh go back to
// their defaults (even split, contiguous experts).
ProposedEdit set_mesh_axis(const Layout& layout, const std::string& axis, int value);

// Sets the rank order ("tp-cp-ep-dp-pp").
ProposedEdit set_axis_order(const Layout& layout, const std::string& order);

// Turns sequence parallelism on or off. Off also turns tiled TP communication overlap off:
// it needs SP (layout_rules.h tp_overlap_needs_sp), as a virtual pipeline needs its schedule.
ProposedEdit set_sequence_parallel(const Layout& layout, bool on);

// Sets parallel.tp_comm_overlap (none, pipe, ring); pipe and ring need SP with tp > 1, which
// validation says when they are missing.
ProposedEdit set_tp_comm_overlap(const Layout& layout, TpOverlap overlap);

// Turns the data-parallel overlaps on or off together: the gradient reduction per chunk
// beside the backward and the parameter gather beside the forwards (Megatron-LM's
// --overlap-grad-reduce --overlap-param-gather, which Megatron-Bridge sets as a pair).
ProposedEdit set_dp_overlap(const Layout& layout, bool on);

// Sets the MoE token dispatcher (parallel.moe_dispatcher) and, for flex, its library
// (moe_flex_backend). All-gather also turns the MoE all-to-all overlap off: it overlaps
// all-to-alls only (layout_rules.h moe_a2a_overlap_runs), as SP off turns the TP overlap off.
ProposedEdit set_moe_dispatch(const Layout& layout, MoeDispatcher dispatcher, MoeFlexBackend backend);
// Turns the MoE all-to-all overlap (parallel.moe_a2a_overlap) on or off; where Megatron-LM
// does not run it, validation names the reason.
ProposedEdit set_moe_a2a_overlap(const Layout& layout, bool on);

// The model chunk (index into stage_layers()) that holds transformer block `block`, or -1.
int chunk_of_block(const Layout& layout, int block);

}  // namespace meshwork::gui

namespace meshwork::gui {

// Replaces the model (a preset or a config.json): placements go back to their defaults and
// the expert axes to 1 when the new model has no experts.
ProposedEdit set_model(const Layout& layout, const ModelSpec& model, const std::string& model_ref);

}  // namespace meshwork::gui
