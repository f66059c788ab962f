// The attention rate by head dim, length and mask (core/cost/attention_rate.h): the published
// tables' interpolation, the tile counting of causal, chunked and sliding-window masks, the
// window's rate from the causal table, and the kernel model taking it where the GPU has a
// table (and the cluster's efficiency.attention where it has none).
#include <QtTest>

#include <cmath>
#include <tuple>

#include "core/cluster/cluster_spec.h"
#include "core/cost/attention_rate.h"
#include "core/cost/kernel_time.h"
#include "tests/core/cost/cost_test_util.h"

using namespace meshwork;
using namespace meshwork::cost;
using namespace meshwork::test;

class TestCostAttentionRate : public QObject {
    Q_OBJECT

  private slots:
    void architectures() {
        QCOMPARE(QString::fromStdString(attention_architecture("h100-sxm")), QString("hopper"));
        QCOMPARE(QString::fromStdString(attention_architecture("h200")), QString("hopper"));
        QCOMPARE(QString::fromStdString(attention_architecture("a100-80gb")), QString("ampere"));
        QCOMPARE(QString::fromStdString(attention_architecture("b200")), QString("blackwell"));
        QCOMPARE(QString::fromStdString(attention_architecture("gb200")), QString("blackwell"));
        QCOMPARE(QString::fromStdString(attention_architecture("gb300")), QString("blackwell-ultra"));
        QCOMPARE(QString::fromStdString(attention_architecture("b300")), QString("blackwell-ultra"));
        QVERIFY(attention_architecture("mi300x").empty());
        QVERIFY(attention_architecture("cpu").empty());
        QCOMPARE(tabled_attention_rate("", 128, 4096, true).fwd_flops_per_s, 0.0);
    }

    void tabled_points_and_interpolation() {
        // Published points come back exactly (FA3 Figure 5(d): 579 at 4k, head dim 128).
        const AttentionRate r = tabled_attention_rate("hopper", 128, 4096, true);
        QVERIFY(near(r.fwd_flops_per_s, 579e12));
        // Causal backward: Figure 6's 542 scaled by the forward's causal loss 579 / 638.
        QVERIFY(near(r.bwd_flops_per_s, 542e12 * 579.0 / 638.0));
        QVERIFY(near(tabled_attention_rate("hopper", 128, 4096, false).fwd_flops_per_s, 638e12));
        // Linear in head dim: 96 is halfway between 64 (371) and 128 (521) at 2k.
        QVERIFY(near(tabled_attention_rate("hopper", 96, 2048, true).fwd_flops_per_s, (371 + 521) / 2.0 * 1e12));
        // Linear in log2(seq): 2^11.5 halfway between 2k (521) and 4k (579).
        QVERIFY(near(tabled_attention_rate("hopper", 128, std::sqrt(2048.0 * 4096.0), true).fwd_flops_per_s,
                     (521 + 579) / 2.0 * 1e12));
        // Held at the ends in length and head dim.
        QVERIFY(near(tabled_attention_rate("hopper", 128, 256, true).fwd_flops_per_s, 292e12));
        QVERIFY(near(tabled_attention_rate("hopper", 128, 65536, true).fwd_flops_per_s, 616e12));
        QVERIFY(near(tabled_attention_rate("hopper", 32, 4096, true).fwd_flops_per_s, 420e12));
        QVERIFY(near(tabled_attention_rate("hopper", 512, 4096, true).fwd_flops_per_s, 612e12));
        // Above the backward's tabled head dims: head dim 128's backward / forward ratio.
        const AttentionRate d256 = tabled_attention_rate("hopper", 256, 4096, false);
        QVERIFY(near(d256.bwd_flops_per_s, 736e12 * 542.0 / 638.0));
        // Ampere: one forward + backward figure for both passes.
        const AttentionRate a = tabled_attention_rate("ampere", 64, 2048, true);
        QVERIFY(near(a.fwd_flops_per_s, 140e12));
        QVERIFY(near(a.bwd_flops_per_s, 140e12));
    }

    // Blackwell Ultra: the same run on GB300 comes back at its points, faster than GB200's
    // where Blackwell Ultra's doubled exponential rate shows (short lengths, the forward).
    void blackwell_ultra_table() {
        const AttentionRate r = tabled_attention_rate("blackwell-ultra", 128, 4096, true);
        QVERIFY(near(r.fwd_flops_per_s, 1703e12));
        QVERIFY(near(r.bwd_flops_per_s, 1248e12));
        QVERIFY(near(tabled_attention_rate("blackwell-ultra", 192, 8192, false).bwd_flops_per_s, 1301e12));
        QVERIFY(near(tabled_attention_rate("blackwell-ultra", 256, 32768, true).fwd_flops_per_s, 2096e12));
        for (double seq : {2048.0, 4096.0, 8192.0, 16384.0, 32768.0}) {
            QVERIFY(tabled_attention_rate("blackwell-ultra", 128, seq, true).fwd_flops_per_s >
                    tabled_attention_rate("blackwell", 128, seq, true).fwd_flops_per_s);
        }
        QVERIFY(near(attention_rate("blackwell-ultra", 64, {4096, 128, false}).fwd_flops_per_s, 167e12));
        QCOMPARE(attention_table_peak_flops("blackwell-ultra"), 2.5e15);
    }

