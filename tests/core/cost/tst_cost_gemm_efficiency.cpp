// The GEMM efficiency by GPU and precision (core/cost/gemm_efficiency.h) and the host and
// launch cost of a layer pass (core/cost/launch_cost.h): the table's lookups, a stated
// efficiency winning over the table, the layout knobs that select them (training.fp8_recipe,
// training.cuda_graphs) in the JSON and the flags, and what each does to an estimate.
#include <QtTest>

#include <cmath>
#include <string>

#include "core/common/error.h"
#include "core/cost/cost_model.h"
#include "core/cost/gemm_efficiency.h"
#include "core/cost/gemm_shape_factor.h"
#include "core/cost/gemm_shapes.h"
#include "core/cost/kernel_time.h"
#include "core/cost/launch_cost.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_overrides.h"
#include "core/model/model_spec.h"
#include "tests/core/cost/cost_test_util.h"

using namespace meshwork;
using namespace meshwork::cost;
using namespace meshwork::test;

namespace {

double tabled(const std::string& gpu, GemmPrecision p) {
    const auto e = tabled_gemm_efficiency(gpu, p);
    return e ? *e : -1.0;
}

// A small dense model whose layers are far shorter than their launches on an H100.
ModelSpec small_dense() {
    ModelSpec m = megatron_gpt(256, 4, 4);
    m.hidden_dropout = 0;
    m.attention_dropout = 0;
    return m;
}

}  // namespace

class TestCostGemmEfficiency : public QObject {
    Q_OBJECT
  private slots:
    // Each row as its source states it (gemm_efficiency.cpp); the architectures by GPU kind.
    void table_rows() {
        QCOMPARE(tabled("h100-sxm", GemmPrecision::Bf16), 0.79);
        QCOMPARE(tabled("h100-sxm", GemmPrecision::Fp16), 0.79);  // the bf16 row
        QCOMPARE(tabled("h100-sxm", GemmPrecision::Fp8Tensorwise), 0.75);
        QCOMPARE(tabled("h100-sxm", GemmPrecision::Fp8Blockwise), 0.60);
        QCOMPARE(tabled("h200", GemmPrecision::Bf16), 0.79);
        QCOMPARE(tabled("h100-hbm2e-96gb-500w", GemmPrecision::Fp8Tensorwise), 0.75);
        QCOMPARE(tabled("b200", GemmPrecision::Bf16), 0.61);
        QCOMPARE(tabled("gb200", GemmPrecision::Fp8Tensorwise), 0.58);
        // MXFP8 on Blackwell: the per-tensor row at Transformer Engine's measured MXFP8 over
        // per-tensor kernel rate (B300, pre-quantized: 6.812 / 7.161 ms a layer). Blockwise on
        // Blackwell: no row of its own, the per-tensor row.
        QCOMPARE(tabled("b200", GemmPrecision::Mxfp8), 0.58 * 6.812 / 7.161);
        QVERIFY(tabled("b200", GemmPrecision::Mxfp8) < tabled("b200", GemmPrecision::Fp8Tensorwise));
        QCOMPARE(tabled("gb200", GemmPrecision::Fp8Blockwise), 0.58);
        // Blackwell Ultra (B300, GB300): its own rows, Transformer Engine's benchmark on the B300
        // (19.17 TFLOP a layer: 13.102 ms bf16, 6.812 per-tensor FP8, 3.764 NVFP4), each over the
        // B300's dense peak; a little above the B200's OpenXLA rows; its fp4 row, over a peak 3x
        // its fp8 one, below Blackwell's (a model of the same figure moved to 2:1 peaks).
        QCOMPARE(tabled("gb300", GemmPrecision::Fp8Tensorwise), 19.17e12 / 6.812e-3 / 4.5e15);
        QCOMPARE(tabled("b300", GemmPrecision::Bf16), 19.17e12 / 13.102e-3 / 2.25e15);
        QCOMPARE(tabled("b300", GemmPrecision::Nvfp4), 19.17e12 / 3.764e-3 / 14e15);
        QVERIFY(tabled("b300", GemmPrecision::Fp8Tensorwise) > tabled("b200", GemmPrecision::Fp8Tensorwise));
        QVERIFY(tabled("b300", GemmPrecision::Nvfp4) < tabled("b200", GemmPrecision::Nvfp4));
        QCOMPARE(gpu_architecture("gb300"), std::string("blackwell"));
        QCOMPARE(gpu_table_architecture("b300"), std::string("blackwell-ultra"));
        QCOMPARE(gpu_table_architecture("gb200"), std::string("blackwell"));
        QCOMPARE(gpu_table_architecture("h100-sxm"), std::string("hopper"));
        // No fitted Blackwell Ultra run: it keeps Blackwell's fitted share of the kernel rate.
        QCOMPARE(*sustained_gemm_efficiency("gb300", GemmPrecision::Fp8Tensorwise) /
                     *tabled_gemm_efficiency("gb300", GemmPrecision::Fp8Tensorwise),
                 *sustained_gemm_efficiency("gb200", GemmPrecision::Fp8Tensorwise) /
                     *tabled_gemm_efficiency("gb200", GemmPrecision::Fp8Tensorwise));
        // No MXFP8 on Hopper, no table for the A100, the CPU or fp32.
        QCOMPARE(tabled("h100-sxm", GemmPrecision::Mxfp8), -1.0);
        QCOMPARE(tabled("a100-80gb", GemmPrecision::Bf16), -1.0);
        QCOMPARE(tabled("cpu", GemmPrecision::Fp32), -1.0);
        QCOMPARE(tabled("h100-sxm", GemmPrecision::Fp32), -1.0);
        for (const GemmEfficiencyRow& r : gemm_efficiency_table()) {
            QVERIFY(r.fraction_of_peak > 0 && r.fraction_of_peak <= 1);
            QVERIFY(r.source != nullptr && std::string(r.source).size() > 20);
            const std::string arch = r.architecture;
            QVERIFY(!gpu_architecture(arch == "hopper" ? "h100-sxm" : arch == "blackwell-ultra" ? "gb300" : "b200").empty());
        }
        // What the kernel tables say about Hopper: fp8 reaches a lower fraction of its (twice
        // as high) peak than bf16, so an fp8 GEMM is 1.9×, not 2×, faster.
        QVERIFY(2 * tabled("h100-sxm", GemmPrecision::Fp8Tensorwise) / tabled("h100-sxm", GemmPrecision::Bf16) < 1.95);
    }

