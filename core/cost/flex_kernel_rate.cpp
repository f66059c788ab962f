#include "core/cost/flex_kernel_rate.h"

#include <algorithm>
#include <array>
#include <span>

namespace meshwork::cost {

namespace {

// One published row: ranks in the NVLink domain, dispatch (bf16) and combine GB/s.
struct RateRow {
    int ranks;
    double dispatch_gb_s;
    double combine_gb_s;
};

// DeepEP's README for HybridEP (github deepseek-ai/DeepEP, branch hybrid-ep at 94a9f8f6,
// docs/README_Hybrid-EP.md:107-149, "GB200 Platform": 4,096 tokens of 7,168, top 8, random
// uniform routing, 8 local experts, "Torch API" columns, Dispatch (BF16) and Combine).
// Algorithm bandwidth there is the dispatched tokens a rank receives, its own included,
// times hidden × 2 bytes, over the call's time (tests/test_hybrid_ep.py:344-347 at 94a9f8f6).
//
// HybridEP at 32 SMs: Megatron-Bridge's performance scripts set moe_hybridep_num_sms = 32 for
// every HybridEP run (scripts/performance/utils/overrides.py:71-74 at 21d102f5e, applied by
// set_workload_base_configs, :241). README_Hybrid-EP.md:127, :129, :131, :133, :135.
constexpr std::array<RateRow, 5> kHybridEp32Sms{{
    {8, 545.71, 568.94},
    {16, 523.48, 521.55},
    {24, 507.32, 483.76},
    {32, 484.22, 464.54},
    {36, 479.02, 447.89},
}};

// DeepEP at Megatron's default 20 SMs (transformer_config.py:843 moe_deepep_num_sms = 20 at
// 44151194; the performance scripts leave it): the mean of the published 16- and 24-SM rows
// (README_Hybrid-EP.md:142-149). Its combine collapses beyond 8 ranks (DeepEP supports NVLink
// domains above 8 through a community patch); the GB200 DeepSeek-V3 guide (Megatron-LM
// b6bf017a, docs/discussions/deepseek-v3-gb200-optimization/deepseek-v3-gb200-optimization.md:108)
// measured the same at EP32: ~400 GB/s dispatch, ~190 GB/s combine at 24 SMs.
constexpr std::array<RateRow, 3> kDeepEp20Sms{{
    {8, (362.01 + 512.72) / 2.0, (310.21 + 425.95) / 2.0},
    {16, (328.80 + 442.47) / 2.0, (278.34 + 378.32) / 2.0},
    {24, (324.64 + 450.22) / 2.0, (126.53 + 163.62) / 2.0},
}};

FlexKernelRate interpolate(std::span<const RateRow> rows, int ranks) {
    auto rate = [](double d, double c) { return FlexKernelRate{d * 1e9, c * 1e9}; };
    if (ranks <= rows.front().ranks) return rate(rows.front().dispatch_gb_s, rows.front().combine_gb_s);
    if (ranks >= rows.back().ranks) return rate(rows.back().dispatch_gb_s, rows.back().combine_gb_s);
    for (std::size_t i = 1; i < rows.size(); ++i) {
        if (ranks > rows[i].ranks) continue;
        const RateRow& a = rows[i - 1];
        const RateRow& b = rows[i];
        const double f = static_cast<double>(ranks - a.ranks) / (b.ranks - a.ranks);
        return rate(a.dispatch_gb_s + f * (b.dispatch_gb_s - a.dispatch_gb_s),
                    a.combine_gb_s + f * (b.combine_gb_s - a.combine_gb_s));
    }
    return rate(rows.back().dispatch_gb_s, rows.back().combine_gb_s);
}

}  // namespace

FlexKernelRate flex_kernel_rate(MoeFlexBackend backend, int ranks) {
    return backend == MoeFlexBackend::HybridEP ? interpolate(kHybridEp32Sms, ranks)
                                               : interpolate(kDeepEp20Sms, ranks);
}

}  // namespace meshwork::cost
