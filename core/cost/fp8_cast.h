// The fp8 casts ("quantization") of the GEMM operands, priced per recipe as memory-bound
// passes (docs/cost-model.md, "fp8 casts"). The GEMM efficiency (gemm_efficiency.h) times the
// kernel alone, as the kernel tables do; what Transformer Engine does around it each step is
// priced here, so a precision's efficiency no longer has to absorb its own casts.
//
// Per element of the 16-bit tensor a cast quantizes (Transformer Engine d0067d0d):
// - current scaling (`tensorwise`) reads it twice, once for the amax and once to scale and
//   cast ("Quantization is a memory-bound operation that requires reading the tensor twice",
//   docs/features/low_precision_training/fp8_current_scaling/fp8_current_scaling.rst:71-76);
//   delayed scaling takes its scale from the amax history and reads it once; block and MXFP8
//   scales are computed inside the cast's own tile, one read;
// - it writes one fp8 byte per copy: the forward's row-wise copy and the backward's
//   column-wise one. On Hopper the column-wise copy is a physical transpose, a second byte; on
//   Blackwell per-tensor scaling's two usages share one layout (same file, :89-104); MXFP8's
//   1×32 and 32×1 block scales give two different copies on every GPU;
// - the norm before QKV and FC1 (LayerNormLinear) quantizes in the same kernel with delayed
//   scaling (FULLY_FUSED) and computes the amax in the norm with current scaling, leaving one
//   read and the writes (FUSED_NORM_AMAX_FP8); MXFP8 and block scaling quantize after it
//   (pytorch/csrc/extensions/normalization.cpp:105-119, :196-204);
// - with sequence parallelism the gathered operands (QKV's and FC1's inputs, the output
//   gradients of the projection and FC2) are cast on the rank's shard and gathered in fp8; on
//   Hopper the gathered row-wise copy is then transposed (fp8_current_scaling.rst:173-180);
// - weights are cast once a step and cached over its micro-batches (Megatron-LM d98e8a64,
//   extensions/transformer_engine.py:1338-1345 with schedules.py:496-497).
// torchao's row-wise recipe moves 2 bytes per element more for every operand (a bf16 copy
// transposed for the backward's column-wise scales: pytorch/ao 36027d82
// torchao/testing/training/roofline_utils.py:146-211, rowwise 10n / 8n against tensorwise 8n
// / 6n).
//
// NVFP4 (fp4 training, Transformer Engine's NVFP4BlockScaling, d0067d0d
// transformer_engine/common/recipe/__init__.py:489-521): a per-tensor fp32 scale from the amax
// and an E4M3 scale per 16 values; the row-wise copy and the column-wise one (a random Hadamard
// transform of inputs and gradients first) are both made from the 16-bit tensor. With the
// transform (the recipe's default) one pass computes both amaxes and one fused kernel writes
// both copies (pytorch/csrc/quantizer.cpp:2629-2644, :2699-2712), and the norm before QKV and
// FC1 leaves the cast to them (normalization.cpp:119-125, UNFUSED): two reads, and per copy
// half a byte and a sixteenth of a byte of scale. Weights (16×16 block scales) are cast the
// same way, once a step.
//
// Checked against Transformer Engine's own measurement of these casts (its GEMM benchmark's
// "autocast" less "pre-quantized" times, docs/examples/gemm_profiling/gemm_profiling.rst:
// 243-296 on H200 NVL and :64-148 on B300; docs/cost-model.md, "fp8 casts").
#pragma once

#include "core/cost/gemm_shapes.h"
#include "core/layout/speed_knobs.h"

namespace meshwork::cost {

enum class Fp8CastInput {
    NormOutput,  // QKV's and FC1's inputs, quantized by the norm before them
    Standalone,  // every other operand: attention output, activations, gradients, weights
};

// Bytes one cast moves per element of the 16-bit tensor it quantizes, producing the copies
// the forward and backward GEMMs read. `transposed_copy`: the backward's column-wise copy is a
// physical transpose (Hopper).
[[nodiscard]] double fp8_cast_bytes_per_element(Fp8Recipe recipe, bool transposed_copy, Fp8CastInput input);
// The same for an NVFP4 cast (any operand: no norm fusion, no transpose).
[[nodiscard]] double nvfp4_cast_bytes_per_element();

struct Fp8CastBytes {
    double attention_fwd = 0, attention_bwd = 0;  // QKV and the output projection
    double mlp_fwd = 0, mlp_bwd = 0;              // FC1, FC2, the routed experts
};

struct Fp8CastContext {
    Fp8Recipe recipe = Fp8Recipe::Tensorwise;
    bool transposed_copy = true;  // KernelModel::fp8_transposed_copy
    double sp_shards = 1;         // tp with sequence parallelism, else 1
    bool norm_feeds_fc1 = true;   // a dense MLP (an MoE block's norm feeds its router and experts)
    double micro_batches = 1;     // a step's micro-batches on the rank (weights cast once a step)
    bool nvfp4 = false;           // fp4 training: NVFP4 casts (`recipe` unread)
};

// Per micro-batch on one rank: the casts of the block's fp8 (or NVFP4) GEMMs (QKV, projection, FC1, FC2
// and the routed experts; the router runs in higher precision): each GEMM's input in the
// forward, its output gradient in the backward, its weight once a step.
[[nodiscard]] Fp8CastBytes fp8_cast_bytes(const BlockGemms& g, const Fp8CastContext& x);

}  // namespace meshwork::cost
