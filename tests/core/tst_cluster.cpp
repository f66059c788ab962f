// Cluster and GPU presets: datasheet figures, JSON round trips, bad cluster files.
#include <QtTest>

#include "core/cluster/cluster_spec.h"
#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "core/common/resources.h"

using namespace meshwork;

class TestCluster : public QObject {
    Q_OBJECT
private slots:
    void every_preset_loads();
    void datasheet_figures();
    void grand_teton_is_dgx_h100_but_its_gpu();
    void round_trip();
    void bad_clusters_data();
    void bad_clusters();
};

void TestCluster::every_preset_loads() {
    const auto names = list_presets(PresetKind::Cluster);
    for (const char* required : {"dgx-a100-80gb", "dgx-h100", "dgx-h200", "dgx-b200", "cpu-local"}) {
        QVERIFY2(std::find(names.begin(), names.end(), required) != names.end(), required);
    }
    for (const auto& n : names) {
        const ClusterSpec c = load_cluster(n);
        QVERIFY(!c.source.empty());
        QVERIFY(!c.gpu.source.empty());
        QVERIFY(c.intra_node.bandwidth_bytes_per_s > c.inter_node.bandwidth_bytes_per_s);
    }
    for (const char* gpu : {"a100-40gb", "a100-80gb", "h100-sxm", "h200", "b200", "cpu"}) {
        QVERIFY(load_gpu(gpu, "", "gpu").peak_flops(DType::Fp32) > 0);
    }
}

void TestCluster::datasheet_figures() {
    // NVIDIA datasheets: A100 SXM 312 TFLOP/s dense bf16, no fp8; H100 SXM 989 TFLOP/s bf16,
    // 1979 fp8, 3.35 TB/s; H200 141 GB at 4.8 TB/s; B200 2.25 PFLOP/s dense bf16.
    const auto a100 = load_cluster("dgx-a100-80gb");
    QCOMPARE(a100.gpu.peak_flops(DType::Bf16), 312e12);
    QCOMPARE(a100.gpu.peak_flops(DType::Fp8), 0.0);
    QCOMPARE(a100.gpu.hbm_bytes, 80LL << 30);
    const auto h100 = load_cluster("dgx-h100");
    QVERIFY(qAbs(h100.gpu.peak_flops(DType::Bf16) - 989.4e12) < 1e12);
    QVERIFY(qAbs(h100.gpu.peak_flops(DType::Fp8) - 1978.9e12) < 2e12);
    QCOMPARE(h100.gpu.hbm_bandwidth_bytes_per_s, 3.35e12);
    QCOMPARE(h100.gpus_per_node, 8);
    // SMs (core/cost/ep_comm_sms.h): H100 SXM5 132, B200 148; none stated for the A100.
    QCOMPARE(h100.gpu.sm_count, 132);
    QCOMPARE(load_cluster("gb200-nvl72").gpu.sm_count, 148);
    QCOMPARE(a100.gpu.sm_count, 0);
    const auto h200 = load_cluster("dgx-h200");
    QCOMPARE(h200.gpu.hbm_bandwidth_bytes_per_s, 4.8e12);
    QCOMPARE(load_cluster("dgx-b200").gpu.peak_flops(DType::Bf16), 2.25e15);
    // The memory a B200 exposes, 183,359 MiB (nvidia-smi memory.total), not the datasheet's
    // "180 GB" read as decimal bytes (167.6 GiB): resources/gpus/b200.json names the sources.
    QCOMPARE(load_cluster("dgx-b200").gpu.hbm_bytes, 183359LL << 20);
    // And a GB200's, 189,471 MiB, not "186 GB" read as decimal bytes (173.2 GiB):
    // resources/gpus/gb200.json names the source.
    QCOMPARE(load_cluster("gb200-nvl72").gpu.hbm_bytes, 189471LL << 20);
    // A GB200 NVL72 domain of 72 GPUs is allocated by its 4-GPU compute trays; a DGX node is
    // its own host.
    QCOMPARE(load_cluster("gb200-nvl72").allocation_gpus(), 4);
    QCOMPARE(load_cluster("dgx-h100").allocation_gpus(), 8);
}