    // Blackwell: cuDNN's GB200 table (cudnn-frontend 3929da2e, benchmark/sdpa_benchmark_training
    // results of 2026-04-24) comes back at its points, causal backward included.
    void blackwell_table() {
        const AttentionRate r = tabled_attention_rate("blackwell", 128, 4096, true);
        QVERIFY(near(r.fwd_flops_per_s, 1408e12));
        QVERIFY(near(r.bwd_flops_per_s, 1148e12));
        const AttentionRate n = tabled_attention_rate("blackwell", 128, 4096, false);
        QVERIFY(near(n.fwd_flops_per_s, 1599e12));
        QVERIFY(near(n.bwd_flops_per_s, 1350e12));
        QVERIFY(near(tabled_attention_rate("blackwell", 192, 8192, true).bwd_flops_per_s, 1193e12));
        // d 256: a forward only; its backward keeps d 192's backward / forward ratio.
        const AttentionRate d256 = tabled_attention_rate("blackwell", 256, 16384, true);
        QVERIFY(near(d256.fwd_flops_per_s, 1804e12));
        QVERIFY(near(d256.bwd_flops_per_s, 1804e12 * 1134.0 / 1678.0));
        // Held at the ends: d 64 at d 128, 512 tokens at 2k, 64k at 32k.
        QVERIFY(near(tabled_attention_rate("blackwell", 64, 4096, true).fwd_flops_per_s, 1408e12));
        QVERIFY(near(tabled_attention_rate("blackwell", 128, 512, true).fwd_flops_per_s, 1097e12));
        QVERIFY(near(tabled_attention_rate("blackwell", 128, 65536, true).bwd_flops_per_s, 1226e12));
        // The measured 128-key window comes back at its point (gpt_oss config, d 64).
        const AttentionRate w128 = attention_rate("blackwell", 64, {4096, 128, false});
        QVERIFY(near(w128.fwd_flops_per_s, 161e12));
        QVERIFY(near(w128.bwd_flops_per_s, 182e12));
        // Longer windows rise towards causal attention at the sequence, never above it.
        double last = w128.fwd_flops_per_s;
        for (std::int64_t w : {256, 512, 1024, 2048}) {
            const double x = attention_rate("blackwell", 64, {8192, w, false}).fwd_flops_per_s;
            QVERIFY(x > last && x < tabled_attention_rate("blackwell", 64, 8192, true).fwd_flops_per_s);
            last = x;
        }
        // Not fitted, compared: a 1,024-key window at 4k, d 64, measured by the same benchmark
        // with cuDNN 9.19 (results/gb200_919_only_cudnn/gpt_oss_20260226_175022.csv: 574
        // forward, 617 backward TFLOP/s). The rule, with d 64 held at d 128's causal rate,
        // is above both (printed; docs/cost-model.md quotes it).
        const AttentionRate w1k = attention_rate("blackwell", 64, {4096, 1024, false});
        qInfo("blackwell d64 window 1024 at 4k: forward %.0f (measured 574), backward %.0f (measured 617) TFLOP/s",
              w1k.fwd_flops_per_s / 1e12, w1k.bwd_flops_per_s / 1e12);
        QVERIFY(w1k.fwd_flops_per_s > 574e12 && w1k.fwd_flops_per_s < 1.3 * 574e12);
        QVERIFY(w1k.bwd_flops_per_s > 617e12 && w1k.bwd_flops_per_s < 1.3 * 617e12);
    }

