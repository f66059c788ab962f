// Time of one kernel on one GPU: GEMMs at a shape-dependent fraction of the dense peak
// (roofline against HBM traffic), memory-bound kernels at a fraction of HBM bandwidth,
// fused attention at its own fraction of peak. See docs/cost-model.md, "Compute".
#pragma once

#include <string>

#include "core/cluster/cluster_spec.h"
#include "core/cost/attention_rate.h"
#include "core/cost/gemm_shape_factor.h"
#include "core/layout/speed_knobs.h"

namespace meshwork::cost {

struct KernelModel {
    double peak_flops_per_s = 1;     // dense peak in the training dtype
    double gemm_efficiency = 0.7;    // gemm_efficiency(): the cluster's, or the kernel table's
    double gemm_half_dim = 64;       // Efficiency::gemm_half_dim
    // The GPU's per-shape GEMM table for the training dtype (gemm_shape_factor.h): it sets the
    // efficiency's fall-off with shape instead of gemm_half_dim (None: the curve).
    GemmShapeTable gemm_shape_table = GemmShapeTable::None;
    // Fused attention without a published table for the GPU (and the Mamba / DeltaNet scans):
    // bf16 peak × Efficiency::attention.
    double attention_flops_per_s = 1;
    // The GPU's published attention table (attention_rate.h; empty: none) and its bf16 peak
    // over the peak of the GPU the table was measured on (same SMs at other clocks or power).
    std::string attention_arch;
    double attention_peak_scale = 1;
    double memory_bytes_per_s = 1;   // HBM bandwidth × Efficiency::memory
    double element_bytes = 2;        // bytes of one activation element in the training dtype
    // An fp8 operand's column-wise copy (the backward's) is a physical transpose, not the
    // row-wise bytes: every GPU but Blackwell (fp8_cast.h).
    bool fp8_transposed_copy = true;
};

// `recipe` is the layout's fp8 recipe (read only for fp8): the GEMM efficiency is the
// cluster's stated one or the kernel table's for the GPU and precision (gemm_efficiency.h).
KernelModel kernel_model(const ClusterSpec& cluster, DType dtype, Fp8Recipe recipe = Fp8Recipe::Tensorwise,
                         AttentionKernel attention = AttentionKernel::Fused);

// A GEMM (m × k)·(k × n) repeated `count` times; count 0 = no such GEMM. `together`: how many
// of the `count` run side by side (0: all of them, a batched call; Transformer Engine's
// grouped experts: its compute streams, kTeGroupedGemmStreams in gemm_shapes.h).
struct GemmShape {
    double m = 0, n = 0, k = 0, count = 0, together = 0;

    [[nodiscard]] bool present() const { return m > 0 && n > 0 && k > 0 && count > 0; }
    [[nodiscard]] double flops() const { return present() ? 2.0 * m * n * k * count : 0.0; }
    // The size the efficiency curve is taken at: d = min(m, n, k).
    [[nodiscard]] double size() const;
};

// A GEMM of shape (m × k)·(k × n) repeated `count` times (batched or grouped), FLOPs
// 2·m·n·k·count, `together` of them at once (0: all). Efficiency = gemm ×
// gemm_shape_factor(table, m, n, k, together) on a GPU with a
// per-shape table, else gemm · d / (d + gemm_half_dim) with d = min(m, n, k); the time is
// never below the HBM traffic of its operands.
double gemm_s(const KernelModel& k, double m, double n, double kdim, double count = 1, double together = 0);
inline double gemm_s(const KernelModel& k, const GemmShape& g) {
    return g.present() ? gemm_s(k, g.m, g.n, g.k, g.count, g.together) : 0.0;
}
// The backward of a GEMM Y = X·W of shape (m × k)·(k × n), each product at its own shape: the
// input gradient dX = dY·Wᵀ, (m × n)·(n × k), and the weight gradient dW = Xᵀ·dY,
// (k × m)·(m × n), whose inner dimension is the forward's rows (the tokens: per expert for
// grouped experts). Same FLOPs as two forwards; the shape factor of each may differ.
double gemm_dgrad_s(const KernelModel& k, const GemmShape& g);
double gemm_wgrad_s(const KernelModel& k, const GemmShape& g);
inline double gemm_bwd_s(const KernelModel& k, const GemmShape& g) { return gemm_dgrad_s(k, g) + gemm_wgrad_s(k, g); }
// A memory-bound kernel that reads and writes `bytes` in total.
double memory_s(const KernelModel& k, double bytes);
// Fused attention doing `flops` FLOPs at the flat rate (attention_flops_per_s).
double fused_attention_s(const KernelModel& k, double flops);

// Fused softmax attention, forward and backward (2.5× the forward FLOPs), for `flops_fwd`
// counted forward FLOPs under `mask` at `head_dim`: the published table's rate where the GPU
// has one (attention_rate.h), else the flat rate.
struct AttentionTimes {
    double fwd_s = 0, bwd_s = 0;
};
AttentionTimes fused_attention_times(const KernelModel& k, double flops_fwd, double head_dim, const AttentionMask& mask);

}  // namespace meshwork::cost
