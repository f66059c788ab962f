// The engine's numerics for a layout's training dtype (docs/engine.md, "bf16").
//
// Fp32: every tensor and every operation in fp32.
// Bf16: mixed precision as Megatron-LM runs it with --bf16, emulated where the hardware
// has no bf16: parameters and activations are bf16 where the model reads them as GEMM
// operands (every linear layer, attention's QKᵀ and PV, the LM head), the embedding rows and
// the RMSNorm weights are read as bf16; GEMMs accumulate in fp32 and write fp32; the master
// weights, the gradients (accumulated across micro-batches and reduced in fp32), the Adam
// moments, the residual stream and the element-wise math (norms, softmax, cross-entropy)
// stay fp32. The CPU backend rounds to bf16 (round to nearest even) where a bf16 tensor is
// read; the CUDA backend casts the GEMM operands to CUDA_R_16BF (CudaGemmMode::Bf16).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace meshwork {
struct Layout;
}

namespace meshwork::engine {

enum class Precision { Fp32, Bf16 };

// Bf16 for a bf16 layout; fp32 for every other dtype (fp32, tf32, and fp16/fp8, which the
// engine does not emulate).
[[nodiscard]] Precision precision_of(const Layout& layout);
[[nodiscard]] const char* to_string(Precision p);

// The --check tolerances (relative; reference_check.h) for a precision, derived in
// docs/engine.md ("bf16"): fp32 1e-4 for both; bf16 1e-3 for the losses and 2e-2 for the
// updated weights, which Adam's per-element normalisation makes the more sensitive.
struct CheckTolerance {
    double loss = 1e-4;
    double weights = 1e-4;
};
[[nodiscard]] CheckTolerance default_check_tolerance(Precision p);

// x rounded to the nearest bf16 value (ties to even), returned as a float; NaN stays NaN,
// ±inf stays ±inf, values beyond bf16's largest finite round to ±inf as a cast does.
[[nodiscard]] inline float round_to_bf16(float x) {
    std::uint32_t u = std::bit_cast<std::uint32_t>(x);
    if ((u & 0x7f800000u) == 0x7f800000u) return x;  // inf or NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return std::bit_cast<float>(u & 0xffff0000u);
}

// dst[i] = round_to_bf16(src[i]); dst may be src.
void round_to_bf16(const float* src, float* dst, std::size_t count);

}  // namespace meshwork::engine
