// meshwork-cli export and import-args as scripts use them: exit codes, stdout/stderr, --out,
// --json keys, standard input, and bad input naming the argument and its position.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "tests/support/run_cli.h"

namespace {
using meshwork::test::CliResult;
using meshwork::test::run_cli;

QString layout(const char* name) {
    return QString(MESHWORK_RESOURCES_DIR) + "/layouts/" + name + ".json";
}

QString fixture(const char* name) { return QString(MESHWORK_TEST_FIXTURES) + "/export/" + name; }

}  // namespace

class TestExportCli : public QObject {
    Q_OBJECT
private slots:
    void help_lists_exit_codes();
    void export_to_stdout_and_file();
    void lossy_export_needs_allow_lossy();
    void export_bad_input();
    void import_args_fixture_json();
    void import_args_stdin_and_out();
    void import_args_bad_argument();
    void import_args_bridge_recipe();
    void export_then_import();
    void deepspeed_refuses_zero3_with_pipeline();
};

void TestExportCli::help_lists_exit_codes() {
    for (const char* verb : {"export", "import-args"}) {
        const CliResult r = run_cli({verb, "--help"});
        QCOMPARE(r.exit_code, 0);
        QVERIFY(r.out.contains("Exit codes"));
    }
}

void TestExportCli::export_to_stdout_and_file() {
    const CliResult r = run_cli({"export", layout("tiny-cpu"), "--format", "megatron"});
    QCOMPARE(r.exit_code, 0);
    QVERIFY(r.out.startsWith("# Megatron-LM arguments"));
    QVERIFY(r.out.contains("--tensor-model-parallel-size 2"));
    QTemporaryDir dir;
    const QString out = dir.filePath("tiny.sh");
    const CliResult w = run_cli({"export", layout("tiny-cpu"), "--format", "megatron", "--out", out, "--json"});
    QCOMPARE(w.exit_code, 0);
    const auto j = nlohmann::json::parse(w.out.toStdString());
    QVERIFY(j["lossless"].get<bool>());
    QCOMPARE(QString::fromStdString(j["out"].get<std::string>()), out);
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), r.out);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 1);  // no temporary left behind
    // flags override the file, as for every verb that takes a layout
    const CliResult flags = run_cli({"export", layout("tiny-cpu"), "--format", "deepspeed", "--pp", "1",
                                  "--tp", "1", "--dp", "4", "--zero", "2", "--allow-lossy"});
    QCOMPARE(flags.exit_code, 0);
    QCOMPARE(nlohmann::json::parse(flags.out.toStdString())["zero_optimization"]["stage"].get<int>(), 2);
}

void TestExportCli::lossy_export_needs_allow_lossy() {
    const CliResult r = run_cli({"export", layout("tiny-cpu"), "--format", "torchtitan"});
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.out.isEmpty());
    QVERIFY(r.err.contains("lost: torchtitan: model tiny"));
    QVERIFY(r.err.contains("--allow-lossy"));
    const CliResult ok = run_cli({"export", layout("tiny-cpu"), "--format", "torchtitan", "--allow-lossy", "--json"});
    QCOMPARE(ok.exit_code, 0);
    const auto j = nlohmann::json::parse(ok.out.toStdString());
    QVERIFY(!j["lossless"].get<bool>());
    QVERIFY(!j["lost"].empty());
    QVERIFY(j["content"].get<std::string>().find("config.parallelism = ParallelismConfig(") != std::string::npos);
    const CliResult toml = run_cli({"export", layout("tiny-cpu"), "--format", "torchtitan-toml", "--allow-lossy", "--json"});
    QCOMPARE(toml.exit_code, 0);
    QVERIFY(nlohmann::json::parse(toml.out.toStdString())["content"].get<std::string>().find("[parallelism]") !=
            std::string::npos);
}

void TestExportCli::export_bad_input() {
    const CliResult f = run_cli({"export", layout("tiny-cpu"), "--format", "yaml"});
    QCOMPARE(f.exit_code, 2);
    QVERIFY(f.err.contains("--format"));
    const CliResult t = run_cli({"export", layout("tiny-cpu"), "--format", "slurm", "--trainer", "jax"});
    QCOMPARE(t.exit_code, 2);
    QVERIFY(t.err.contains("--trainer"));
    const CliResult v = run_cli({"export", layout("tiny-cpu"), "--format", "megatron", "--tp", "3"});
    QCOMPARE(v.exit_code, 2);
}

void TestExportCli::import_args_fixture_json() {
    const CliResult r = run_cli({"import-args", fixture("megatron/gpt3-175b.sh"), "--cluster",
                              "dgx-a100-80gb", "--json"});
    QCOMPARE(r.exit_code, 0);
    const auto j = nlohmann::json::parse(r.out.toStdString());
    QCOMPARE(QString::fromStdString(j["format"].get<std::string>()), QString("megatron"));
    QCOMPARE(j["layout"]["parallel"]["pp"].get<int>(), 16);
    QCOMPARE(QString::fromStdString(j["layout"]["model"].get<std::string>()), QString("gpt3-175b"));
    bool lr = false;
    for (const auto& i : j["ignored"]) {
        QVERIFY(i.contains("where") && i.contains("argument") && i.contains("reason"));
        lr = lr || i["argument"] == "--lr 6.0e-5";
    }
    QVERIFY(lr);
    QVERIFY(j["notes"].is_array());
}

