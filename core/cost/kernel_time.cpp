#include "core/cost/kernel_time.h"

#include <algorithm>

#include "core/cost/gemm_efficiency.h"
#include "core/cost/gemm_shape_factor.h"

namespace meshwork::cost {

KernelModel kernel_model(const ClusterSpec& c, DType dtype, Fp8Recipe recipe) {
    KernelModel k;
    // fp8 GEMMs run at the fp8 peak; fp8 training keeps activations in 16 bits.
    double peak = c.gpu.peak_flops(dtype);
    if (peak <= 0) peak = c.gpu.peak_flops(DType::Fp32);
    k.peak_flops_per_s = std::max(1.0, peak);
    k.gemm_efficiency = gemm_efficiency(c, dtype, recipe);
    k.gemm_half_dim = std::max(0.0, c.efficiency.gemm_half_dim);
    k.gemm_shape_table = has_gemm_shape_table(c.gpu.kind);
    // Fused attention runs in 16 bits even in fp8 training.
    double attention_peak = dtype == DType::Fp8 ? c.gpu.peak_flops(DType::Bf16) : peak;
    if (attention_peak <= 0) attention_peak = k.peak_flops_per_s;
    k.attention_flops_per_s = std::max(1.0, attention_peak * std::clamp(c.efficiency.attention, 1e-3, 1.0));
    k.memory_bytes_per_s =
        std::max(1.0, c.gpu.hbm_bandwidth_bytes_per_s * std::clamp(c.efficiency.memory, 1e-3, 1.0));
    k.element_bytes = dtype == DType::Fp32 || dtype == DType::Tf32 ? 4.0 : 2.0;
    return k;
}

double GemmShape::size() const { return std::min({m, n, k}); }

double gemm_s(const KernelModel& k, double m, double n, double kdim, double count) {
    if (m <= 0 || n <= 0 || kdim <= 0 || count <= 0) return 0;
    double eff = k.gemm_efficiency;
    if (k.gemm_shape_table) {
        eff *= gemm_shape_factor(m * count, n, kdim);
    } else {
        const double d = std::min({m, n, kdim});
        eff *= d / (d + k.gemm_half_dim);
    }
    const double flops = 2.0 * m * n * kdim * count;
    const double compute = flops / (k.peak_flops_per_s * eff);
    const double traffic = (m * kdim + kdim * n + m * n) * k.element_bytes * count;
    return std::max(compute, traffic / k.memory_bytes_per_s);
}

double memory_s(const KernelModel& k, double bytes) {
    return bytes <= 0 ? 0 : bytes / k.memory_bytes_per_s;
}

double fused_attention_s(const KernelModel& k, double flops) {
    return flops <= 0 ? 0 : flops / k.attention_flops_per_s;
}

}  // namespace meshwork::cost
