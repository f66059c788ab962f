// The GEMM curve fitted to timed GEMMs (core/cost/gemm_curve_fit.h) and what its shape does
// to the cost model's GEMM times (core/cost/kernel_time.h). Timings are synthetic: no clock.
#include <QtTest>

#include <cmath>
#include <vector>

#include "core/cluster/cluster_spec.h"
#include "core/cost/gemm_curve_fit.h"
#include "core/cost/kernel_time.h"

using namespace meshwork;
using namespace meshwork::cost;

namespace {

constexpr double kPeak = 200e9;  // resources/gpus/cpu.json's fp32 peak

// The grid calibrate --measure-gemm times (core/engine/cpu/gemm_pace.cpp), written out.
std::vector<GemmTiming> grid() {
    std::vector<GemmTiming> g;
    for (double m : {64.0, 256.0}) {
        for (double n : {16.0, 32.0, 64.0, 128.0, 256.0}) {
            for (double k : {16.0, 32.0, 64.0, 128.0, 256.0}) g.push_back({m, n, k, 0});
        }
    }
    return g;
}

double flops(const GemmTiming& t) { return 2 * t.m * t.n * t.k; }

// The cost model's curve at (gemm, half): t = F / (peak · gemm · d/(d + half)).
std::vector<GemmTiming> timed_on_curve(double gemm, double half) {
    auto g = grid();
    for (auto& t : g) {
        const double d = std::min({t.m, t.n, t.k});
        t.seconds = flops(t) / (kPeak * gemm * d / (d + half));
    }
    return g;
}

ClusterSpec cpu_cluster(double gemm, double half) {
    ClusterSpec c;
    c.gpu.kind = "cpu";
    c.gpu.peak_flops_per_s = {{DType::Fp32, kPeak}};
    // Bandwidth high enough that no GEMM here is bound by its operand traffic: the curve alone.
    c.gpu.hbm_bandwidth_bytes_per_s = 1e13;
    c.efficiency.gemm = gemm;
    c.efficiency.gemm_half_dim = half;
    return c;
}

}  // namespace

class TestGemmCurveFit : public QObject {
    Q_OBJECT
private slots:
    // Timings on a known curve are fitted back exactly.
    void recovers_a_known_curve() {
        const auto t = timed_on_curve(0.3, 24);
        const GemmCurve c = fit_gemm_curve(t, kPeak);
        QVERIFY2(c.fitted, c.reason.c_str());
        QCOMPARE(c.samples, 50);
        QCOMPARE(c.sizes, 5);  // d = 16, 32, 64, 128, 256
        QVERIFY(std::fabs(c.gemm_efficiency - 0.3) < 1e-9);
        QVERIFY(std::fabs(c.gemm_half_dim - 24) < 1e-6);
        QVERIFY(c.rms_error < 1e-9);
    }

    // A pace that does not depend on the shape (as OpenBLAS's sgemm measured on the CPU
    // engine's host, docs/BENCHMARKS.md): half size 0, the asymptote is the pace.
    void a_flat_pace_gives_half_size_zero() {
        auto t = grid();
        for (auto& x : t) x.seconds = flops(x) / 80e9;
        const GemmCurve c = fit_gemm_curve(t, kPeak);
        QVERIFY2(c.fitted, c.reason.c_str());
        QVERIFY(std::fabs(c.gemm_efficiency - 0.4) < 1e-9);
        QVERIFY(c.gemm_half_dim < 1e-6);
    }

    // Larger GEMMs slower per FLOP (operands out of cache): the model's curve cannot rise
    // with 1/d, so the fit is flat at the mean pace, not a negative half size.
    void a_pace_falling_with_size_is_fitted_flat() {
        auto t = grid();
        for (auto& x : t) {
            const double d = std::min({x.m, x.n, x.k});
            x.seconds = flops(x) / (80e9 * (1 - d / 1024));
        }
        const GemmCurve c = fit_gemm_curve(t, kPeak);
        QVERIFY2(c.fitted, c.reason.c_str());
        QCOMPARE(c.gemm_half_dim, 0.0);
        QVERIFY(c.gemm_efficiency > 0.3 && c.gemm_efficiency < 0.4);
        QVERIFY(c.worst_error > 0.05);  // the misfit is reported
    }

    // One size, a missing peak, unusable timings: not fitted, with the reason.
    void not_fitted_without_two_sizes_or_a_peak() {
        std::vector<GemmTiming> one{{64, 64, 64, 1e-5}, {128, 64, 64, 2e-5}, {64, 0, 64, 1e-5}};
        GemmCurve c = fit_gemm_curve(one, kPeak);
        QVERIFY(!c.fitted);
        QCOMPARE(c.samples, 2);
        QVERIFY2(c.reason.find("1 distinct size") != std::string::npos, c.reason.c_str());
        c = fit_gemm_curve(timed_on_curve(0.3, 24), 0);
        QVERIFY(!c.fitted);
        QVERIFY(!c.reason.empty());
        QVERIFY(!fit_gemm_curve({}, kPeak).fitted);
    }

    // What the curve's shape does to the cost model: with the nominal half size (64) a
    // tensor-parallel shard of width 32 runs at 2/3 of the pace per FLOP of the full width
    // and a 16-wide head dimension at 2/5, while more rows (a longer sequence or a larger
    // micro-batch) never change the pace: d = min(m, n, k). With the flat measured curve
    // every one of these scales with its FLOPs alone.
    void the_half_size_sets_the_shape_dependence() {
        const KernelModel nominal = kernel_model(cpu_cluster(0.5, 64), DType::Fp32);
        const KernelModel flat = kernel_model(cpu_cluster(0.44, 0), DType::Fp32);
        auto per_flop = [](const KernelModel& k, double m, double n, double kd) {
            return gemm_s(k, m, n, kd) / (2 * m * n * kd);
        };
        // Rows: 64 -> 128 (sequence 32 -> 64 at micro-batch 2): pace unchanged in both.
        QVERIFY(std::fabs(per_flop(nominal, 128, 64, 64) / per_flop(nominal, 64, 64, 64) - 1) < 1e-12);
        QVERIFY(std::fabs(per_flop(flat, 128, 64, 64) / per_flop(flat, 64, 64, 64) - 1) < 1e-12);
        // A TP2 shard (k 64 -> 32): 1.5x slower per FLOP on the nominal curve, as fast on the flat one.
        QVERIFY(std::fabs(per_flop(nominal, 64, 64, 32) / per_flop(nominal, 64, 64, 64) - 1.5) < 1e-9);
        QVERIFY(std::fabs(per_flop(flat, 64, 64, 32) / per_flop(flat, 64, 64, 64) - 1) < 1e-12);
        // Unfused core attention (head dim 16): 2.5x on the nominal curve.
        QVERIFY(std::fabs(per_flop(nominal, 64, 64, 16) / per_flop(nominal, 64, 64, 64) - 2.5) < 1e-9);
        QVERIFY(std::fabs(per_flop(flat, 64, 64, 16) / per_flop(flat, 64, 64, 64) - 1) < 1e-12);
    }
};

QTEST_GUILESS_MAIN(TestGemmCurveFit)
#include "tst_cost_gemm_curve_fit.moc"
