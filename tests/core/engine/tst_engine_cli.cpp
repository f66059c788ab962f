// meshwork-cli run end to end: exit codes and messages of CLI.md.
#include <QtTest>

#include <QTemporaryDir>

#include "tests/support/run_cli.h"

class TestEngineCli : public QObject {
    Q_OBJECT
private slots:
    void check_passes();
    void check_mismatch_exits_3();
    void bf16_check_uses_its_tolerances();
    void invalid_layout_exits_2();
    void missing_tokens_exits_2();
    void memory_limit_refuses();
    void rank_failure_exits_1();
    void json_output();
    void unrunnable_block_kind_exits_2();
};

namespace {
meshwork::test::CliResult cli(const QStringList& args) { return meshwork::test::run_cli(QStringList{"run"} + args); }
const QStringList kTp2{"--model", "tiny", "--tp", "2", "--seq", "32", "--mbs", "2", "--gbs", "4", "--steps", "2"};
}  // namespace

void TestEngineCli::check_passes() {
    const auto r = cli(kTp2 + QStringList{"--check"});
    QVERIFY2(r.exit_code == 0, r.err.constData());
    QVERIFY(r.out.contains("step 2/2"));
    QVERIFY(r.out.contains("check passed"));
}

void TestEngineCli::check_mismatch_exits_3() {
    // Rounding alone differs from the reference: a zero tolerance must fail and say where.
    const auto r = cli(kTp2 + QStringList{"--check", "--tolerance", "0"});
    QCOMPARE(r.exit_code, 3);
    QVERIFY2(r.err.contains("check failed: ") && r.err.contains("on rank ") &&
                 r.err.contains("relative error"), r.err.constData());
}

// A bf16 layout runs with bf16 emulated on the CPU and is checked with the bf16 tolerances
// (docs/engine.md); the CPU's default dtype stays fp32 (no faster bf16 there).
void TestEngineCli::bf16_check_uses_its_tolerances() {
    const auto fp32 = cli(kTp2 + QStringList{"--check", "--json"});
    QVERIFY2(fp32.exit_code == 0, fp32.err.constData());
    QVERIFY2(fp32.out.contains("\"tolerance\": 0.0001"), qPrintable(fp32.out));
    const auto r = cli(kTp2 + QStringList{"--dtype", "bf16", "--check"});
    QVERIFY2(r.exit_code == 0, r.err.constData());
    QVERIFY2(r.out.contains("within 0.001 (losses) and 0.02 (weights) relative"), r.out.constData());
    // The numbers are bf16's: not the fp32 run's losses.
    const auto b = cli(kTp2 + QStringList{"--dtype", "bf16", "--json"});
    QVERIFY2(b.exit_code == 0, b.err.constData());
    auto first_loss = [](const QByteArray& out) { return QString::fromUtf8(out).section("\"loss\":", 1, 1).section(',', 0, 0); };
    QVERIFY(first_loss(b.out) != first_loss(fp32.out));
}

void TestEngineCli::invalid_layout_exits_2() {
    const auto r = cli({"--model", "tiny", "--tp", "3", "--seq", "32"});
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err.contains("parallel.tp"), r.err.constData());
}

void TestEngineCli::missing_tokens_exits_2() {
    const auto r = cli(kTp2 + QStringList{"--tokens", "/nonexistent/tok.txt"});
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err.contains("/nonexistent/tok.txt"), r.err.constData());
}

void TestEngineCli::memory_limit_refuses() {
    const auto r = cli(kTp2 + QStringList{"--memory-limit", "1MiB"});
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err.contains("--memory-limit") && r.err.contains("predicted to need"), r.err.constData());
    QCOMPARE(cli(kTp2 + QStringList{"--memory-limit", "4GiB"}).exit_code, 0);
}

void TestEngineCli::rank_failure_exits_1() {
    const auto r = cli(kTp2 + QStringList{"--inject-fault", "1:2"});
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.trimmed() == "error: rank 1: injected fault at step 2", r.err.constData());
}

void TestEngineCli::json_output() {
    const auto r = cli(kTp2 + QStringList{"--json"});
    QCOMPARE(r.exit_code, 0);
    const auto doc = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(doc["steps"].toArray().size(), 2);
    QVERIFY(doc["steps"].toArray()[0].toObject()["loss"].toDouble() > 5);
    QVERIFY(doc["steps"].toArray()[0].toObject().contains("tokens_per_s"));
    QCOMPARE(doc["memory"].toArray().size(), 2);
}

// Issue 33: a model with a block kind the engine has no kernels for (a small Nemotron-H:
// Mamba-2, attention and MLP layers) is refused by name before any rank starts; the estimate
// takes the same model.
void TestEngineCli::unrunnable_block_kind_exits_2() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString model = dir.filePath("nemotron-h-small.json");
    QFile f(model);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"model_type": "nemotron_h", "hybrid_override_pattern": "M*-M-", "hidden_size": 64, "num_hidden_layers": 5,
        "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "mamba_num_heads": 4, "mamba_head_dim": 32, "n_groups": 2, "ssm_state_size": 16,
        "vocab_size": 128, "max_position_embeddings": 64, "tie_word_embeddings": false})");
    f.close();
    const QStringList layout{"--model", model, "--seq", "32", "--mbs", "1", "--gbs", "1"};
    const auto r = cli(layout + QStringList{"--steps", "1"});
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err.contains("model.layers[0]") && r.err.contains("mamba2"), r.err.constData());
    const auto estimate = meshwork::test::run_cli(QStringList{"estimate"} + layout);
    QVERIFY2(estimate.exit_code == 0, estimate.err.constData());
}

QTEST_APPLESS_MAIN(TestEngineCli)
#include "tst_engine_cli.moc"