    // The per-shape factor (gemm_shape_factor.h): the table's own points come back exactly,
    // the largest shape is the reference, short inner dimensions lose, GPUs without a table
    // keep the gemm_half_dim curve.
    void shape_factor_from_table() {
        constexpr auto kH100 = GemmShapeTable::HopperBf16;
        QCOMPARE(gemm_shape_factor(kH100, 16384, 4096, 4096), 1.0);
        QCOMPARE(gemm_shape_factor(kH100, 1e6, 1e5, 1e5), 1.0);  // beyond the table: saturated
        // 1·4096×256×256 at 82.24 TFLOP/s, 4·4096×2048×512 at 607.49, of 779.2 (the mean of the
        // entries gemm_efficiency.cpp's Hopper bf16 row reads; 4·4096³ at 793.13 is above it).
        QVERIFY(std::fabs(gemm_shape_factor(kH100, 4096, 256, 256) - 82.24 / 779.2) < 1e-12);
        QVERIFY(std::fabs(gemm_shape_factor(kH100, 16384, 2048, 512) - 607.49 / 779.2) < 1e-12);
        // Fewer than 4,096 rows: the table's own small-m entries (1·1024×256×256 at 21.96,
        // 4·1024×2048×2048 at 712.74), below 256 the 256-row edge (1·256×256×256 at 6.45).
        QVERIFY(std::fabs(gemm_shape_factor(kH100, 1024, 256, 256) - 21.96 / 779.2) < 1e-12);
        QVERIFY(std::fabs(gemm_shape_factor(kH100, 1024, 2048, 2048, 4) - 712.74 / 779.2) < 1e-12);
        QVERIFY(std::fabs(gemm_shape_factor(kH100, 128, 256, 256) - 6.45 / 779.2) < 1e-12);
        // Continuous where the small-m entries meet the b × 4096-row ones, for every batch.
        for (double b : {1.0, 2.0, 3.0, 4.0})
            QVERIFY(std::fabs(gemm_shape_factor(kH100, 4095.999, 1536, 768, b) - gemm_shape_factor(kH100, 4096, 1536, 768, b)) < 1e-4);
        // Side by side beats one at a time, and concurrency beyond 4 counts as rows: 16 GEMMs of
        // 1024 rows at once are one of 16,384 rows.
        QVERIFY(gemm_shape_factor(kH100, 1024, 1536, 2048, 4) > gemm_shape_factor(kH100, 1024, 1536, 2048, 1));
        QCOMPARE(gemm_shape_factor(kH100, 1024, 1536, 2048, 16), gemm_shape_factor(kH100, 16384, 1536, 2048));
        // Between points, in log2: k = 768 lies between the 512 and 1024 columns.
        const double mid = gemm_shape_factor(kH100, 16384, 2048, 768);
        QVERIFY(mid > 607.49 / 779.2 && mid < 687.86 / 779.2);
        for (double k = 256; k < 4096; k *= 2) QVERIFY(gemm_shape_factor(kH100, 8192, 1024, 2 * k) > gemm_shape_factor(kH100, 8192, 1024, k));
        QVERIFY(gemm_shape_table("h100-sxm", DType::Bf16) != GemmShapeTable::None);
        QVERIFY(gemm_shape_table("b200", DType::Bf16) != GemmShapeTable::None);
        QVERIFY(gemm_shape_table("a100-80gb", DType::Bf16) == GemmShapeTable::None);
        QVERIFY(gemm_shape_table("cpu", DType::Bf16) == GemmShapeTable::None);
        QCOMPARE(gemm_shape_factor(GemmShapeTable::None, 256, 256, 256), 1.0);
        // Per GPU and precision: Hopper reads its bf16 table for fp8 too; Blackwell its own
        // bf16 and fp8 (e4m3) tables (OpenXLA 71feeddf7c "sm_100").
        QVERIFY(gemm_shape_table("h100-sxm", DType::Fp8) == GemmShapeTable::HopperBf16);
        QVERIFY(gemm_shape_table("b200", DType::Bf16) == GemmShapeTable::BlackwellBf16);
        QVERIFY(gemm_shape_table("gb200", DType::Fp8) == GemmShapeTable::BlackwellFp8);
        // B200's own points: bf16 1·4096×4096×1024 at 1,075.62 of 1,380.2 (the mean of
        // 1·4096×4096×4096 and 1·4096×2048×4096, which the Blackwell bf16 row reads), fp8
        // 1·4096×4096×1024 at 1,895.40 of 2,632.2; 4·4096³ (above the reference) is 1 in each.
        constexpr auto kB200 = GemmShapeTable::BlackwellBf16;
        constexpr auto kB200Fp8 = GemmShapeTable::BlackwellFp8;
        QCOMPARE(gemm_shape_factor(kB200, 16384, 4096, 4096), 1.0);
        QCOMPARE(gemm_shape_factor(kB200Fp8, 16384, 4096, 4096), 1.0);
        QVERIFY2(std::fabs(gemm_shape_factor(kB200, 4096, 4096, 1024) - 1075.62 / 1380.2) < 1e-12,
                 std::to_string(gemm_shape_factor(kB200, 4096, 4096, 1024) * 1380.2).c_str());
        QVERIFY2(std::fabs(gemm_shape_factor(kB200Fp8, 4096, 4096, 1024) - 1895.40 / 2632.2) < 1e-12,
                 std::to_string(gemm_shape_factor(kB200Fp8, 4096, 4096, 1024) * 2632.2).c_str());
        // Blackwell's larger and faster SMs fill later: a medium GEMM keeps less of the largest
        // GEMMs' rate there than on Hopper.
        QVERIFY(gemm_shape_factor(kB200, 4096, 4096, 1024) < gemm_shape_factor(kH100, 4096, 4096, 1024) - 0.05);
        // kernel_model picks the table by GPU and dtype.
        ClusterSpec b200;
        b200.gpu.kind = "b200";
        QVERIFY(kernel_model(b200, DType::Fp8).gemm_shape_table == GemmShapeTable::BlackwellFp8);
        QVERIFY(kernel_model(b200, DType::Bf16).gemm_shape_table == GemmShapeTable::BlackwellBf16);
        // gemm_s on a GPU with the table: a 16,384×4096×4096 GEMM runs at the plain efficiency;
        // one with k = 512 at the table's fraction of it.
        KernelModel k;
        k.peak_flops_per_s = 1e15;
        k.gemm_efficiency = 0.5;
        k.memory_bytes_per_s = 1e30;
        k.gemm_shape_table = GemmShapeTable::HopperBf16;
        const double big = gemm_s(k, 4096, 4096, 4096, 4);
        QVERIFY(std::fabs(big - 2.0 * 4096 * 4096 * 4096 * 4 / (1e15 * 0.5)) < 1e-15);
        const double thin = gemm_s(k, 4096, 2048, 512, 4);
        QVERIFY(std::fabs(thin - 2.0 * 4096 * 2048 * 512 * 4 / (1e15 * 0.5 * 607.49 / 779.2)) < 1e-15);
        // Grouped experts under Transformer Engine: 16 GEMMs of 1,024 rows, 4 at a time, take
        // the 4-batch entries and are slower than if all 16 ran as one batch.
        const GemmShape experts{1024, 1536, 2048, 16, kTeGroupedGemmStreams};
        QVERIFY(std::fabs(gemm_s(k, experts) - 2.0 * 1024 * 1536 * 2048 * 16 /
                                                  (1e15 * 0.5 * gemm_shape_factor(kH100, 1024, 1536, 2048, 4))) < 1e-15);
        QVERIFY(gemm_s(k, experts) > gemm_s(k, 1024, 1536, 2048, 16));
        // The backward at its own shapes: a large square GEMM costs two forwards; a forward with
        // a short inner dimension (an expert's FC2, k = 768) has a weight gradient whose inner
        // dimension is the tokens, faster than its input gradient (inner 2048 but 768 wide).
        const GemmShape square{16384, 16384, 16384, 1};
        QVERIFY(std::fabs(gemm_bwd_s(k, square) - 2 * gemm_s(k, square)) < 1e-15);
        const GemmShape fc2{8192, 2048, 768, 16, kTeGroupedGemmStreams};
        QVERIFY(std::fabs(gemm_bwd_s(k, fc2) - gemm_dgrad_s(k, fc2) - gemm_wgrad_s(k, fc2)) < 1e-15);
        QCOMPARE(gemm_wgrad_s(k, fc2), gemm_s(k, 768, 2048, 8192, 16, 4));
        QCOMPARE(gemm_dgrad_s(k, fc2), gemm_s(k, 8192, 768, 2048, 16, 4));
        QVERIFY(gemm_wgrad_s(k, fc2) < gemm_s(k, fc2));
    }
    void precision_of_training() {
        QCOMPARE(gemm_precision(DType::Bf16, Fp8Recipe::Mxfp8), GemmPrecision::Bf16);  // recipe read for fp8 only
        QCOMPARE(gemm_precision(DType::Fp8, Fp8Recipe::Tensorwise), GemmPrecision::Fp8Tensorwise);
        QCOMPARE(gemm_precision(DType::Fp8, Fp8Recipe::Blockwise), GemmPrecision::Fp8Blockwise);
        QCOMPARE(gemm_precision(DType::Fp8, Fp8Recipe::Mxfp8), GemmPrecision::Mxfp8);
    }