// A Megatron-Bridge recipe through the binary: --format bridge, --config and --json (the
// recipe and its checkout are tests/fixtures/bridge, SOURCES.txt); an unknown format is
// refused naming --format and listing bridge.
void TestExportCli::import_args_bridge_recipe() {
    const QString recipe =
        QString(MESHWORK_TEST_FIXTURES) + "/bridge/src/megatron/bridge/perf_recipes/llama/h100/llama3.py";
    const CliResult r = run_cli({"import-args", recipe, "--format", "bridge", "--config",
                                 "llama3_70b_pretrain_64gpu_h100_fp8cs_config", "--json"});
    QCOMPARE(r.exit_code, 0);
    const auto j = nlohmann::json::parse(r.out.toStdString());
    QCOMPARE(QString::fromStdString(j["format"].get<std::string>()), QString("bridge"));
    QCOMPARE(j["layout"]["parallel"]["tp"].get<int>(), 4);
    QCOMPARE(j["layout"]["parallel"]["vpp"].get<int>(), 5);
    const CliResult several = run_cli({"import-args", recipe});
    QCOMPARE(several.exit_code, 2);
    QVERIFY(several.err.contains("pass --config NAME"));
    const CliResult bad = run_cli({"import-args", recipe, "--format", "bridges"});
    QCOMPARE(bad.exit_code, 2);
    QVERIFY(bad.err.contains("--format") && bad.err.contains("bridge)"));
}

void TestExportCli::import_args_stdin_and_out() {
    QTemporaryDir dir;
    const QString out = dir.filePath("imported.json");
    const QByteArray cmd =
        "torchrun --nproc-per-node 4 pretrain_gpt.py \\\n  --num-layers 4 --hidden-size 64 "
        "--num-attention-heads 4 --group-query-attention --num-query-groups 2 \\\n"
        "  --ffn-hidden-size 128 --swiglu --normalization RMSNorm --position-embedding-type rope \\\n"
        "  --untie-embeddings-and-output-weights --disable-bias-linear --vocab-size 256 \\\n"
        "  --max-position-embeddings 128 --seq-length 32 --micro-batch-size 2 --global-batch-size 8 \\\n"
        "  --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2\n";
    const CliResult r = run_cli({"import-args", "-", "--out", out, "--name", "from-stdin"}, cmd);
    QCOMPARE(r.exit_code, 0);
    QVERIFY(r.out.contains("wrote"));
    const CliResult v = run_cli({"validate", out});
    QCOMPARE(v.exit_code, 0);
    const CliResult d = run_cli({"describe", out, "--json"});
    QCOMPARE(d.exit_code, 0);
    QCOMPARE(nlohmann::json::parse(d.out.toStdString())["mesh"]["world_size"].get<int>(), 4);
}

void TestExportCli::import_args_bad_argument() {
    const QByteArray cmd = "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4 "
                           "--tensor-model-parallel-size ${TP} --tensor-parallel-size 1\n";
    const CliResult r = run_cli({"import-args"}, cmd);
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err.contains("<stdin>: argv[6] --tensor-model-parallel-size: '${TP}' (line 1): TP is not set"),
             r.err.constData());
    QVERIFY2(r.err.contains("<stdin>: argv[8] --tensor-parallel-size: unknown Megatron-LM argument"), r.err.constData());
    const CliResult missing = run_cli({"import-args", "/nonexistent/cmd.sh"});
    QCOMPARE(missing.exit_code, 2);
    QVERIFY(missing.err.contains("/nonexistent/cmd.sh"));
}

void TestExportCli::deepspeed_refuses_zero3_with_pipeline() {
    // DeepSpeed's PipelineEngine asserts ZeRO < 2: exit 2 naming the reason, even lossy.
    const CliResult r = run_cli({"export", layout("llama3-70b-h100-64"), "--zero", "3", "--format", "deepspeed",
                              "--allow-lossy"});
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err.contains("training.zero_stage") && r.err.contains("pipeline parallelism"), r.err.constData());
}

void TestExportCli::export_then_import() {
    QTemporaryDir dir;
    const QString sh = dir.filePath("l.sh");
    // (A TP layout with Megatron's distributed optimizer: Megatron-FSDP layouts unset it.)
    QCOMPARE(run_cli({"export", layout("llama3-70b-h100-64"), "--format", "megatron", "--out", sh}).exit_code, 0);
    const CliResult r = run_cli({"import-args", sh, "--cluster", "dgx-h100", "--json"});
    QCOMPARE(r.exit_code, 0);
    const auto j = nlohmann::json::parse(r.out.toStdString());
    QCOMPARE(j["layout"]["parallel"]["dp"].get<int>(), 2);
    // An exported command line ignores nothing but the environment it sets for
    // validate_args (CUDA_DEVICE_MAX_CONNECTIONS=1 with TP > 1).
    QCOMPARE(j["ignored"].size(), std::size_t(1));
    QCOMPARE(j["ignored"][0]["argument"].get<std::string>(), std::string("CUDA_DEVICE_MAX_CONNECTIONS=1"));
}

QTEST_GUILESS_MAIN(TestExportCli)
#include "tst_export_cli.moc"
