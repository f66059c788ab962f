// meshwork-cli search as scripts use it: --json keys of CLI.md, --out writing a layout that
// loads and validates, and exit 2 with one clear line for bad input.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "tests/support/run_cli.h"

#include "core/layout/layout_json.h"
#include "core/layout/layout_validate.h"

namespace {
using meshwork::test::CliResult;
using meshwork::test::run_cli;
const QStringList kJob{"search", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus",
                       "16",     "--gbs",   "64",        "--seq",     "4096"};
}  // namespace

class TestSearchCli : public QObject {
    Q_OBJECT
  private slots:
    void json_keys_and_out_file();
    void human_table();
    void bad_input_exits_2();
    void nothing_feasible_exits_2_with_counts();
};

void TestSearchCli::json_keys_and_out_file() {
    QTemporaryDir dir;
    const QString out = dir.filePath("best.json");
    const CliResult r =
        run_cli(kJob + QStringList{"--top", "3", "--json", "--out", out, "--threads", "2"});
    QCOMPARE(r.exit_code, 0);
    QVERIFY2(!r.err.contains("["), "no progress bar when stderr is not a terminal");
    const auto j = nlohmann::json::parse(r.out.toStdString());
    QVERIFY(j.at("evaluated").get<long long>() > 0);
    QVERIFY(j.at("rejected").is_object());
    QCOMPARE(j.at("results").size(), 3u);
    for (const auto& h : j.at("results")) {
        for (const char* key : {"layout", "step_time_s", "mfu", "peak_bytes"})
            QVERIFY2(h.contains(key), key);
    }
    const meshwork::Layout best = meshwork::load_layout(out.toStdString());
    QVERIFY(meshwork::validate_layout(best, "best.json").valid());
    QCOMPARE(meshwork::layout_to_json(best), j["results"][0]["layout"]);
    QCOMPARE(j.at("ranked_by").get<std::string>(), std::string("cost_model+simulator"));
    const CliResult plain = run_cli(kJob + QStringList{"--top", "1", "--json", "--no-sim"});
    QCOMPARE(plain.exit_code, 0);
    QCOMPARE(nlohmann::json::parse(plain.out.toStdString()).at("ranked_by").get<std::string>(),
             std::string("cost_model"));
    // --grad-reduce-dtype bf16 is the job's setting: every candidate carries it.
    const CliResult bf16 = run_cli(kJob + QStringList{"--top", "2", "--json", "--no-sim", "--grad-reduce-dtype", "bf16"});
    QCOMPARE(bf16.exit_code, 0);
    const auto bf16_json = nlohmann::json::parse(bf16.out.toStdString());  // outlives the loop
    for (const auto& h : bf16_json.at("results"))
        QVERIFY(h["layout"]["training"].value("grad_reduce_in_bf16", false));
    // --recompute-modules: the job's setting for the candidates with selective recomputation.
    const CliResult mods = run_cli(kJob + QStringList{"--top", "3", "--json", "--no-sim", "--fix", "recompute=selective",
                                                      "--recompute-modules", "core_attn,mlp"});
    QCOMPARE(mods.exit_code, 0);
    const auto mods_json = nlohmann::json::parse(mods.out.toStdString());  // outlives the loop
    for (const auto& h : mods_json.at("results"))
        QCOMPARE(h["layout"]["training"].at("recompute_modules"), nlohmann::json({"core_attn", "mlp"}));
    // The MoE dispatcher is the job's setting; the all-to-all overlap goes only to candidates
    // where Megatron-LM runs it (ep > 1, vpp > 1 with pp > 1).
    const CliResult moe = run_cli({"search", "--model", "mixtral-8x7b", "--cluster", "dgx-h100", "--gpus", "16",
                                   "--gbs", "64", "--seq", "4096", "--top", "20", "--json", "--no-sim",
                                   "--moe-dispatcher", "flex", "--moe-flex-backend", "hybridep",
                                   "--moe-a2a-overlap", "on"});
    QCOMPARE(moe.exit_code, 0);
    int overlapped = 0;
    const auto moe_json = nlohmann::json::parse(moe.out.toStdString());  // outlives the loop
    for (const auto& h : moe_json.at("results")) {
        const auto& par = h["layout"]["parallel"];
        QCOMPARE(par.value("moe_dispatcher", std::string()), std::string("flex"));
        QCOMPARE(par.value("moe_flex_backend", std::string()), std::string("hybridep"));
        if (!par.value("moe_a2a_overlap", false)) continue;
        ++overlapped;
        QVERIFY(par["ep"].get<int>() > 1);
        QVERIFY(par["pp"].get<int>() == 1 || par["vpp"].get<int>() > 1);
    }
    QVERIFY(overlapped > 0);
}