    // A stated efficiency.gemm (a cluster file's, a layout's inline cluster's, calibrate's)
    // wins over the table for every precision; unstated, the table's; untabled, the default.
    void stated_efficiency_wins() {
        ClusterSpec h100 = load_cluster("dgx-h100");
        QCOMPARE(h100.efficiency.gemm, 0.0);  // the preset states none
        // The fitted per-tensor fp8 figure, the others at the kernel tables' ratios to it.
        QCOMPARE(gemm_efficiency(h100, DType::Fp8, Fp8Recipe::Tensorwise), 0.48);
        QCOMPARE(gemm_efficiency(h100, DType::Bf16, Fp8Recipe::Tensorwise), 0.48 * 0.79 / 0.75);
        QCOMPARE(gemm_efficiency(h100, DType::Fp8, Fp8Recipe::Blockwise), 0.48 * 0.60 / 0.75);
        // Delayed scaling feeds the per-tensor kernel; it differs in its casts (fp8_cast.h).
        QCOMPARE(gemm_efficiency(h100, DType::Fp8, Fp8Recipe::Delayed), 0.48);
        QCOMPARE(kernel_model(h100, DType::Fp8, Fp8Recipe::Blockwise).gemm_efficiency, 0.48 * 0.60 / 0.75);
        const ClusterSpec b200 = load_cluster("dgx-b200");
        QCOMPARE(gemm_efficiency(b200, DType::Fp8, Fp8Recipe::Mxfp8), 0.44 * (0.58 * 6.812 / 7.161) / 0.58);
        QCOMPARE(gemm_efficiency(b200, DType::Bf16, Fp8Recipe::Tensorwise), 0.44 * 0.61 / 0.58);
        h100.efficiency.gemm = 0.5;
        QCOMPARE(gemm_efficiency(h100, DType::Bf16, Fp8Recipe::Tensorwise), 0.5);
        QCOMPARE(gemm_efficiency(h100, DType::Fp8, Fp8Recipe::Blockwise), 0.5);
        // The A100 preset states its figure; an A100 cluster that does not gets the default.
        ClusterSpec a100 = load_cluster("dgx-a100-80gb");
        QCOMPARE(gemm_efficiency(a100, DType::Bf16, Fp8Recipe::Tensorwise), 0.7);
        a100.efficiency.gemm = 0;
        QCOMPARE(gemm_efficiency(a100, DType::Bf16, Fp8Recipe::Tensorwise), kUntabledGemm);
    }

