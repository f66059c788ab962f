// meshwork-cli as scripts use it: exit codes, --json keys, --help on every verb, and the
// bad-file corpus giving exit 2 with one line naming the file and the field.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "tests/support/run_cli.h"

#include "core/common/json_reader.h"

namespace {
using meshwork::test::CliResult;
using meshwork::test::run_cli;
}  // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void help_on_every_verb();
    void presets_json();
    void describe_405b_json();
    void describe_human();
    void validate_bundled_layouts();
    void bad_files_exit_2_data();
    void bad_files_exit_2();
    void bad_flags_exit_2();
    void validate_json_lists_errors();
    void help_states_every_layout_default();
    void defaults_a_production_user_expects();
    void graph_modules_and_rank_budget_flags();
    void fsdp_fp32_shards_flag_and_mpt_config();
};

void TestCli::help_on_every_verb() {
    const CliResult top = run_cli({"--help"});
    QCOMPARE(top.exit_code, 0);
    QVERIFY(top.out.contains("Exit codes"));
    // Every subcommand listed in the top-level help answers --help with exit 0.
    const QString text = QString::fromUtf8(top.out);
    const auto start = text.indexOf("Subcommands:");
    QVERIFY(start > 0);
    int verbs = 0;
    for (const QString& line : text.mid(start).split('\n').mid(1)) {
        const QString verb = line.trimmed().section(' ', 0, 0);
        if (verb.isEmpty() || !line.startsWith("  ")) continue;
        const CliResult r = run_cli({verb, "--help"});
        QVERIFY2(r.exit_code == 0, qPrintable(verb));
        QVERIFY2(r.out.contains("Exit codes"), qPrintable(verb + " --help lists no exit codes"));
        ++verbs;
    }
    QVERIFY(verbs >= 3);
}

void TestCli::presets_json() {
    const CliResult r = run_cli({"presets", "--json"});
    QCOMPARE(r.exit_code, 0);
    const auto j = nlohmann::json::parse(r.out.toStdString());
    QVERIFY(j["models"].size() >= 8);
    QVERIFY(j["clusters"].size() >= 5);
    bool tiny = false;
    for (const auto& m : j["models"]) tiny |= m["name"] == "tiny";
    QVERIFY(tiny);
}

void TestCli::describe_405b_json() {
    const CliResult r = run_cli({"describe", "--model", "llama3.1-405b", "--cluster", "dgx-h100",
                              "--gpus", "16384", "--tp", "8", "--pp", "16", "--json"});
    QCOMPARE(r.exit_code, 0);
    const auto j = nlohmann::json::parse(r.out.toStdString());
    QVERIFY(std::abs(j["model"]["params_total"].get<double>() - 405.9e9) / 405.9e9 < 0.005);
    // Dense and untied: every weight but the input embedding (a token reads one row) is active.
    QCOMPARE(j["model"]["params_active"].get<double>(),
             j["model"]["params_total"].get<double>() - j["model"]["params_embedding"].get<double>());
    QVERIFY(j["model"]["flops_per_token"].get<double>() > 6 * 405e9);
    QCOMPARE(j["mesh"]["world_size"].get<int>(), 16384);
    QCOMPARE(j["mesh"]["ranks"].size(), std::size_t{16384});
    const auto& r9 = j["mesh"]["ranks"][9];  // tp 1 of the second TP group, node 1 GPU 1
    QCOMPARE(r9["tp"].get<int>(), 1);
    QCOMPARE(r9["dp"].get<int>(), 1);
    QCOMPARE(r9["pp"].get<int>(), 0);
    QCOMPARE(r9["node"].get<int>(), 1);
    QCOMPARE(r9["local_gpu"].get<int>(), 1);
    QCOMPARE(j["mesh"]["ranks"][16383]["pp"].get<int>(), 15);
    QVERIFY(!j["model"].contains("local_attention"));  // full attention: no such key
    // gpt-oss-20b: every other block slides a 128-token window; sinks are stated.
    const CliResult oss = run_cli({"describe", "--model", "gpt-oss-20b", "--json"});
    QCOMPARE(oss.exit_code, 0);
    const auto m = nlohmann::json::parse(oss.out.toStdString())["model"];
    QCOMPARE(m["local_attention"]["window_tokens"].get<int>(), 128);
    QCOMPARE(m["local_attention"]["global_every"].get<int>(), 2);
    QCOMPARE(m["local_attention"]["local_layers"].get<int>(), 12);
    QVERIFY(m["attention_sinks"].get<bool>());
}

