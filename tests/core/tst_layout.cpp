// Layout JSON: exact round trips, defaults, flags overriding files.
#include <QtTest>

#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "core/common/resources.h"
#include "core/layout/layout_json.h"
#include "core/layout/layout_overrides.h"
#include "core/layout/layout_validate.h"

using namespace meshwork;

class TestLayout : public QObject {
    Q_OBJECT
private slots:
    void bundled_layouts_valid_and_round_trip();
    void inline_model_and_cluster_round_trip();
    void cross_entropy_values_round_trip();
    void fsdp_fp32_shards_round_trip_and_rule();
    void save_is_atomic_and_exact();
    void flags_build_a_layout();
    void flags_override_file();
    void balanced_split();
    void nodes_flag();
};

void TestLayout::bundled_layouts_valid_and_round_trip() {
    const auto names = list_presets(PresetKind::Layout);
    QVERIFY(names.size() >= 4);
    for (const auto& n : names) {
        const std::string path = resource_dir() + "/layouts/" + n + ".json";
        const Layout l = load_layout(path);
        const auto v = validate_layout(l, path);
        QVERIFY2(v.valid(), qPrintable(QString::fromStdString(n + ": " +
                                                              (v.errors.empty() ? "" : v.errors[0].to_string()))));
        const Json once = layout_to_json(l);
        const Layout back = layout_from_json(once, "rt");
        QVERIFY2(back == l, n.c_str());
        QCOMPARE(layout_to_json(back), once);  // a fixed point: exact
    }
}

void TestLayout::inline_model_and_cluster_round_trip() {
    Layout l = load_layout(resource_dir() + "/layouts/tiny-moe-cpu.json");
    l.model_ref.clear();    // serialise the model inline as an HF config
    l.cluster_ref.clear();  // and the cluster as a full cluster object
    l.cluster.gpu_ref.clear();
    const Json j = layout_to_json(l);
    QVERIFY(j["model"].is_object());
    QVERIFY(j["cluster"].is_object());
    const Layout back = layout_from_json(j, "inline.json");
    QVERIFY(back == l);
}

// training.cross_entropy: every value is written (but the default) and read back; an unknown
// one is an error naming the field and the values.
void TestLayout::cross_entropy_values_round_trip() {
    Layout l = load_layout(resource_dir() + "/layouts/tiny-cpu.json");
    for (const auto loss : {CrossEntropy::VocabParallel, CrossEntropy::Upcast, CrossEntropy::Te, CrossEntropy::FlashAttn,
                            CrossEntropy::TeInPlace}) {
        l.training.cross_entropy = loss;
        const Json j = layout_to_json(l);
        QCOMPARE(j["training"].contains("cross_entropy"), loss != CrossEntropy::VocabParallel);
        QVERIFY(layout_from_json(j, "rt.json") == l);
    }
    Json j = layout_to_json(l);
    QCOMPARE(j["training"]["cross_entropy"].get<std::string>(), std::string("te-inplace"));
    j["training"]["cross_entropy"] = "liger";
    try {
        (void)layout_from_json(j, "bad.json");
        QFAIL("no error");
    } catch (const InputError& e) {
        QCOMPARE(e.issues().front().file, std::string("bad.json"));
        QCOMPARE(e.issues().front().field, std::string("training.cross_entropy"));
        QVERIFY(e.issues().front().message.find("te-inplace") != std::string::npos);
        QVERIFY(e.issues().front().message.find("flash-attn") != std::string::npos);
    }
}

// training.fsdp_fp32_shards: written only when on, read back; only with ZeRO-3.
void TestLayout::fsdp_fp32_shards_round_trip_and_rule() {
    Layout l = load_layout(resource_dir() + "/layouts/tiny-cpu.json");
    QVERIFY(!layout_to_json(l)["training"].contains("fsdp_fp32_shards"));
    l.training.zero_stage = 3;
    l.training.fsdp_fp32_shards = true;
    const Json j = layout_to_json(l);
    QCOMPARE(j["training"]["fsdp_fp32_shards"].get<bool>(), true);
    QVERIFY(layout_from_json(j, "rt.json") == l);
    QVERIFY(validate_layout(l, "x").valid());
    l.training.zero_stage = 2;
    const auto v = validate_layout(l, "x");
    QVERIFY(!v.valid());
    QCOMPARE(v.errors.front().field, std::string("training.fsdp_fp32_shards"));
}