    // The cluster JSON writes gemm only when stated, so that a saved cluster (a layout's
    // inline one) keeps taking the table; a stated figure survives the round trip.
    void cluster_json_keeps_unstated() {
        ClusterSpec c = load_cluster("dgx-h100");
        QVERIFY(!cluster_to_json(c)["efficiency"].contains("gemm"));
        QCOMPARE(cluster_from_json(cluster_to_json(c), "x.json").efficiency.gemm, 0.0);
        c.efficiency.gemm = 0.55;
        QCOMPARE(cluster_from_json(cluster_to_json(c), "x.json").efficiency.gemm, 0.55);
    }

    // The estimate follows the table: on Hopper blockwise fp8 is slower than tensor-wise, and
    // a stated efficiency makes bf16 and fp8 GEMMs run at the same fraction again.
    void estimate_by_precision() {
        Layout l = make_layout(load_model("llama3-8b"), "dgx-h100", 1, 1, 8, 1, 64, 8192);
        l.training.dtype = DType::Fp8;
        const double tensorwise = estimate_layout(l).step_time_s;
        l.training.fp8_recipe = Fp8Recipe::Blockwise;
        const double blockwise = estimate_layout(l).step_time_s;
        QVERIFY2(blockwise > 1.1 * tensorwise, qPrintable(QString("%1 vs %2").arg(blockwise).arg(tensorwise)));
        l.training.fp8_recipe = Fp8Recipe::Tensorwise;
        l.training.dtype = DType::Bf16;
        const double bf16 = estimate_layout(l).step_time_s;
        QVERIFY(bf16 > tensorwise);
        // bf16's own figure stated: bf16 unchanged.
        l.cluster.efficiency.gemm = gemm_efficiency(load_cluster("dgx-h100"), DType::Bf16, Fp8Recipe::Tensorwise);
        QCOMPARE(estimate_layout(l).step_time_s, bf16);
    }

