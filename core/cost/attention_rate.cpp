#include "core/cost/attention_rate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>

#include "core/cost/gemm_efficiency.h"
#include "core/model/model_spec.h"

namespace meshwork::cost {

namespace {

// The sequence lengths every published table below is measured at.
constexpr std::array<double, 6> kSeq{512, 1024, 2048, 4096, 8192, 16384};

// One published curve: TFLOP/s (counted FLOPs: 4·seq²·d·heads, halved when causal) at kSeq.
struct RateCurve {
    double head_dim;
    std::array<double, 6> tflops;
};

// --- Hopper: FlashAttention-3 on H100 80GB SXM5, BF16/FP16 --------------------------------
// Shah, Bikshandi, Zhang, Thakkar, Ramani, Dao, "FlashAttention-3: Fast and Accurate
// Attention with Asynchrony and Low-precision", arXiv 2407.08608 (2024), §4.1: batch × seqlen
// = 16k tokens, hidden 2048 (heads = 2048 / d). The "FlashAttention-3" bars of
// Figure 5 (forward; the same figure is github Dao-AILab/flash-attention
// assets/flash3_fp16_fwd.png, added at 7ef24848) and Figure 6 (backward, no causal mask).
//
// Figure 5(a), (c), (e): forward without causal mask.
constexpr std::array<RateCurve, 3> kHopperFwd{{
    {64, {333, 392, 460, 476, 496, 497}},
    {128, {467, 565, 625, 638, 646, 648}},
    // The 1k bar's label is hidden behind the legend in Figure 5(e): the entry is the mean of
    // its neighbours (482, 707), what interpolating the table would give.
    {256, {482, 594.5, 707, 736, 746, 756}},
}};
// Figure 5(b), (d), (f): forward with causal mask.
constexpr std::array<RateCurve, 3> kHopperFwdCausal{{
    {64, {197, 265, 371, 420, 460, 473}},
    {128, {292, 423, 521, 579, 602, 616}},
    {256, {286, 427, 537, 612, 628, 642}},
}};
// Figure 6: backward without causal mask (no head dim 256, no causal panel published).
constexpr std::array<RateCurve, 2> kHopperBwd{{
    {64, {272, 363, 422, 453, 472, 474}},
    {128, {316, 424, 501, 542, 559, 561}},
}};

// --- Ampere: FlashAttention-2 on A100 80GB SXM4, BF16/FP16 --------------------------------
// Dao, "FlashAttention-2", arXiv 2307.08691 (2023), the forward + backward figure with causal
// mask (github Dao-AILab/flash-attention assets/flash2_a100_fwd_bwd_benchmark.png, panels (c)
// and (d), "FlashAttention-2" bars). One figure for forward and backward together (FLOPs
// 3.5× the forward's, benchmarks/benchmark_flash_attention.py `flops`): both passes take it.
// The panels without causal mask are not needed (training is causal) and have hidden labels.
constexpr std::array<RateCurve, 2> kAmpereFwdBwdCausal{{
    {64, {88, 119, 140, 156, 165, 171}},
    {128, {99, 133, 155, 173, 182, 189}},
}};

struct Family {
    std::span<const RateCurve> fwd;         // no mask (may be empty)
    std::span<const RateCurve> fwd_causal;  // causal
    std::span<const RateCurve> bwd;         // no mask (may be empty: bwd = fwd)
};

Family family(const std::string& arch) {
    if (arch == "hopper") return {kHopperFwd, kHopperFwdCausal, kHopperBwd};
    if (arch == "ampere") return {{}, kAmpereFwdBwdCausal, {}};
    return {};
}

// Linear in log2(seq) between published lengths, held at the ends.
double at_seq(const std::array<double, 6>& t, double seq) {
    if (seq <= kSeq.front()) return t.front();
    if (seq >= kSeq.back()) return t.back();
    for (std::size_t i = 1; i < kSeq.size(); ++i) {
        if (seq > kSeq[i]) continue;
        const double f = std::log2(seq / kSeq[i - 1]) / std::log2(kSeq[i] / kSeq[i - 1]);
        return t[i - 1] + f * (t[i] - t[i - 1]);
    }
    return t.back();
}

// Linear in head dim between tabled curves, held at the ends; TFLOP/s → FLOP/s.
double at(std::span<const RateCurve> curves, double head_dim, double seq) {
    if (curves.empty()) return 0;
    if (head_dim <= curves.front().head_dim) return at_seq(curves.front().tflops, seq) * 1e12;
    if (head_dim >= curves.back().head_dim) return at_seq(curves.back().tflops, seq) * 1e12;
    for (std::size_t i = 1; i < curves.size(); ++i) {
        if (head_dim > curves[i].head_dim) continue;
        const RateCurve& a = curves[i - 1];
        const RateCurve& b = curves[i];
        const double f = (head_dim - a.head_dim) / (b.head_dim - a.head_dim);
        return (at_seq(a.tflops, seq) + f * (at_seq(b.tflops, seq) - at_seq(a.tflops, seq))) * 1e12;
    }
    return at_seq(curves.back().tflops, seq) * 1e12;
}

// Mean key blocks a query block iterates.
double key_blocks_per_query_block(const AttentionMask& mask, const AttentionTile& tile) {
    const double query_blocks = std::ceil(mask.seq / tile.block_m);
    return query_blocks > 0 ? executed_score_pairs(mask, tile) / (query_blocks * tile.block_m * tile.block_n) : 0;
}

}  // namespace

std::string attention_architecture(const std::string& gpu_kind) {
    const std::string arch = gpu_architecture(gpu_kind);
    if (arch == "hopper") return arch;
    if (gpu_kind.rfind("a100", 0) == 0) return "ampere";
    // Blackwell: no FlashAttention-4 / cuDNN table with head dim, length and mask was at hand
    // (docs/cost-model.md, "Attention rate…"); the cluster's efficiency.attention stays.
    return {};
}

double attention_table_peak_flops(const std::string& arch) {
    // resources/gpus/h100-sxm.json and a100-80gb.json, bf16 dense (the datasheets).
    if (arch == "hopper") return 9.894e14;
    if (arch == "ampere") return 3.12e14;
    return 0;
}

AttentionTile attention_tile(const std::string& arch, double d, bool local) {
    if (arch == "hopper") {
        // FlashAttention-3 hopper/tile_size.h:11-40 at 0251105a (tile_size_fwd_sm90, 16-bit,
        // causal or local mask, headdim_v = headdim): d ≤ 64 192×128; ≤ 96 192×(local 128,
        // else 144); ≤ 128 128×128; ≤ 192 128×(local 96, else 128); else 128×(local 64, else 80).
        if (d <= 64) return {192, 128};
        if (d <= 96) return {192, local ? 128 : 144};
        if (d <= 128) return {128, 128};
        if (d <= 192) return {128, local ? 96 : 128};
        return {128, local ? 64 : 80};
    }
    // FlashAttention-2 csrc/flash_attn/src/flash_fwd_launch_template.h at 0251105a, sm80, no
    // dropout: d = 64 128×128 (:210), d = 128 128×64 (:262), d = 192 128×64 (:286).
    if (d <= 64) return {128, 128};
    return {128, 64};
}

double executed_score_pairs(const AttentionMask& mask, const AttentionTile& tile) {
    const auto seq = static_cast<std::int64_t>(std::llround(std::max(0.0, mask.seq)));
    const std::int64_t bm = std::max(1, tile.block_m), bn = std::max(1, tile.block_n);
    const std::int64_t w = mask.window > 0 && mask.window < seq ? mask.window : 0;
    double pairs = 0;
    for (std::int64_t q0 = 0; q0 < seq; q0 += bm) {
        const std::int64_t q1 = std::min(q0 + bm, seq) - 1;  // last query row of the block
        std::int64_t k0 = 0;
        if (w > 0 && mask.chunked) {
            k0 = (q0 / w) * w;  // first key of the chunk of the block's first query
        } else if (w > 0) {
            k0 = std::max<std::int64_t>(0, q0 - w + 1);  // the first query's oldest key
        }
        const std::int64_t blocks = q1 / bn - k0 / bn + 1;
        pairs += static_cast<double>(blocks * bm * bn);
    }
    return pairs;
}

double counted_score_pairs(const AttentionMask& mask) {
    return mask.seq * causal_context_tokens(mask.seq, mask.window, mask.chunked);
}

AttentionRate tabled_attention_rate(const std::string& arch, double head_dim, double seq, bool causal) {
    const Family f = family(arch);
    if (f.fwd_causal.empty()) return {};
    AttentionRate r;
    const double fwd_causal = at(f.fwd_causal, head_dim, seq);
    if (f.fwd.empty()) {
        // One fwd+bwd figure (Ampere): both passes at it, causal only.
        r.fwd_flops_per_s = r.bwd_flops_per_s = fwd_causal;
        return r;
    }
    const double fwd = at(f.fwd, head_dim, seq);
    // The backward above the tabled head dims keeps the largest tabled dim's backward /
    // forward ratio.
    double bwd = at(f.bwd, head_dim, seq);
    if (head_dim > f.bwd.back().head_dim) {
        const double d = f.bwd.back().head_dim;
        bwd = fwd * at(f.bwd, d, seq) / at(f.fwd, d, seq);
    }
    r.fwd_flops_per_s = causal ? fwd_causal : fwd;
    // No causal backward is published: the backward loses to the mask what the forward does
    // at the same length and head dim (the same diagonal tiles, computed in full and masked,
    // and the same short key loops of the first query blocks).
    r.bwd_flops_per_s = causal ? bwd * fwd_causal / fwd : bwd;
    return r;
}

AttentionRate attention_rate(const std::string& arch, double head_dim, const AttentionMask& mask) {
    if (mask.seq <= 0) return {};
    const bool local = mask.window > 0 && mask.window < mask.seq;
    if (!local) return tabled_attention_rate(arch, head_dim, mask.seq, true);
    // Chunks are causal attention over the chunk, restarted.
    if (mask.chunked) return tabled_attention_rate(arch, head_dim, static_cast<double>(mask.window), true);
    // Sliding window: the tiles it computes, at the per-executed-pair rate of the causal kernel
    // (same tile) whose query blocks iterate as many key blocks on average: the published
    // causal length L with that mean (searched between the tabled lengths, held at the ends).
    const AttentionTile tile = attention_tile(arch, head_dim, true);
    const double blocks = key_blocks_per_query_block(mask, tile);
    auto causal_blocks = [&](double L) { return key_blocks_per_query_block({L, 0, false}, tile); };
    double L = kSeq.front();
    if (blocks >= causal_blocks(kSeq.back())) {
        L = kSeq.back();
    } else if (blocks > causal_blocks(kSeq.front())) {
        double lo = kSeq.front(), hi = kSeq.back();
        for (int i = 0; i < 40; ++i) {  // the mean grows with L: bisect
            const double mid = std::sqrt(lo * hi);
            (causal_blocks(mid) < blocks ? lo : hi) = mid;
        }
        L = std::sqrt(lo * hi);
    }
    const AttentionRate causal = tabled_attention_rate(arch, head_dim, L, true);
    const AttentionMask full{L, 0, false};
    // Counted → executed at L, executed → counted for the window.
    const double per_executed = counted_score_pairs(full) / executed_score_pairs(full, tile);
    const double useful = counted_score_pairs(mask) / executed_score_pairs(mask, tile);
    return {causal.fwd_flops_per_s / per_executed * useful, causal.bwd_flops_per_s / per_executed * useful};
}

}  // namespace meshwork::cost
