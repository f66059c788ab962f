// What the flex dispatcher's NVLink kernels (DeepEP, HybridEP) deliver, as published: the
// kernels run on a fixed number of SMs and, on a fast NVLink, that SM budget rather than the
// link sets their rate (docs/cost-model.md, "Expert dispatch").
#pragma once

#include "core/layout/layout.h"

namespace meshwork::cost {

// Algorithm bandwidth of one rank: token bytes it receives (dispatch) or sends back
// (combine), its own copies included, per second of the call as Megatron makes it (the
// torch API, bf16 tokens: Megatron-LM 44151194 moe/fused_a2a.py:456 turns fp8 dispatch
// off for HybridEP).
struct FlexKernelRate {
    double dispatch_bytes_per_s = 0;
    double combine_bytes_per_s = 0;
};

// The rate of `backend` with `ranks` GPUs of the EP group in one NVLink domain (linear
// between the published rank counts, the nearest published one outside them), at the SM
// budget the published Megatron-Bridge runs give it. Measured on NVLink5 (900 GB/s per
// direction); a slower link binds first (moe_dispatch_cost takes the slower of the two).
FlexKernelRate flex_kernel_rate(MoeFlexBackend backend, int ranks);

}  // namespace meshwork::cost
