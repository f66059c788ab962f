// A validation issue said in words for the window: what it is about ("Stage 2 (0 layers)",
// "Global batch") instead of its field path ("placement.layers_per_stage[2]",
// "training.global_batch_size"), which stays for tooltips (the path is what to look for in
// the layout JSON). The message itself is validation's (core/layout/layout_validate.cpp):
// one owner of every rule's wording.
#pragma once

#include <QString>

#include "core/common/error.h"
#include "core/layout/layout.h"

namespace meshwork::gui {

// What `field` of `layout` is, in words: "Stage 2 (0 layers)" (with vpp > 1 "Chunk 5
// (stage 1) (0 layers)"), "EP rank 3 (0 experts)", "TP", "Global batch"; for a field this
// table does not know, its last part with spaces ("recompute_num_layers" -> "Recompute num
// layers").
[[nodiscard]] QString issue_subject(const std::string& field, const Layout& layout);

// The reason an edit to `after` is refused, in words: "stage 2 would hold 0 layers: a model
// chunk must hold at least one layer (…)"; "Global batch: 500 is not a multiple of …".
[[nodiscard]] QString refusal_in_words(const InputIssue& issue, const Layout& after);

}  // namespace meshwork::gui