void TestCli::describe_human() {
    const CliResult r = run_cli({"describe", QString(MESHWORK_RESOURCES_DIR) + "/layouts/mixtral-8x7b-h100-64.json"});
    QCOMPARE(r.exit_code, 0);
    // Active: every weight a token multiplies, without the input embedding it reads one row of.
    QVERIFY(r.out.contains("46.70B total, 12.75B active"));
    QVERIFY(r.out.contains("experts 8 (top-2"));
}

void TestCli::validate_bundled_layouts() {
    for (const QString& f : QDir(QString(MESHWORK_RESOURCES_DIR) + "/layouts").entryList({"*.json"})) {
        const CliResult r = run_cli({"validate", QString(MESHWORK_RESOURCES_DIR) + "/layouts/" + f});
        QVERIFY2(r.exit_code == 0, qPrintable(f + ": " + r.err));
    }
}

void TestCli::bad_files_exit_2_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("expected");
    const std::string dir = MESHWORK_TEST_FIXTURES;
    const auto expected = meshwork::load_json_file(dir + "/bad-expected.json");
    for (const auto& [name, field] : expected.items()) {
        QTest::newRow(name.c_str()) << QString::fromStdString(dir + "/bad/" + name)
                                    << QString::fromStdString(field.get<std::string>());
    }
}

void TestCli::bad_files_exit_2() {
    QFETCH(QString, file);
    QFETCH(QString, expected);
    for (const char* verb : {"validate", "describe"}) {
        const CliResult r = run_cli({verb, file});
        QVERIFY2(r.exit_code == 2, qPrintable(QString("%1 exit %2").arg(verb).arg(r.exit_code)));
        const QString err = QString::fromUtf8(r.err);
        QVERIFY2(err.contains(file), qPrintable("message does not name the file: " + err));
        QVERIFY2(err.contains(expected), qPrintable("message does not name '" + expected + "': " + err));
        QVERIFY(r.out.isEmpty());
    }
}

void TestCli::bad_flags_exit_2() {
    QCOMPARE(run_cli({"describe", "--model", "tiny", "--bogus"}).exit_code, 2);
    QCOMPARE(run_cli({"describe", "--model", "tiny", "--tp", "two"}).exit_code, 2);
    const CliResult r = run_cli({"describe", "--model", "tiny", "--tp", "3"});
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("<flags>: parallel.tp"));
    const CliResult neg = run_cli({"describe", "--model", "tiny", "--gpus", "-4"});
    QCOMPARE(neg.exit_code, 2);
    QVERIFY(neg.err.contains("--gpus"));
    QCOMPARE(run_cli({"describe"}).exit_code, 2);  // neither a layout nor --model
    QCOMPARE(run_cli({"nosuchverb"}).exit_code, 2);
    QCOMPARE(run_cli({}).exit_code, 2);
    const CliResult split = run_cli({"describe", "--model", "tiny", "--pp", "2", "--layers-per-stage", "2,x"});
    QCOMPARE(split.exit_code, 2);
    QVERIFY(split.err.contains("--layers-per-stage"));
    // Megatron-LM's split rules: a split it refuses exits 2 naming the flag (llama3-70b's 80
    // layers + the embedding do not divide by pp 4); a split it accepts is stated.
    const CliResult acc = run_cli({"describe", "--model", "llama3-70b", "--gpus", "32", "--tp", "8", "--pp", "4",
                                   "--account-for-embedding", "--json"});
    QCOMPARE(acc.exit_code, 2);
    QVERIFY(acc.err.contains("--account-for-embedding"));
    const CliResult ok = run_cli({"describe", "--model", "llama3-70b", "--gpus", "24", "--tp", "8", "--pp", "3",
                                  "--account-for-loss"});
    QCOMPARE(ok.exit_code, 0);
    QVERIFY(ok.out.contains("layers per stage [27,27,26]"));
    // The MoE dispatch flags: a bad value, a backend without the flex dispatcher, and an
    // overlap Megatron-LM refuses (pp > 1 without virtual stages) each exit 2 naming the field.
    const QStringList moe = {"describe", "--model", "mixtral-8x7b", "--gpus", "16", "--ep", "8"};
    const CliResult bad_dispatcher = run_cli(moe + QStringList{"--moe-dispatcher", "deepep"});
    QCOMPARE(bad_dispatcher.exit_code, 2);
    QVERIFY(bad_dispatcher.err.contains("--moe-dispatcher"));
    const CliResult lone_backend = run_cli(moe + QStringList{"--moe-flex-backend", "hybridep"});
    QCOMPARE(lone_backend.exit_code, 2);
    QVERIFY(lone_backend.err.contains("--moe-flex-backend"));
    const CliResult refused = run_cli(moe + QStringList{"--pp", "2", "--moe-a2a-overlap", "on"});
    QCOMPARE(refused.exit_code, 2);
    QVERIFY2(refused.err.contains("parallel.moe_a2a_overlap"), refused.err.constData());
    QCOMPARE(run_cli(moe + QStringList{"--moe-dispatcher", "flex", "--moe-flex-backend", "hybridep",
                                       "--moe-a2a-overlap", "on"})
                 .exit_code,
             0);
}

