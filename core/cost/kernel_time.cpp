#include "core/cost/kernel_time.h"

#include <algorithm>

#include "core/cost/gemm_efficiency.h"
#include "core/cost/gemm_shape_factor.h"

namespace meshwork::cost {

KernelModel kernel_model(const ClusterSpec& c, DType dtype, Fp8Recipe recipe, AttentionKernel attention) {
    KernelModel k;
    // fp8 (fp4) GEMMs run at the fp8 (fp4) peak; such training keeps activations in 16 bits.
    double peak = c.gpu.peak_flops(dtype);
    if (peak <= 0) peak = c.gpu.peak_flops(DType::Fp32);
    k.peak_flops_per_s = std::max(1.0, peak);
    k.gemm_efficiency = gemm_efficiency(c, dtype, recipe);
    k.gemm_half_dim = std::max(0.0, c.efficiency.gemm_half_dim);
    k.gemm_shape_table = gemm_shape_table(c.gpu.kind, dtype);
    // Fused attention runs in 16 bits even in fp8 and fp4 training.
    double attention_peak = quantized_gemms(dtype) ? c.gpu.peak_flops(DType::Bf16) : peak;
    if (attention_peak <= 0) attention_peak = k.peak_flops_per_s;
    k.attention_flops_per_s = std::max(1.0, attention_peak * std::clamp(c.efficiency.attention, 1e-3, 1.0));
    k.attention_arch = attention_architecture(c.gpu.kind, attention);
    if (!k.attention_arch.empty()) {
        const double bf16 = c.gpu.peak_flops(DType::Bf16);
        k.attention_peak_scale = bf16 > 0 ? bf16 / attention_table_peak_flops(k.attention_arch) : 1.0;
    }
    k.memory_bytes_per_s =
        std::max(1.0, c.gpu.hbm_bandwidth_bytes_per_s * std::clamp(c.efficiency.memory, 1e-3, 1.0));
    k.element_bytes = dtype == DType::Fp32 || dtype == DType::Tf32 ? 4.0 : 2.0;
    k.fp8_transposed_copy = gpu_architecture(c.gpu.kind) != "blackwell";
    return k;
}

double GemmShape::size() const { return std::min({m, n, k}); }

double gemm_s(const KernelModel& k, double m, double n, double kdim, double count, double together) {
    if (m <= 0 || n <= 0 || kdim <= 0 || count <= 0) return 0;
    double eff = k.gemm_efficiency;
    if (k.gemm_shape_table != GemmShapeTable::None) {
        eff *= gemm_shape_factor(k.gemm_shape_table, m, n, kdim, together > 0 ? std::min(together, count) : count);
    } else {
        const double d = std::min({m, n, kdim});
        eff *= d / (d + k.gemm_half_dim);
    }
    const double flops = 2.0 * m * n * kdim * count;
    const double compute = flops / (k.peak_flops_per_s * eff);
    const double traffic = (m * kdim + kdim * n + m * n) * k.element_bytes * count;
    return std::max(compute, traffic / k.memory_bytes_per_s);
}

double gemm_dgrad_s(const KernelModel& k, const GemmShape& g) {
    return g.present() ? gemm_s(k, g.m, g.k, g.n, g.count, g.together) : 0.0;
}

double gemm_wgrad_s(const KernelModel& k, const GemmShape& g) {
    return g.present() ? gemm_s(k, g.k, g.n, g.m, g.count, g.together) : 0.0;
}

double memory_s(const KernelModel& k, double bytes) {
    return bytes <= 0 ? 0 : bytes / k.memory_bytes_per_s;
}

double fused_attention_s(const KernelModel& k, double flops) {
    return flops <= 0 ? 0 : flops / k.attention_flops_per_s;
}

AttentionTimes fused_attention_times(const KernelModel& k, double flops_fwd, double head_dim,
                                     const AttentionMask& mask) {
    // FlashAttention-2's backward: five matrix products against the forward's two.
    constexpr double kBwdFlopsPerFwd = 2.5;
    if (flops_fwd <= 0) return {};
    if (!k.attention_arch.empty()) {
        const AttentionRate r = attention_rate(k.attention_arch, head_dim, mask);
        if (r.fwd_flops_per_s > 0 && r.bwd_flops_per_s > 0) {
            return {flops_fwd / (r.fwd_flops_per_s * k.attention_peak_scale),
                    kBwdFlopsPerFwd * flops_fwd / (r.bwd_flops_per_s * k.attention_peak_scale)};
        }
    }
    const double fwd = fused_attention_s(k, flops_fwd);
    return {fwd, kBwdFlopsPerFwd * fwd};
}

}  // namespace meshwork::cost