void TestLayout::save_is_atomic_and_exact() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("out.json").toStdString();
    const Layout l = load_layout(resource_dir() + "/layouts/gpt3-175b-a100-1024.json");
    save_layout(l, path);
    QVERIFY(load_layout(path) == l);
    // No temporary file is left beside the result.
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 1);
    // A folder that does not exist is a runtime error, not a crash.
    QVERIFY_THROWS_EXCEPTION(RuntimeError, save_layout(l, dir.filePath("no/such/x.json").toStdString()));
}

void TestLayout::flags_build_a_layout() {
    LayoutOverrides f;
    f.model = "llama3.1-405b";
    f.cluster = "dgx-h100";
    f.gpus = 16384;
    f.tp = 8;
    f.pp = 16;
    const Layout l = build_layout(std::nullopt, f);
    QCOMPARE(l.parallel.mesh.dp, 128);  // world / (tp·pp·cp)
    QCOMPARE(l.gpus, 16384);
    QCOMPARE(l.stage_layers().size(), std::size_t{16});
    QVERIFY(validate_layout(l, "<flags>").valid());
    // Without a world size, dp is 1 and gpus = tp·pp·cp.
    LayoutOverrides g;
    g.model = "tiny";
    g.tp = 2;
    g.pp = 2;
    const Layout t = build_layout(std::nullopt, g);
    QCOMPARE(t.gpus, 4);
    QCOMPARE(t.cluster.name, std::string("cpu-local"));
    QCOMPARE(t.training.dtype, DType::Fp32);  // the cpu kind computes in fp32 only
}

void TestLayout::flags_override_file() {
    const std::string path = resource_dir() + "/layouts/llama3-70b-h100-64.json";
    LayoutOverrides f;
    f.tp = 4;
    f.mbs = 2;
    f.schedule = "gpipe";
    f.sequence_parallel = false;
    const Layout l = build_layout(path, f);
    QCOMPARE(l.parallel.mesh.tp, 4);
    QCOMPARE(l.parallel.mesh.dp, 4);  // 64 / (4·4·1): dp follows the changed tp
    QCOMPARE(l.training.micro_batch_size, 2);
    QCOMPARE(l.training.schedule, Schedule::GPipe);
    QVERIFY(!l.parallel.sequence_parallel);
    LayoutOverrides bad;
    bad.schedule = "zigzag";
    try {
        build_layout(path, bad);
        QFAIL("no error");
    } catch (const InputError& e) {
        QCOMPARE(e.issues().front().field, std::string("--schedule"));
        QCOMPARE(e.issues().front().file, std::string("<flags>"));
    }
    LayoutOverrides world;
    world.gpus = 60;  // not a multiple of tp·pp·cp = 32
    QVERIFY_THROWS_EXCEPTION(InputError, build_layout(path, world));
}

void TestLayout::balanced_split() {
    QCOMPARE(balanced_stage_split(126, 16),
             (std::vector<int>{7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7}));
    QCOMPARE(balanced_stage_split(8, 4), (std::vector<int>{2, 2, 2, 2}));
    QCOMPARE(balanced_stage_split(10, 4), (std::vector<int>{2, 3, 3, 2}));
    QCOMPARE(balanced_stage_split(9, 4), (std::vector<int>{2, 2, 3, 2}));
    QVERIFY(balanced_stage_split(3, 4).empty());
}

void TestLayout::nodes_flag() {
    LayoutOverrides f;
    f.model = "llama3-8b";
    f.cluster = "dgx-h100";
    f.nodes = 4;
    f.tp = 8;
    const Layout l = build_layout(std::nullopt, f);
    QCOMPARE(l.gpus, 32);
    QCOMPARE(l.parallel.mesh.dp, 4);
    f.gpus = 16;  // disagrees with 4 nodes × 8
    QVERIFY_THROWS_EXCEPTION(InputError, build_layout(std::nullopt, f));
}

QTEST_GUILESS_MAIN(TestLayout)
#include "tst_layout.moc"