void TestCli::validate_json_lists_errors() {
    const CliResult r = run_cli({"validate", QString(MESHWORK_TEST_FIXTURES) + "/bad/world-mismatch.json", "--json"});
    QCOMPARE(r.exit_code, 2);
    const auto j = nlohmann::json::parse(r.out.toStdString());
    QCOMPARE(j["valid"].get<bool>(), false);
    QVERIFY(!j["errors"].empty());
    QCOMPARE(j["errors"][0]["field"].get<std::string>(), std::string("parallel"));
    const CliResult ok = run_cli({"validate", "--model", "tiny", "--json"});
    QCOMPARE(ok.exit_code, 0);
    QCOMPARE(nlohmann::json::parse(ok.out.toStdString())["valid"].get<bool>(), true);
}

// Every layout flag that has a default says it in --help ("(default ..."): a run must be
// describable without reading the source. --dp's default is the world / (tp·pp·cp) rule.
void TestCli::help_states_every_layout_default() {
    const CliResult r = run_cli({"estimate", "--help"});
    QCOMPARE(r.exit_code, 0);
    const QString text = QString::fromUtf8(r.out);
    for (const char* flag : {"--cluster",
                             "--gpus",
                             "--tp",
                             "--pp",
                             "--dp",
                             "--cp",
                             "--ep",
                             "--etp",
                             "--vpp",
                             "--order",
                             "--mbs",
                             "--gbs",
                             "--seq",
                             "--schedule",
                             "--recompute",
                             "--recompute-modules",
                             "--zero",
                             "--dtype",
                             "--flash-attention",
                             "--grad-reduce-dtype",
                             "--moe-dispatcher",
                             "--moe-flex-backend",
                             "--moe-a2a-overlap",
                             "--tp-comm-overlap",
                             "--layers-per-stage",
                             "--first-stage-layers",
                             "--last-stage-layers",
                             "--account-for-embedding",
                             "--account-for-loss",
                             "--sp"}) {
        const auto at = text.indexOf(QString("  ") + flag + " ");
        QVERIFY2(at >= 0, flag);
        // The option's help runs to the next option line.
        const auto next = text.indexOf(QRegularExpression("\\n  -"), at + 1);
        const QString help = text.mid(at, next < 0 ? -1 : next - at);
        QVERIFY2(help.contains("(default"),
                 qPrintable(QString(flag) + " states no default: " + help));
    }
    QVERIFY(text.contains("distributed optimizer (default 1)"));
    QVERIFY(text.contains("(default on)"));  // --flash-attention
    QVERIFY(text.contains("ring (none exposed) (default none)"));  // --tp-comm-overlap
}