// torchtitan's H100 benchmarks ran on Grand Teton hosts (500 W, 96 GB HBM2e H100s). Its
// preset may differ from dgx-h100 only where that source says the hardware does: the GPU
// and the links it states. Efficiencies stay the Hopper ones (never fitted to torchtitan's
// rows; when dgx-h100's are refitted, this preset follows).
void TestCluster::grand_teton_is_dgx_h100_but_its_gpu() {
    const auto gt = load_cluster("grand-teton-h100");
    const auto dgx = load_cluster("dgx-h100");
    QVERIFY(gt.efficiency == dgx.efficiency);
    QVERIFY(gt.memory_reserve == dgx.memory_reserve);
    QCOMPARE(gt.gpus_per_node, 8);
    QCOMPARE(gt.inter_node.bandwidth_bytes_per_s, 5.0e10);  // 400 Gb/s per GPU
    QCOMPARE(gt.gpu.hbm_bandwidth_bytes_per_s, 2.4e12);
    QCOMPARE(gt.gpu.hbm_bytes, 96'000'000'000LL);
    // Between the H100 NVL (835.5) and SXM (989.4) dense bf16 peaks, the middle of them.
    const double bf16 = gt.gpu.peak_flops(DType::Bf16);
    QVERIFY(bf16 > 835.5e12 && bf16 < 989.4e12);
    QVERIFY(qAbs(bf16 - (835.5e12 + 989.4e12) / 2) < 0.1e12);
}

void TestCluster::round_trip() {
    for (const auto& n : list_presets(PresetKind::Cluster)) {
        const ClusterSpec c = load_cluster(n);
        QVERIFY(cluster_from_json(cluster_to_json(c), "rt") == c);
        // Inline GPU (no preset reference) round-trips too.
        ClusterSpec inline_gpu = c;
        inline_gpu.gpu_ref.clear();
        QVERIFY(cluster_from_json(cluster_to_json(inline_gpu), "rt") == inline_gpu);
    }
}

void TestCluster::bad_clusters_data() {
    QTest::addColumn<QString>("edit");  // a JSON merge patch applied to dgx-h100
    QTest::addColumn<QString>("field");
    QTest::newRow("unknown gpu") << R"({"gpu":"h900"})" << "gpu";
    QTest::newRow("zero gpus per node") << R"({"gpus_per_node":0})" << "gpus_per_node";
    QTest::newRow("string bandwidth") << R"({"intra_node":{"bandwidth_bytes_per_s":"fast"}})" << "intra_node.bandwidth_bytes_per_s";
    QTest::newRow("efficiency > 1") << R"({"efficiency":{"gemm":1.5}})" << "efficiency.gemm";
    QTest::newRow("unknown key") << R"({"nvlink":true})" << "nvlink";
    QTest::newRow("newer version") << R"({"version":7})" << "version";
    QTest::newRow("huge nodes") << R"({"max_nodes":1e300})" << "max_nodes";
    QTest::newRow("host larger than node") << R"({"gpus_per_host":16})" << "gpus_per_host";
    QTest::newRow("host not dividing node") << R"({"gpus_per_host":3})" << "gpus_per_host";
    QTest::newRow("inline gpu negative SMs") << R"({"gpu":{"kind":"x","peak_flops_per_s":{"fp32":1e13},"hbm_bytes":1073741824,"hbm_bandwidth_bytes_per_s":1e12,"sm_count":-1}})" << "gpu.sm_count";
    QTest::newRow("inline gpu no fp32") << R"({"gpu":{"kind":"x","peak_flops_per_s":{"bf16":1e15},"hbm_bytes":1073741824,"hbm_bandwidth_bytes_per_s":1e12}})" << "gpu.peak_flops_per_s.fp32";
}

void TestCluster::bad_clusters() {
    QFETCH(QString, edit);
    QFETCH(QString, field);
    Json j = load_json_file(resource_dir() + "/clusters/dgx-h100.json");
    j.merge_patch(parse_json_text(edit.toStdString(), "patch"));
    try {
        cluster_from_json(j, "bad.json");
        QFAIL("no error");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.issues().front().field), field);
    }
}

QTEST_GUILESS_MAIN(TestCluster)
#include "tst_cluster.moc"
