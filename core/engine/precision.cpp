#include "core/engine/precision.h"

#include "core/layout/layout.h"

namespace meshwork::engine {

Precision precision_of(const Layout& layout) {
    return layout.training.dtype == DType::Bf16 ? Precision::Bf16 : Precision::Fp32;
}

const char* to_string(Precision p) { return p == Precision::Bf16 ? "bf16" : "fp32"; }

CheckTolerance default_check_tolerance(Precision p) {
    if (p == Precision::Bf16) return {1e-3, 2e-2};
    return {1e-4, 1e-4};
}

void round_to_bf16(const float* src, float* dst, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) dst[i] = round_to_bf16(src[i]);
}

}  // namespace meshwork::engine
