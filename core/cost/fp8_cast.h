// The fp8 casts a recipe adds to a dense GEMM beyond per-tensor scaling's (docs/cost-model.md,
// "fp8 recipes: GEMM rate and cast overhead"). Per-tensor casts are inside the fitted GEMM
// efficiency (gemm_efficiency.cpp, kSustained); a recipe whose casts move more bytes pays the
// difference as memory-bound passes.
//
// torchao's float8 roofline (pytorch/ao 36027d82 torchao/testing/training/roofline_utils.py)
// counts the casts of each GEMM operand (input, weight, output gradient; bf16 in, fp8 out)
// over forward and backward, without fusion into a neighbouring op:
//   tensorwise (:146-175): weight 2n + 3n + 3n = 8n bytes, input / grad_output 2n + 4n = 6n;
//   rowwise (:176-211): weight 3n + 4n + 3n = 10n, input / grad_output 5n + 3n = 8n
// (n the operand's elements): rowwise moves 2 bytes per element more for every operand, a
// bf16 copy transposed for the backward's column-wise scales, which per-row scaling cannot
// derive from the forward's fp8 copy.
#pragma once

#include "core/cost/kernel_time.h"
#include "core/layout/speed_knobs.h"

namespace meshwork::cost {

// Extra bytes per element of every GEMM operand, per forward + backward, over tensorwise.
[[nodiscard]] double fp8_extra_cast_bytes_per_element(Fp8Recipe recipe);

// Extra cast bytes of one GEMM (its three operands: m×k input, k×n weight, m×n output
// gradient, `count` times), per forward + backward; 0 for tensorwise and the recipes whose
// scaling Transformer Engine fuses (blockwise, mxfp8: inside their tables' rates).
[[nodiscard]] double fp8_extra_cast_bytes(const GemmShape& g, Fp8Recipe recipe);

}  // namespace meshwork::cost