    // Two independent Hopper tables agree: FlashAttention-3's H100 figures (the model's) against
    // cuDNN 9.19 on an H200 (same SMs and clocks; cudnn-frontend 3929da2e,
    // results/h200_919_only_cudnn/llama3.1_20260227_034703.csv, d 128, causal), within 15 %
    // (the largest difference: 2k backward, FA3 418 against cuDNN's 370, +13 %).
    void hopper_table_against_cudnn() {
        const std::tuple<double, double, double> cudnn_h200[] = {
            {2048, 484, 370}, {4096, 591, 474}, {8192, 644, 541}, {16384, 673, 579}};
        for (const auto& [seq, fwd, bwd] : cudnn_h200) {
            const AttentionRate r = tabled_attention_rate("hopper", 128, seq, true);
            qInfo("hopper d128 causal %.0f: FA3 %.0f / %.0f, cuDNN H200 %.0f / %.0f TFLOP/s", seq,
                  r.fwd_flops_per_s / 1e12, r.bwd_flops_per_s / 1e12, fwd, bwd);
            QVERIFY(std::abs(r.fwd_flops_per_s / (fwd * 1e12) - 1) < 0.15);
            QVERIFY(std::abs(r.bwd_flops_per_s / (bwd * 1e12) - 1) < 0.15);
        }
        // The tile rule for a window against cuDNN's H200 1,024-key window at 4k, d 64
        // (gpt_oss_20260227_034819.csv: 336 forward, 289 backward): printed, not asserted.
        const AttentionRate w = attention_rate("hopper", 64, {4096, 1024, false});
        qInfo("hopper d64 window 1024 at 4k: forward %.0f (cuDNN H200 336), backward %.0f (289) TFLOP/s",
              w.fwd_flops_per_s / 1e12, w.bwd_flops_per_s / 1e12);
    }

    // PyTorch's SDPA (torchtitan) runs FlashAttention-2's kernels on Hopper: the FA2 H100 table
    // (Dao-AILab/flash-attention assets/flash2_h100_fwd_bwd_benchmark.png, causal panels), one
    // forward + backward figure for both passes; on Blackwell and Ampere the same table as before.
    void sdpa_on_hopper_is_flash_attention_2() {
        QCOMPARE(QString::fromStdString(attention_architecture("h100-sxm", AttentionKernel::Sdpa)), QString("hopper-fa2"));
        QCOMPARE(QString::fromStdString(attention_architecture("b200", AttentionKernel::Sdpa)), QString("blackwell"));
        QCOMPARE(QString::fromStdString(attention_architecture("a100-80gb", AttentionKernel::Sdpa)), QString("ampere"));
        const AttentionRate fa2 = tabled_attention_rate("hopper-fa2", 128, 4096, true);
        QVERIFY(near(fa2.fwd_flops_per_s, 294e12) && near(fa2.bwd_flops_per_s, 294e12));
        QVERIFY(near(tabled_attention_rate("hopper-fa2", 64, 16384, true).fwd_flops_per_s, 284e12));
        // Below FlashAttention-3 at every tabled length (d128 causal).
        for (double s : {512.0, 2048.0, 8192.0, 16384.0}) {
            QVERIFY(tabled_attention_rate("hopper-fa2", 128, s, true).fwd_flops_per_s <
                    tabled_attention_rate("hopper", 128, s, true).fwd_flops_per_s);
        }
        // In the estimate: the same layout is slower with SDPA on an H100, unchanged on a B200.
        for (const char* cluster : {"dgx-h100", "dgx-b200"}) {
            const ClusterSpec c = load_cluster(cluster);
            const KernelModel fused = kernel_model(c, DType::Bf16, Fp8Recipe::Tensorwise, AttentionKernel::Fused);
            const KernelModel sdpa = kernel_model(c, DType::Bf16, Fp8Recipe::Tensorwise, AttentionKernel::Sdpa);
            const double f = fused_attention_times(fused, 1e12, 128, {8192, 0, false}).fwd_s;
            const double p = fused_attention_times(sdpa, 1e12, 128, {8192, 0, false}).fwd_s;
            if (std::string(cluster) == "dgx-h100") QVERIFY(p > 1.5 * f);
            else QCOMPARE(p, f);
        }
    }

    void tiles() {
        // FA3's sm90 forward tiles under a causal or local mask (hopper/tile_size.h).
        QCOMPARE(attention_tile("hopper", 64, true).block_m, 192);
        QCOMPARE(attention_tile("hopper", 64, true).block_n, 128);
        QCOMPARE(attention_tile("hopper", 128, true).block_n, 128);
        QCOMPARE(attention_tile("hopper", 256, true).block_n, 64);
        QCOMPARE(attention_tile("ampere", 128, false).block_n, 64);
    }

    void tile_counting() {
        const AttentionTile t{128, 128};
        const double tile = 128.0 * 128.0;
        // Causal over 512: query block i computes i + 1 key blocks, 1 + 2 + 3 + 4.
        QCOMPARE(executed_score_pairs({512, 0, false}, t), 10 * tile);
        QCOMPARE(counted_score_pairs({512, 0, false}), 512.0 * 256.0);
        // Window 128 over 1024: the first query block one key block, the other seven two
        // (the window's oldest key lies in the block before).
        QCOMPARE(executed_score_pairs({1024, 128, false}, t), 15 * tile);
        // Chunks of 256 over 1024: each chunk a causal triangle of 1 + 2 blocks.
        QCOMPARE(executed_score_pairs({1024, 256, true}, t), 12 * tile);
        // A window as long as the sequence is full causal attention.
        QCOMPARE(executed_score_pairs({512, 512, false}, t), 10 * tile);
        // Tiles taller than wide (FA3 head dim 64, 192 × 128), window 128 over 4096: 22 query
        // blocks; the first and the last (64 rows) need 2 key blocks, every other one 3 (its
        // 319 keys start mid-block).
        const AttentionTile wide{192, 128};
        QCOMPARE(executed_score_pairs({4096, 128, false}, wide), (2 + 20 * 3 + 2) * 192.0 * 128.0);
    }