// Without a layout file: the distributed optimizer (ZeRO-1) and fused attention, and
// --flash-attention off / --zero 0 describe a 2021-22 Megatron-LM run as it ran.
void TestCli::defaults_a_production_user_expects() {
    const QStringList base{"estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus",
                           "8",        "--seq",   "4096",      "--gbs",     "64",       "--json"};
    const CliResult def = run_cli(base);
    QCOMPARE(def.exit_code, 0);
    const auto d = nlohmann::json::parse(def.out.toStdString());
    const CliResult plain = run_cli(base + QStringList{"--zero", "0"});
    QCOMPARE(plain.exit_code, 0);
    const auto p = nlohmann::json::parse(plain.out.toStdString());
    // Optimizer state sharded over dp = 8 by default: an eighth of ZeRO-0's.
    const double opt_default = d["stages"][0]["optimizer_bytes"].get<double>();
    const double opt_plain = p["stages"][0]["optimizer_bytes"].get<double>();
    QVERIFY(opt_default > 0);
    QVERIFY(std::fabs(opt_plain / opt_default - 8) < 1e-6);
    // Unfused attention stores the s×s scores: more activation memory, more FLOPs executed.
    const CliResult unfused = run_cli(base + QStringList{"--flash-attention", "off"});
    QCOMPARE(unfused.exit_code, 0);
    const auto u = nlohmann::json::parse(unfused.out.toStdString());
    QVERIFY(u["stages"][0]["activations_bytes"].get<double>() >
            d["stages"][0]["activations_bytes"].get<double>());
    QVERIFY(u["hardware_tflops_per_gpu"].get<double>() > 0);
    const CliResult on = run_cli(base + QStringList{"--flash-attention", "on"});
    QCOMPARE(on.exit_code, 0);
    QCOMPARE(nlohmann::json::parse(on.out.toStdString())["step_time_s"].get<double>(),
             d["step_time_s"].get<double>());
    const CliResult bad = run_cli(base + QStringList{"--flash-attention", "maybe"});
    QCOMPARE(bad.exit_code, 2);
    QVERIFY(bad.err.contains("--flash-attention"));
    // Gradients in fp32 by default (Megatron-LM's default for bf16); bf16 halves them.
    const CliResult bf16_grads = run_cli(base + QStringList{"--grad-reduce-dtype", "bf16"});
    QCOMPARE(bf16_grads.exit_code, 0);
    const auto g = nlohmann::json::parse(bf16_grads.out.toStdString());
    QVERIFY(std::fabs(d["stages"][0]["grads_bytes"].get<double>() /
                          g["stages"][0]["grads_bytes"].get<double>() - 2) < 1e-6);
    const CliResult bad_grads = run_cli(base + QStringList{"--grad-reduce-dtype", "fp16"});
    QCOMPARE(bad_grads.exit_code, 2);
    QVERIFY(bad_grads.err.contains("--grad-reduce-dtype"));
    // --recompute-modules implies selective recomputation; "mlp" stores less than core
    // attention alone (Megatron's default) and reruns more.
    const CliResult sel = run_cli(base + QStringList{"--recompute", "selective"});
    const CliResult mlp = run_cli(base + QStringList{"--recompute-modules", "core_attn,mlp"});
    QCOMPARE(sel.exit_code, 0);
    QCOMPARE(mlp.exit_code, 0);
    const auto sj = nlohmann::json::parse(sel.out.toStdString());
    const auto mj = nlohmann::json::parse(mlp.out.toStdString());
    QVERIFY(mj["stages"][0]["activations_bytes"].get<double>() < sj["stages"][0]["activations_bytes"].get<double>());
    QVERIFY(mj["step_time_s"].get<double>() > sj["step_time_s"].get<double>());
    const CliResult bad_module = run_cli(base + QStringList{"--recompute-modules", "mlp,attention"});
    QCOMPARE(bad_module.exit_code, 2);
    QVERIFY(bad_module.err.contains("--recompute-modules"));
    QVERIFY(bad_module.err.contains("attention"));
    const CliResult no_mla = run_cli(base + QStringList{"--recompute-modules", "mla_up_proj"});
    QCOMPARE(no_mla.exit_code, 2);
    QVERIFY(no_mla.err.contains("training.recompute_modules"));
}

