#include "core/cost/attention_rate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>

#include "core/cost/gemm_efficiency.h"
#include "core/model/model_spec.h"

namespace meshwork::cost {

namespace {

// Lengths of a published table (at most kMaxLengths, ascending).
constexpr std::size_t kMaxLengths = 6;
using Lengths = std::array<double, kMaxLengths>;

// One published curve: TFLOP/s in counted FLOPs (2·heads·(d_qk + d_v) per query and key
// attended: 4·seq²·d·heads without a mask, halved when causal) at its table's lengths.
struct RateCurve {
    double head_dim;
    std::array<double, kMaxLengths> tflops;
};

// --- Hopper: FlashAttention-3 on H100 80GB SXM5, BF16/FP16 --------------------------------
// Shah, Bikshandi, Zhang, Thakkar, Ramani, Dao, "FlashAttention-3: Fast and Accurate
// Attention with Asynchrony and Low-precision", arXiv 2407.08608 (2024), §4.1: batch × seqlen
// = 16k tokens, hidden 2048 (heads = 2048 / d). The "FlashAttention-3" bars of
// Figure 5 (forward; the same figure is github Dao-AILab/flash-attention
// assets/flash3_fp16_fwd.png, added at 7ef24848) and Figure 6 (backward, no causal mask).
constexpr Lengths kFlashAttentionSeq{512, 1024, 2048, 4096, 8192, 16384};
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

// --- Hopper, FlashAttention-2 (PyTorch's flash backend): H100 80GB SXM5, BF16/FP16 --------
// github Dao-AILab/flash-attention assets/flash2_h100_fwd_bwd_benchmark.png (at 0251105a),
// "Attention forward + backward speed (H100 80GB SXM5)", panels (c) and (d), the
// "FlashAttention-2" bars: one forward + backward figure, as the A100 one above.
constexpr std::array<RateCurve, 2> kHopperFa2FwdBwdCausal{{
    {64, {141, 192, 232, 257, 273, 284}},
    {128, {163, 221, 265, 294, 308, 328}},
}};

// --- Blackwell: cuDNN SDPA on GB200, BF16 -------------------------------------------------
// NVIDIA cudnn-frontend's training benchmark (benchmark/sdpa_benchmark_training, results at
// 3929da2e, run 2026-04-24: cudnn-frontend 1.21.1, cuDNN 9.22.0, "NVIDIA GB200", median of 10
// iterations, non-deterministic backward), the CSVs results/<config>/gb200/*.csv: `tflops`
// counts 2·batch·heads·pairs·(d_qk + d_v) forward and 2·…·(3·d_qk + 2·d_v) backward with
// pairs = s(s+1)/2 under `top_left` (causal) and s² without a mask
// (benchmark_single_sdpa.py:1147-1191), the cost model's convention. Configs: llama3.1
// (64 query, 8 KV heads, d 128, batch 2), dsv3 (128 heads, d_qk 192, d_v 128: MLA, keyed at
// 192 as the cost model keys MLA), qwen35 (32 query, 2 KV heads, d 256, batch 1, forward only).
// No full-attention row at d 64 (held at 128, as every table holds its ends).
// Five lengths: the arrays' sixth entries are unused (family() gives the table a 5-long span).
constexpr Lengths kCudnnSeq{2048, 4096, 8192, 16384, 32768};
constexpr std::array<RateCurve, 2> kBlackwellFwd{{
    {128, {1433, 1599, 1771, 1697, 1634}},
    {192, {1492, 1666, 1759, 1812, 1584}},
}};
constexpr std::array<RateCurve, 3> kBlackwellFwdCausal{{
    {128, {1097, 1408, 1574, 1708, 1622}},
    {192, {1072, 1406, 1585, 1678, 1743}},
    {256, {1126, 1441, 1708, 1804, 1734}},
}};
constexpr std::array<RateCurve, 2> kBlackwellBwd{{
    {128, {1124, 1350, 1404, 1374, 1262}},
    {192, {1048, 1175, 1125, 1088, 1086}},
}};
constexpr std::array<RateCurve, 2> kBlackwellBwdCausal{{
    {128, {885, 1148, 1332, 1328, 1226}},
    {192, {846, 1057, 1193, 1134, 1076}},
}};
// The gpt_oss config: a 128-key sliding window (`top_left`, sliding_window_size 128; pairs
// W(W+1)/2 + (s − W)·W), 128 query and 128 KV heads of d 64, batch 2.
constexpr double kBlackwellWindowKeys = 128;
constexpr RateCurve kBlackwellWindowFwd{64, {153, 161, 165, 167, 104}};
constexpr RateCurve kBlackwellWindowBwd{64, {176, 182, 187, 188, 186}};

// --- Blackwell Ultra: cuDNN SDPA on GB300, BF16 -------------------------------------------
// The same benchmark, the same run (results at 3929da2e, 2026-04-24, cudnn-frontend 1.21.1,
// cuDNN 9.22.0), on "NVIDIA GB300": results/{llama3.1,dsv3,qwen35,gpt_oss}/gb300/*_20260424_*.csv,
// the same configs. Blackwell Ultra doubles the SFU's exponential rate; against the GB200
// figures above the kernels gain 1.03-1.26x, most at short lengths and in the forward.
constexpr std::array<RateCurve, 2> kBlackwellUltraFwd{{
    {128, {1805, 1900, 2017, 2014, 1836}},
    {192, {1770, 1937, 2021, 2032, 1917}},
}};
constexpr std::array<RateCurve, 3> kBlackwellUltraFwdCausal{{
    {128, {1373, 1703, 1856, 1915, 1953}},
    {192, {1285, 1590, 1825, 1967, 1991}},
    {256, {1307, 1743, 1965, 2063, 2096}},
}};
constexpr std::array<RateCurve, 2> kBlackwellUltraBwd{{
    {128, {1213, 1429, 1531, 1536, 1427}},
    {192, {1117, 1267, 1301, 1254, 1246}},
}};
constexpr std::array<RateCurve, 2> kBlackwellUltraBwdCausal{{
    {128, {967, 1248, 1435, 1507, 1490}},
    {192, {914, 1143, 1291, 1302, 1289}},
}};
constexpr RateCurve kBlackwellUltraWindowFwd{64, {160, 167, 172, 173, 108}};
constexpr RateCurve kBlackwellUltraWindowBwd{64, {184, 191, 198, 200, 199}};

struct Family {
    std::span<const double> seq;             // the table's lengths
    std::span<const RateCurve> fwd;          // no mask (may be empty)
    std::span<const RateCurve> fwd_causal;   // causal
    std::span<const RateCurve> bwd;          // no mask (may be empty: bwd = fwd)
    std::span<const RateCurve> bwd_causal;   // causal (empty: derived from the no-mask backward)
    // A measured sliding window (window 0: none; the tile rule of attention_rate instead).
    double window_keys = 0;
    const RateCurve* window_fwd = nullptr;
    const RateCurve* window_bwd = nullptr;
};

Family family(const std::string& arch) {
    if (arch == "hopper") return {std::span(kFlashAttentionSeq), kHopperFwd, kHopperFwdCausal, kHopperBwd, {}};
    if (arch == "ampere") return {std::span(kFlashAttentionSeq), {}, kAmpereFwdBwdCausal, {}, {}};
    if (arch == "hopper-fa2") return {std::span(kFlashAttentionSeq), {}, kHopperFa2FwdBwdCausal, {}, {}};
    if (arch == "blackwell") {
        return {std::span(kCudnnSeq.data(), 5), kBlackwellFwd, kBlackwellFwdCausal, kBlackwellBwd,
                kBlackwellBwdCausal, kBlackwellWindowKeys, &kBlackwellWindowFwd, &kBlackwellWindowBwd};
    }
    if (arch == "blackwell-ultra") {
        return {std::span(kCudnnSeq.data(), 5), kBlackwellUltraFwd, kBlackwellUltraFwdCausal, kBlackwellUltraBwd,
                kBlackwellUltraBwdCausal, kBlackwellWindowKeys, &kBlackwellUltraWindowFwd, &kBlackwellUltraWindowBwd};
    }
    return {};
}

// Linear in log2(seq) between the table's lengths, held at the ends.
double at_seq(std::span<const double> lengths, const std::array<double, kMaxLengths>& t, double seq) {
    const std::size_t n = lengths.size();
    if (seq <= lengths.front()) return t.front();
    if (seq >= lengths.back()) return t[n - 1];
    for (std::size_t i = 1; i < n; ++i) {
        if (seq > lengths[i]) continue;
        const double f = std::log2(seq / lengths[i - 1]) / std::log2(lengths[i] / lengths[i - 1]);
        return t[i - 1] + f * (t[i] - t[i - 1]);
    }
    return t[n - 1];
}

// Linear in head dim between tabled curves, held at the ends; TFLOP/s → FLOP/s.
double at(std::span<const double> lengths, std::span<const RateCurve> curves, double head_dim, double seq) {
    if (curves.empty()) return 0;
    auto rate = [&](const RateCurve& c) { return at_seq(lengths, c.tflops, seq); };
    if (head_dim <= curves.front().head_dim) return rate(curves.front()) * 1e12;
    if (head_dim >= curves.back().head_dim) return rate(curves.back()) * 1e12;
    for (std::size_t i = 1; i < curves.size(); ++i) {
        if (head_dim > curves[i].head_dim) continue;
        const RateCurve& a = curves[i - 1];
        const RateCurve& b = curves[i];
        const double f = (head_dim - a.head_dim) / (b.head_dim - a.head_dim);
        return (rate(a) + f * (rate(b) - rate(a))) * 1e12;
    }
    return rate(curves.back()) * 1e12;
}

// A backward curve at `head_dim`; above its largest tabled dim, that dim's backward / forward
// ratio times the forward at `head_dim`.
double backward_at(std::span<const double> lengths, std::span<const RateCurve> bwd,
                   std::span<const RateCurve> fwd, double head_dim, double seq) {
    if (head_dim <= bwd.back().head_dim) return at(lengths, bwd, head_dim, seq);
    const double d = bwd.back().head_dim;
    return at(lengths, fwd, head_dim, seq) * at(lengths, bwd, d, seq) / at(lengths, fwd, d, seq);
}

// Mean key blocks a query block iterates.
double key_blocks_per_query_block(const AttentionMask& mask, const AttentionTile& tile) {
    const double query_blocks = std::ceil(mask.seq / tile.block_m);
    return query_blocks > 0 ? executed_score_pairs(mask, tile) / (query_blocks * tile.block_m * tile.block_n) : 0;
}

}  // namespace

std::string attention_architecture(const std::string& gpu_kind, AttentionKernel kernel) {
    const std::string arch = gpu_architecture(gpu_kind);
    // PyTorch's SDPA runs FlashAttention-2's kernels on Hopper (layout.h, AttentionKernel).
    if (arch == "hopper" && kernel == AttentionKernel::Sdpa) return "hopper-fa2";
    // Hopper: FlashAttention-3's table; Blackwell: cuDNN's (Transformer Engine's fused
    // attention backend there; FlashAttention-3 is Hopper-only).
    // Blackwell Ultra (B300, GB300): cuDNN's own GB300 table.
    if (arch == "hopper" || arch == "blackwell") return gpu_table_architecture(gpu_kind);
    if (gpu_kind.rfind("a100", 0) == 0) return "ampere";
    return {};
}

double attention_table_peak_flops(const std::string& arch) {
    // resources/gpus/h100-sxm.json, a100-80gb.json and gb200.json, bf16 dense (the datasheets).
    if (arch == "hopper" || arch == "hopper-fa2") return 9.894e14;
    if (arch == "ampere") return 3.12e14;
    if (arch == "blackwell") return 2.5e15;
    if (arch == "blackwell-ultra") return 2.5e15;  // resources/gpus/gb300.json, bf16 dense
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
    const double fwd_causal = at(f.seq, f.fwd_causal, head_dim, seq);
    if (f.fwd.empty()) {
        // One fwd+bwd figure (Ampere): both passes at it, causal only.
        r.fwd_flops_per_s = r.bwd_flops_per_s = fwd_causal;
        return r;
    }
    // The no-mask forward is tabled to a smaller dim than the causal one on Blackwell: above
    // it, the causal forward's growth with the dim carries it.
    double fwd = at(f.seq, f.fwd, head_dim, seq);
    if (head_dim > f.fwd.back().head_dim) {
        const double d = f.fwd.back().head_dim;
        fwd = at(f.seq, f.fwd, d, seq) * fwd_causal / at(f.seq, f.fwd_causal, d, seq);
    }
    r.fwd_flops_per_s = causal ? fwd_causal : fwd;
    if (!f.bwd_causal.empty()) {
        r.bwd_flops_per_s = causal ? backward_at(f.seq, f.bwd_causal, f.fwd_causal, head_dim, seq)
                                   : backward_at(f.seq, f.bwd, f.fwd, head_dim, seq);
        return r;
    }
    // No causal backward is published: the backward loses to the mask what the forward does
    // at the same length and head dim (the same diagonal tiles, computed in full and masked,
    // and the same short key loops of the first query blocks).
    const double bwd = backward_at(f.seq, f.bwd, f.fwd, head_dim, seq);
    r.bwd_flops_per_s = causal ? bwd * fwd_causal / fwd : bwd;
    return r;
}

AttentionRate attention_rate(const std::string& arch, double head_dim, const AttentionMask& mask) {
    if (mask.seq <= 0) return {};
    const bool local = mask.window > 0 && mask.window < mask.seq;
    if (!local) return tabled_attention_rate(arch, head_dim, mask.seq, true);
    // Chunks are causal attention over the chunk, restarted.
    if (mask.chunked) return tabled_attention_rate(arch, head_dim, static_cast<double>(mask.window), true);
    const Family f = family(arch);
    if (f.window_keys > 0) {
        // A measured window (Blackwell): each query block pays a fixed part (loading its
        // queries, the softmax epilogue, the output) and a part per key, so that the rate over
        // W keys is W / (a + W / r_full), with r_full the causal table's at the sequence and a
        // set by the measured window W0's rate r0: a = W0 / r0 − W0 / r_full. At W0 it is the
        // measurement; long windows tend to causal attention. Head dims held at the measured one.
        const AttentionRate full = tabled_attention_rate(arch, head_dim, mask.seq, true);
        const double w = static_cast<double>(mask.window), w0 = f.window_keys;
        auto rate = [&](const RateCurve* measured, double r_full) {
            const double r0 = at_seq(f.seq, measured->tflops, mask.seq) * 1e12;
            if (r0 <= 0 || r_full <= 0) return 0.0;
            const double fixed = std::max(0.0, w0 / r0 - w0 / r_full);
            return w / (fixed + w / r_full);
        };
        return {rate(f.window_fwd, full.fwd_flops_per_s), rate(f.window_bwd, full.bwd_flops_per_s)};
    }
    // Sliding window: the tiles it computes, at the per-executed-pair rate of the causal kernel
    // (same tile) whose query blocks iterate as many key blocks on average: the published
    // causal length L with that mean (searched between the tabled lengths, held at the ends).
    const AttentionTile tile = attention_tile(arch, head_dim, true);
    const double blocks = key_blocks_per_query_block(mask, tile);
    auto causal_blocks = [&](double L) { return key_blocks_per_query_block({L, 0, false}, tile); };
    const double shortest = f.seq.front(), longest = f.seq.back();
    double L = shortest;
    if (blocks >= causal_blocks(longest)) {
        L = longest;
    } else if (blocks > causal_blocks(shortest)) {
        double lo = shortest, hi = longest;
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