    void sliding_window_rate() {
        // GPT-OSS's 128-token window at 4k, head dim 64: its query blocks iterate 2.9 key
        // blocks on average, fewer than causal attention over 512 does on average (9 / 3 = 3.0
        // at 512 with 192 × 128 tiles): the rate is the causal 512 point's per executed pair,
        // times the window's counted share of the pairs it executes.
        const AttentionTile tile = attention_tile("hopper", 64, true);
        const AttentionMask w{4096, 128, false};
        const AttentionMask c512{512, 0, false};
        const double per_executed_512 =
            197e12 * executed_score_pairs(c512, tile) / counted_score_pairs(c512);
        const double useful = counted_score_pairs(w) / executed_score_pairs(w, tile);
        const AttentionRate r = attention_rate("hopper", 64, w);
        QVERIFY(near(r.fwd_flops_per_s, per_executed_512 * useful, 1e-6));
        // Far below full causal attention at the same length.
        QVERIFY(r.fwd_flops_per_s < 0.4 * attention_rate("hopper", 64, {4096, 0, false}).fwd_flops_per_s);
        // A long window runs near causal attention at a length with the same key loop: between
        // the window's own length and the sequence's, and below the sequence's.
        const double w4k = attention_rate("hopper", 128, {16384, 4096, false}).fwd_flops_per_s;
        QVERIFY(w4k > tabled_attention_rate("hopper", 128, 2048, true).fwd_flops_per_s);
        QVERIFY(w4k < tabled_attention_rate("hopper", 128, 16384, true).fwd_flops_per_s);
        // The figures docs/cost-model.md quotes (printed, not asserted beyond the above).
        for (const auto& [name, d, mask] :
             {std::tuple{"hopper d64 window 128 at 4k", 64.0, w}, {"hopper d64 causal 4k", 64.0, AttentionMask{4096, 0, false}},
              {"hopper d128 causal 4k", 128.0, AttentionMask{4096, 0, false}},
              {"hopper d128 causal 8k", 128.0, AttentionMask{8192, 0, false}},
              {"hopper d128 window 4096 at 16k", 128.0, AttentionMask{16384, 4096, false}}}) {
            const AttentionRate x = attention_rate("hopper", d, mask);
            qInfo("%s: forward %.0f, backward %.0f TFLOP/s (counted)", name, x.fwd_flops_per_s / 1e12,
                  x.bwd_flops_per_s / 1e12);
        }
        // Chunks: the causal table at the chunk length.
        QVERIFY(near(attention_rate("hopper", 128, {8192, 1024, true}).fwd_flops_per_s, 423e12));
    }

    void kernel_model_takes_the_table() {
        ClusterSpec h100 = load_cluster("dgx-h100");
        h100.efficiency.attention = 0.5;
        const KernelModel k = kernel_model(h100, DType::Bf16);
        const double flops = 1e12;
        const AttentionTimes t = fused_attention_times(k, flops, 128, {4096, 0, false});
        QVERIFY(near(t.fwd_s, flops / 579e12));
        QVERIFY(near(t.bwd_s, 2.5 * flops / (542e12 * 579.0 / 638.0)));
        // Blackwell: GB200's table scaled to the B200's bf16 peak (2.25 of 2.5 PFLOP/s).
        const KernelModel b = kernel_model(load_cluster("dgx-b200"), DType::Bf16);
        const AttentionTimes tb = fused_attention_times(b, flops, 128, {4096, 0, false});
        QVERIFY(near(tb.fwd_s, flops / (1408e12 * 0.9)));
        QVERIFY(near(tb.bwd_s, 2.5 * flops / (1148e12 * 0.9)));
        // No table (AMD Instinct): the cluster's flat rate, backward 2.5× the forward.
        const KernelModel m = kernel_model(load_cluster("amd-mi300x"), DType::Bf16);
        const AttentionTimes tm = fused_attention_times(m, flops, 128, {4096, 0, false});
        QVERIFY(near(tm.fwd_s, flops / m.attention_flops_per_s));
        QVERIFY(near(tm.bwd_s, 2.5 * tm.fwd_s));
        QCOMPARE(fused_attention_times(k, 0, 128, {4096, 0, false}).fwd_s, 0.0);
    }
};

QTEST_GUILESS_MAIN(TestCostAttentionRate)
#include "tst_cost_attention_rate.moc"
