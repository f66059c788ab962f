// One spelling for layouts that mean the same thing, so that an imported layout can be
// compared with the one that was exported (import(export(L)) == canonical_layout(L)).
#pragma once

#include "core/layout/layout.h"

namespace meshwork {

// - an explicit layers_per_stage equal to balanced_stage_split() becomes empty;
// - an explicit experts_per_ep_rank equal to the contiguous default becomes empty;
// - full recompute of at least every layer of the largest chunk becomes "all" (0), and a
//   recompute_num_layers without full recompute becomes 0;
// - sequence parallelism without tensor parallelism (a no-op) becomes off;
// - with ZeRO-0 (no parameter gather) overlap_param_gather becomes overlap_grad_reduce.
Layout canonical_layout(Layout layout);

}  // namespace meshwork
