// The size-dependent GEMM efficiency of the cost model, fitted to measured operations:
// the model times a GEMM of FLOPs F and size d = min(m, n, k) at
//     t = F / (peak · gemm · d / (d + gemm_half_dim))      (core/cost/kernel_time.h)
// i.e. peak · t / F = 1/gemm + (gemm_half_dim/gemm) · 1/d, a straight line in 1/d. The
// compute events of a CPU-engine trace name their operation ("block.3.attention.qkv.fwd",
// "block.3.mlp.bwd", "lm_head.fwd"), and with the layout that ran the cost model's own
// shapes (core/cost/gemm_shapes.h) give each operation's GEMMs; a weighted least-squares
// line through the operations gives both figures.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/layout/layout.h"
#include "profiler/store/trace_reader.h"

namespace meshwork::profiler {

struct GemmSizeFit {
    bool fitted = false;
    std::string reason;           // why not, when not fitted
    std::int64_t op_events = 0;   // compute events matched to the model's GEMMs
    std::int64_t unmatched = 0;   // compute events with FLOPs that matched no GEMM of the model
    std::int64_t left_out = 0;    // core attention and MoE operations (see below)
    int op_classes = 0;           // (operation, shape) classes the line is fitted through
    int sizes = 0;                // distinct effective sizes among them
    double min_size = 0, max_size = 0;  // effective d (FLOP-weighted harmonic mean per class)
    double gemm_efficiency = 0;   // the fitted Efficiency::gemm (asymptote)
    double gemm_half_dim = 0;     // the fitted Efficiency::gemm_half_dim
    double rms_error = 0;         // weighted relative rms of the fitted times over the classes
                                  // (median time of each class)
};

// Fits over the compute events of `measured` from step `first_step` on (the earlier ones
// are warm-up, warmup_steps.h; -1: every event). The peak is that of `dtype` on
// `layout.cluster` (the cost model's kernel model).
// Not fitted (reason says why) with fewer than two distinct sizes, when the line does not
// have a positive asymptote and a non-negative half size, or when it misses the operations
// by more than 25 % rms; the caller then keeps a single scale. Operations the model does not
// time as GEMMs alone are left out: core attention (fused, or unfused with its softmax),
// MoE routers and experts (their token counts vary with the routing).
GemmSizeFit fit_gemm_sizes(const TraceReader& measured, const Layout& layout, DType dtype,
                           int first_step);

nlohmann::json gemm_size_fit_to_json(const GemmSizeFit& fit);

}  // namespace meshwork::profiler