void TestSearchCli::human_table() {
    const CliResult r = run_cli(kJob + QStringList{"--top", "2", "--fix", "tp=2", "--progress"});
    QCOMPARE(r.exit_code, 0);
    QVERIFY(r.out.contains("Rejected:"));
    QVERIFY(r.out.contains("tp2 "));
    QVERIFY(r.err.contains("100%"));  // --progress draws the bar on a pipe too
}

void TestSearchCli::bad_input_exits_2() {
    const QList<QPair<QStringList, QByteArray>> cases{
        {{"--fix", "colour=red"}, "--fix"},
        {{"--fix", "tp=3"}, "does not divide"},
        {{"--fix", "pp=16", "--fix", "dp=16"}, "no layout"},
        {{"--grad-reduce-dtype", "fp16"}, "--grad-reduce-dtype"},
        {{"--recompute-modules", "mlp,attention"}, "--recompute-modules"},
        {{"--recompute-modules", "mla_up_proj"}, "multi-latent attention"},
        {{"--moe-dispatcher", "deepep"}, "--moe-dispatcher"},
        {{"--moe-flex-backend", "hybridep"}, "--moe-flex-backend"},
        {{"--moe-a2a-overlap", "yes"}, "--moe-a2a-overlap"},
    };
    for (const auto& [extra, phrase] : cases) {
        const CliResult r = run_cli(kJob + extra);
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains(phrase), r.err.constData());
        QCOMPARE(r.err.count('\n'), 1);
    }
    const CliResult nodes = run_cli({"search", "--model", "llama3-8b", "--cluster", "dgx-h100",
                                  "--gpus", "12", "--gbs", "64", "--seq", "4096"});
    QCOMPARE(nodes.exit_code, 2);
    QVERIFY(nodes.err.contains("whole nodes"));
    // A GB200 NVL72 "node" is a 72-GPU NVLink domain of 4-GPU hosts (compute trays): jobs take
    // trays, as Megatron-Bridge's GB200 runs of 256 GPUs do; 258 GPUs fill no whole tray.
    const CliResult trays = run_cli({"search", "--model", "llama3-8b", "--cluster", "gb200-nvl72",
                                  "--gpus", "258", "--gbs", "516", "--seq", "4096"});
    QCOMPARE(trays.exit_code, 2);
    QVERIFY2(trays.err.contains("whole hosts of 4 GPUs"), trays.err.constData());
    const CliResult racks = run_cli({"search", "--model", "llama3-8b", "--cluster", "gb200-nvl72",
                                  "--gpus", "256", "--gbs", "512", "--seq", "4096", "--no-sim",
                                  "--top", "1"});
    QCOMPARE(racks.exit_code, 0);
}

void TestSearchCli::nothing_feasible_exits_2_with_counts() {
    const CliResult r = run_cli({"search", "--model", "llama3.1-405b", "--cluster", "dgx-h100",
                              "--gpus", "8", "--gbs", "64", "--seq", "8192"});
    QCOMPARE(r.exit_code, 2);
    QVERIFY(r.err.contains("no feasible layout"));
    QVERIFY(r.err.contains("out_of_memory"));
    QVERIFY(r.err.contains("closest:"));
    QVERIFY(r.err.contains("more"));
}

QTEST_APPLESS_MAIN(TestSearchCli)
#include "tst_search_cli.moc"