// --cuda-graph-modules and --moe-rank-capacity-factor through the binary: a router-only capture
// leaves the attention's launches to the host; a rank budget makes the MoE layers capturable in
// a full-iteration graph (no "cannot capture" warning); bad values exit 2 naming the flag.
void TestCli::graph_modules_and_rank_budget_flags() {
    const QStringList base{"estimate", "--model", "qwen3-30b-a3b", "--cluster", "dgx-b200", "--gpus", "8", "--ep", "8",
                           "--mbs", "1", "--gbs", "64", "--seq", "4096", "--moe-dispatcher", "flex",
                           "--moe-flex-backend", "hybridep", "--json"};
    const auto host_s = [](const CliResult& r) {
        return nlohmann::json::parse(r.out.toStdString())["time"]["host_launch_s"].get<double>();
    };
    const CliResult whole = run_cli(base + QStringList{"--cuda-graphs", "per-layer"});
    QCOMPARE(whole.exit_code, 0);
    const CliResult router = run_cli(base + QStringList{"--cuda-graphs", "per-layer", "--cuda-graph-modules",
                                                        "moe_router,moe_preprocess"});
    QCOMPARE(router.exit_code, 0);
    QVERIFY(host_s(router) > host_s(whole));
    const CliResult dynamic = run_cli(base + QStringList{"--cuda-graphs", "full-iteration"});
    QCOMPARE(dynamic.exit_code, 0);
    QVERIFY(dynamic.err.contains("cannot capture"));
    const CliResult budget =
        run_cli(base + QStringList{"--cuda-graphs", "full-iteration", "--moe-rank-capacity-factor", "1.5"});
    QCOMPARE(budget.exit_code, 0);
    QVERIFY2(!budget.err.contains("cannot capture"), budget.err.constData());
    QVERIFY(host_s(budget) < host_s(dynamic));
    const CliResult bad_module = run_cli(base + QStringList{"--cuda-graph-modules", "attention"});
    QCOMPARE(bad_module.exit_code, 2);
    QVERIFY(bad_module.err.contains("--cuda-graph-modules"));
    const CliResult bad_budget = run_cli(base + QStringList{"--moe-rank-capacity-factor", "-1"});
    QCOMPARE(bad_budget.exit_code, 2);
    QVERIFY(bad_budget.err.contains("--moe-rank-capacity-factor"));
}

// ZeRO-3 shards as PyTorch FSDP keeps them: 2 bytes a parameter less on the GPU (Llama 3 8B
// over 8 ranks: 8.03e9 · 2 / 8 bytes), an error naming the field below stage 3. An MPT config
// (llm-foundry's MPT-7B) reads through the same flags.
void TestCli::fsdp_fp32_shards_flag_and_mpt_config() {
    const QStringList base{"estimate", "--model", "llama3-8b", "--gpus", "8", "--zero", "3", "--json"};
    const auto state = [](const CliResult& r) {
        const auto s = nlohmann::json::parse(r.out.toStdString())["stages"][0];
        return s["params_bytes"].get<double>() + s["grads_bytes"].get<double>() + s["optimizer_bytes"].get<double>();
    };
    const CliResult megatron = run_cli(base);
    QCOMPARE(megatron.exit_code, 0);
    const CliResult torch = run_cli(base + QStringList{"--fsdp-fp32-shards", "on"});
    QCOMPARE(torch.exit_code, 0);
    const double params = nlohmann::json::parse(run_cli({"describe", "--model", "llama3-8b", "--gpus", "8", "--json"})
                                                    .out.toStdString())["model"]["params_total"].get<double>();
    QVERIFY(std::abs((state(megatron) - state(torch)) - params * 2 / 8) < 1e-6 * params);
    const CliResult stage1 = run_cli({"estimate", "--model", "llama3-8b", "--gpus", "8", "--zero", "1",
                                      "--fsdp-fp32-shards", "on"});
    QCOMPARE(stage1.exit_code, 2);
    QVERIFY(stage1.err.contains("training.fsdp_fp32_shards"));
    // search takes it as the job's FSDP: its ZeRO-3 results carry it; a bad value exits 2.
    const QStringList search{"search", "--model", "llama3-8b", "--gpus", "8", "--gbs", "64", "--seq", "4096",
                             "--fix", "zero=3", "--top", "1", "--json"};
    const CliResult searched = run_cli(search + QStringList{"--fsdp-fp32-shards", "on"});
    QCOMPARE(searched.exit_code, 0);
    QVERIFY(nlohmann::json::parse(searched.out.toStdString())["results"][0]["layout"]["training"]["fsdp_fp32_shards"] ==
            true);
    const CliResult bad_search = run_cli(search + QStringList{"--fsdp-fp32-shards", "maybe"});
    QCOMPARE(bad_search.exit_code, 2);
    QVERIFY(bad_search.err.contains("--fsdp-fp32-shards"));
    const CliResult mpt = run_cli({"describe", "--model", MESHWORK_TEST_FIXTURES "/llm-foundry/mpt-7b.json", "--gpus",
                                   "8", "--json"});
    QCOMPARE(mpt.exit_code, 0);
    QVERIFY(nlohmann::json::parse(mpt.out.toStdString())["model"]["family"] == "mpt");
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
