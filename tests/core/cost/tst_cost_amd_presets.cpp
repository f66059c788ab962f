// The AMD Instinct presets (resources/clusters/amd-*.json, resources/gpus/mi3*.json): every
// one loads through the validating loader, carries the data sheet's peaks, its Infinity
// Fabric mesh and RoCE link, takes the untabled GEMM default (no AMD figure is cited, see
// the presets' source), and estimates a small layout that fits, dense and MoE.
#include <QtTest>

#include "core/common/resources.h"
#include "core/cost/cost_model.h"
#include "core/cost/gemm_efficiency.h"
#include "core/cost/kernel_time.h"
#include "core/model/hf_config.h"
#include "tests/core/cost/cost_test_util.h"

using namespace meshwork;
using namespace meshwork::cost;
using namespace meshwork::test;

class TestCostAmdPresets : public QObject {
    Q_OBJECT

  private slots:
    void presets_data() {
        QTest::addColumn<QString>("cluster");
        QTest::addColumn<double>("bf16");        // dense TFLOP/s, AMD data sheet
        QTest::addColumn<double>("fp8");
        QTest::addColumn<double>("hbm_gb");      // decimal GB
        QTest::addColumn<double>("hbm_tb_s");
        QTest::addColumn<double>("link_gb_s");   // one Infinity Fabric link, per direction
        QTest::newRow("MI300X") << "amd-mi300x" << 1307.4 << 2614.9 << 192.0 << 5.3 << 64.0;
        QTest::newRow("MI325X") << "amd-mi325x" << 1307.4 << 2614.9 << 256.0 << 6.0 << 64.0;
        QTest::newRow("MI355X") << "amd-mi355x" << 2516.6 << 5033.2 << 288.0 << 8.0 << 76.8;
    }
    void presets() {
        QFETCH(QString, cluster);
        QFETCH(double, bf16);
        QFETCH(double, fp8);
        QFETCH(double, hbm_gb);
        QFETCH(double, hbm_tb_s);
        QFETCH(double, link_gb_s);
        const auto names = list_presets(PresetKind::Cluster);
        QVERIFY(std::find(names.begin(), names.end(), cluster.toStdString()) != names.end());
        const ClusterSpec c = load_cluster(cluster.toStdString());
        QCOMPARE(c.gpus_per_node, 8);
        QVERIFY(qAbs(c.gpu.peak_flops(DType::Bf16) - bf16 * 1e12) < 1e11);
        QVERIFY(qAbs(c.gpu.peak_flops(DType::Fp8) - fp8 * 1e12) < 1e11);
        QVERIFY(qAbs(static_cast<double>(c.gpu.hbm_bytes) - hbm_gb * 1e9) < 1e6);
        QVERIFY(qAbs(c.gpu.hbm_bandwidth_bytes_per_s - hbm_tb_s * 1e12) < 1e9);
        // Seven links to the seven peers, summed per direction; 400 Gb/s RoCE per GPU.
        QVERIFY(qAbs(c.intra_node.bandwidth_bytes_per_s - 7 * link_gb_s * 1e9) < 1e6);
        QVERIFY(qAbs(c.inter_node.bandwidth_bytes_per_s - 400e9 / 8) < 1e6);
        // No AMD GEMM table and no stated figure: the untabled default, no attention table.
        QVERIFY(gpu_architecture(c.gpu.kind).empty());
        QCOMPARE(gemm_efficiency(c, DType::Bf16, Fp8Recipe::Tensorwise), kUntabledGemm);
        QVERIFY(kernel_model(c, DType::Bf16).attention_arch.empty());

        // A small dense layout (Llama 3 8B, TP2 × DP4) and a MoE one (Mixtral 8x7B, EP8) fit
        // and give a sane estimate.
        Layout dense = make_layout(load_model("llama3-8b"), cluster.toStdString(), 2, 1, 4, 1, 32, 4096);
        const Estimate d = estimate_layout(dense);
        QVERIFY(sane(d));
        QVERIFY(d.fits);
        Layout moe = make_layout(load_model("mixtral-8x7b"), cluster.toStdString(), 1, 1, 8, 1, 32, 4096);
        moe.parallel.mesh.ep = 8;
        const Estimate m = estimate_layout(moe);
        QVERIFY(sane(m));
        QVERIFY(m.fits);
    }
};

QTEST_GUILESS_MAIN(TestCostAmdPresets)
#include "tst_cost_amd_presets.moc"