    // The layout JSON and the flags carry both knobs; a bad value names its field.
    void layout_knobs_json_and_flags() {
        Layout l = make_layout(small_dense(), "dgx-h100", 1, 1, 1, 1, 1, 512);
        l.training.dtype = DType::Fp8;
        l.training.fp8_recipe = Fp8Recipe::Mxfp8;
        l.training.cuda_graphs = CudaGraphs::FullIteration;
        const auto j = layout_to_json(l);
        QCOMPARE(j["training"]["fp8_recipe"].get<std::string>(), std::string("mxfp8"));
        QCOMPARE(j["training"]["cuda_graphs"].get<std::string>(), std::string("full-iteration"));
        const Layout back = layout_from_json(j, "l.json");
        QCOMPARE(back.training.fp8_recipe, Fp8Recipe::Mxfp8);
        QCOMPARE(back.training.cuda_graphs, CudaGraphs::FullIteration);
        // Defaults are not written (layouts without them read as before).
        l.training.fp8_recipe = Fp8Recipe::Tensorwise;
        l.training.cuda_graphs = CudaGraphs::None;
        QVERIFY(!layout_to_json(l)["training"].contains("fp8_recipe"));
        QVERIFY(!layout_to_json(l)["training"].contains("cuda_graphs"));
        auto bad = j;
        bad["training"]["cuda_graphs"] = "sometimes";
        try {
            (void)layout_from_json(bad, "l.json");
            QFAIL("accepted cuda_graphs 'sometimes'");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("training.cuda_graphs") != std::string::npos, e.what());
        }
        bad = j;
        bad["training"]["fp8_recipe"] = "colwise";
        QVERIFY_THROWS_EXCEPTION(InputError, (void)layout_from_json(bad, "l.json"));
        // The attention kernel: written when not the default, read back, refused by name.
        l.training.attention_kernel = AttentionKernel::Sdpa;
        QCOMPARE(layout_to_json(l)["training"]["attention_kernel"].get<std::string>(), std::string("sdpa"));
        QCOMPARE(layout_from_json(layout_to_json(l), "l.json").training.attention_kernel, AttentionKernel::Sdpa);
        l.training.attention_kernel = AttentionKernel::Fused;
        QVERIFY(!layout_to_json(l)["training"].contains("attention_kernel"));
        bad = j;
        bad["training"]["attention_kernel"] = "xformers";
        try {
            (void)layout_from_json(bad, "l.json");
            QFAIL("accepted attention_kernel 'xformers'");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("training.attention_kernel") != std::string::npos, e.what());
        }
        // Megatron-LM's spellings are read too.
        CudaGraphs g = CudaGraphs::None;
        QVERIFY(parse_cuda_graphs("transformer_engine", g) && g == CudaGraphs::PerLayer);
        QVERIFY(parse_cuda_graphs("full_iteration", g) && g == CudaGraphs::FullIteration);
        Fp8Recipe r = Fp8Recipe::Mxfp8;
        QVERIFY(parse_fp8_recipe("delayed", r) && r == Fp8Recipe::Delayed);

        LayoutOverrides f;
        f.model = "tiny";
        f.cluster = "dgx-h100";
        f.cuda_graphs = "per-layer";
        f.fp8_recipe = "blockwise";
        const Layout flagged = build_layout(std::nullopt, f);
        QCOMPARE(flagged.training.cuda_graphs, CudaGraphs::PerLayer);
        QCOMPARE(flagged.training.fp8_recipe, Fp8Recipe::Blockwise);
        f.cuda_graphs = "always";
        try {
            (void)build_layout(std::nullopt, f);
            QFAIL("accepted --cuda-graphs always");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("--cuda-graphs") != std::string::npos, e.what());
        }
        f.cuda_graphs = "per-layer";
        f.attention_kernel = "sdpa";
        QCOMPARE(build_layout(std::nullopt, f).training.attention_kernel, AttentionKernel::Sdpa);
        f.attention_kernel = "xformers";
        try {
            (void)build_layout(std::nullopt, f);
            QFAIL("accepted --attention-kernel xformers");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("--attention-kernel") != std::string::npos, e.what());
        }
    }

    // exposed_layer_launch_s by hand: the kernels' gaps or the host's excess over the layer's
    // GPU time, whichever is larger (a captured half's host is one graph launch), and the
    // synchronisation gap, which capture does not remove. One half alone (the other empty):
    void launch_cost_by_hand() {
        const HalfPass none{};
        QCOMPARE(exposed_layer_launch_s({1e-3, 10, false, 0}, none), 10 * kKernelGapS);  // GPU-bound: gaps only
        QCOMPARE(exposed_layer_launch_s({50e-6, 10, false, 0}, none), 10 * kHostPerKernelS - 50e-6);
        QCOMPARE(exposed_layer_launch_s({0.0, 2, true, 0}, none), kGraphLaunchS);
        QCOMPARE(exposed_layer_launch_s({1e-3, 10, true, 1}, none), 10 * kKernelGapS + kSyncGapS);
        QCOMPARE(exposed_layer_launch_s({1e-3, 10, false, 2}, none), 10 * kKernelGapS + 2 * kSyncGapS);
        QCOMPARE(exposed_layer_launch_s({1e-3, 0, false, 0}, none), 0.0);
        // A host-bound attention (10 launches, 254 µs of host over 50 µs of kernels) before a
        // captured MLP whose 1 ms of kernels covers it: only the gaps are lost.
        QCOMPARE(exposed_layer_launch_s({50e-6, 10, false, 0}, {1e-3, 5, true, 0}), 15 * kKernelGapS);
        const GraphModules whole;
        QVERIFY(graphs_capture(CudaGraphs::PerLayer, whole, GraphModule::Attn) &&
                !graphs_capture(CudaGraphs::None, whole, GraphModule::Attn));
        QVERIFY(!graphs_capture_moe(CudaGraphs::FullIteration, true, whole));
        QVERIFY(graphs_capture_moe(CudaGraphs::PerLayer, false, whole));
        // --cuda-graph-modules moe_router moe_preprocess: the attention half launches eagerly;
        // mlp alone: the dense MLP is captured, the attention is not.
        GraphModules router;
        QVERIFY(add_graph_module("moe_router", router) && add_graph_module("moe_preprocess", router));
        QVERIFY(!graphs_capture(CudaGraphs::PerLayer, router, GraphModule::Attn));
        QVERIFY(!graphs_capture_moe(CudaGraphs::PerLayer, false, router));
        GraphModules mlp;
        QVERIFY(add_graph_module("mlp", mlp) && !add_graph_module("attention", mlp));
        QVERIFY(graphs_capture(CudaGraphs::PerLayer, mlp, GraphModule::Mlp) && !graphs_capture(CudaGraphs::PerLayer, mlp, GraphModule::Attn));
        QVERIFY(graphs_capture(CudaGraphs::FullIteration, mlp, GraphModule::Attn));
        QCOMPARE(graph_module_names(router), (std::vector<std::string>{"moe_router", "moe_preprocess"}));
    }

    // On an H100 a small model's layer passes are shorter than their launches: the estimate
    // charges the difference, CUDA graphs remove it; ranks computing on the host pay none.
    void launch_cost_in_estimate() {
        Layout l = make_layout(small_dense(), "dgx-h100", 1, 1, 1, 1, 4, 256);
        const Estimate eager = estimate_layout(l);
        // 4 layers × 4 micro-batches, each half at most its launches: forward 32 + 17,
        // backward twice as many kernels.
        const double ceiling = 4 * 4 * (3 * (kAttentionKernelsFwd + kMlpKernelsFwd)) * kHostPerKernelS;
        QVERIFY2(eager.time.host_launch_s > 0.5 * ceiling && eager.time.host_launch_s <= ceiling,
                 qPrintable(QString::number(eager.time.host_launch_s)));
        l.training.cuda_graphs = CudaGraphs::PerLayer;
        const Estimate graphed = estimate_layout(l);
        // Per half one graph launch or its kernels' gaps (forward 32 + 17, backward twice).
        QVERIFY(graphed.time.host_launch_s <=
                4 * 4 * (4 * kGraphLaunchS + 3 * (kAttentionKernelsFwd + kMlpKernelsFwd) * kKernelGapS) + 1e-12);
        QVERIFY(graphed.step_time_s < eager.step_time_s - 0.9 * (eager.time.host_launch_s - graphed.time.host_launch_s));
        // The CPU engine's ranks: their host cost is modelled by host sharing instead.
        Layout cpu = make_layout(small_dense(), "cpu-local", 1, 1, 1, 1, 4, 256);
        QCOMPARE(estimate_layout(cpu).time.host_launch_s, 0.0);
    }

    // A dropless MoE layer synchronises with the host once per forward and cannot be captured:
    // with graphs its sync gaps remain (one per MoE layer forward and micro-batch); padded to a
    // capacity it is captured whole.
    void moe_sync_survives_graphs() {
        Layout l = make_layout(load_model("tiny-moe"), "dgx-h100", 1, 1, 1, 1, 4, 256);
        l.training.cuda_graphs = CudaGraphs::FullIteration;
        const Estimate dropless = estimate_layout(l);
        int moe_layers = 0;
        for (int i = 0; i < l.model.num_layers; ++i) moe_layers += l.model.is_moe_block(i) ? 1 : 0;
        QVERIFY(moe_layers > 0);
        QVERIFY2(dropless.time.host_launch_s >= 4 * moe_layers * kSyncGapS - 1e-12,
                 qPrintable(QString::number(dropless.time.host_launch_s)));
        l.training.moe_capacity_factor = 1.0;
        const Estimate padded = estimate_layout(l);
        // Captured: no synchronisation and no per-op host time, the same kernels' gaps.
        QVERIFY2(padded.time.host_launch_s <= dropless.time.host_launch_s - 4 * moe_layers * kSyncGapS + 1e-12,
                 qPrintable(QString::number(padded.time.host_launch_s)));
    }
};

QTEST_GUILESS_MAIN(TestCostGemmEfficiency)
#include "tst_cost_gemm_efficiency.moc"
