// Issue 18's acceptance, end to end: a real CPU run of 8 data-parallel ranks with rank 5's
// compute slowed 2× (run --slow-rank) is reported by stats --stragglers with rank 5 as its
// only straggler; and the flags' refusals and outputs as scripts see them.
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "tests/support/run_cli.h"

using meshwork::test::CliResult;
using meshwork::test::run_cli;

namespace {

// 8 DP ranks of the tiny model, 40 steps of about 25 ms on two cores. Four threads to a core
// take turns, so which rank arrives last at a collective is partly the scheduler's doing:
// rank 5, slowed 2x, held its peers back in 55-80 % of the steps in runs at nice 19 beside
// other work. 40 steps make "half the steps judged or more" a margin of several steps, where
// 12 steps made it one or two.
constexpr int kSteps = 40;

QStringList run_args(const QString& trace) {
    return {"run", "--model", "tiny", "--dp", "8", "--gpus", "8", "--seq", "64", "--mbs", "2", "--gbs", "16",
            "--steps", QString::number(kSteps), "--profile", trace};
}

nlohmann::json parse(const CliResult& r) { return nlohmann::json::parse(r.out.toStdString()); }

}  // namespace

class StragglersCliTest : public QObject {
    Q_OBJECT

private slots:
    void slow_rank_5_is_the_only_straggler() {
        const QString trace = dir_.filePath("slow5.sqlite");
        const CliResult run = run_cli(run_args(trace) + QStringList{"--slow-rank", "5:2.0"});
        QVERIFY2(run.exit_code == 0, run.err.constData());
        const CliResult stats = run_cli({"stats", trace, "--stragglers", "--json"});
        QVERIFY2(stats.exit_code == 0, stats.err.constData());
        const auto j = parse(stats);
        QCOMPARE(j["ranks"].size(), std::size_t{8});
        QCOMPARE(j["steps"].size(), std::size_t{kSteps});
        QCOMPARE(j["steps_checked"].size(), std::size_t{kSteps - 1});  // the first step is warm-up
        QCOMPARE(j["cells"].size(), std::size_t{8 * kSteps});
        // The CPU engine records each rank thread's CPU time inside compute ops per step.
        for (const auto& c : j["cells"]) QVERIFY2(c["compute_on_cpu_s"].is_number(), c.dump().c_str());
        QVERIFY(j["peers_by_pipeline_stage"].get<bool>());  // the run's trace carries its layout

        std::set<int> named;
        int compute_steps = 0;
        for (const auto& s : j["stragglers"]) {
            named.insert(s["rank"].get<int>());
            QVERIFY(s.contains("step") && s.contains("slowdown") && s.contains("reason"));
            if (s["reason"] == "compute") {
                ++compute_steps;
                // Judged on CPU time, which the turns on the cores leave alone: about 2x
                // (1.75-2.1 measured), where wall time gave 0.3-1.6x.
                QCOMPARE(s["slowdown_basis"], "cpu_time");
                QVERIFY2(s["slowdown"].get<double>() >= 1.5, s.dump().c_str());
            }
        }
        QVERIFY2(named == std::set<int>{5}, j["stragglers"].dump().c_str());
        QVERIFY2(2 * j["stragglers"].size() >= j["steps_checked"].size(),  // half the steps judged, or more
                 j["stragglers"].dump().c_str());
        QVERIFY(compute_steps >= 1);

        // The peers waited for rank 5: in most judged steps most of them name it.
        int waits_for_5 = 0, waits = 0;
        for (const auto& c : j["cells"]) {
            if (c["rank"] == 5 || c["step"] == j["steps"][0]) continue;
            ++waits;
            if (c["waited_for_rank"] == 5) ++waits_for_5;
        }
        QVERIFY2(2 * waits_for_5 > waits, (std::to_string(waits_for_5) + " of " + std::to_string(waits)).c_str());

        // The table names it too.
        const CliResult human = run_cli({"stats", trace, "--stragglers"});
        QCOMPARE(human.exit_code, 0);
        QVERIFY2(human.out.contains("stragglers (peers: the ranks of the same pipeline stage)") &&
                     human.out.contains("  rank 5  step "),
                 human.out.constData());
    }

    // Every malformed or out-of-range --slow-rank: exit 2 naming the flag, before any work
    // (no trace is left behind).
    void bad_slow_rank_exits_2_naming_the_flag() {
        const QString trace = dir_.filePath("refused.sqlite");
        for (const char* bad : {"5", "5:", "x:2", "5:2.0x", "-1:2", "8:2", "5:0.5", "5:nan", "5:1000"}) {
            const CliResult r = run_cli(run_args(trace) + QStringList{"--slow-rank", bad});
            QVERIFY2(r.exit_code == 2, bad);
            QVERIFY2(r.err.contains("--slow-rank"), r.err.constData());
            QVERIFY2(!std::filesystem::exists(trace.toStdString()), bad);
        }
    }

    void help_documents_the_flags() {
        const CliResult run = run_cli({"run", "--help"});
        QVERIFY(run.out.contains("--slow-rank") && run.out.contains("Testing aid"));
        const CliResult stats = run_cli({"stats", "--help"});
        QVERIFY(stats.out.contains("--stragglers") && stats.out.contains("Exit codes"));
    }

    // A prediction writes one representative rank per pipeline stage, one step: every rank
    // has a row, nobody has a peer to be compared with, and nobody is named.
    void prediction_has_rows_and_no_stragglers() {
        const QString trace = dir_.filePath("sim.sqlite");
        const QString layout = QString(MESHWORK_RESOURCES_DIR) + "/layouts/tiny-cpu.json";
        QCOMPARE(run_cli({"simulate", layout, "--trace", trace}).exit_code, 0);
        const CliResult r = run_cli({"stats", trace, "--stragglers", "--json"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const auto j = parse(r);
        QCOMPARE(j["ranks"].size(), std::size_t{2});
        QCOMPARE(j["steps"], nlohmann::json::array({0}));
        QCOMPARE(j["steps_checked"], nlohmann::json::array({0}));  // one step: nothing is warm-up
        QVERIFY(j["stragglers"].empty() && j["transient"].empty());
        const CliResult missing = run_cli({"stats", dir_.filePath("none.sqlite"), "--stragglers"});
        QCOMPARE(missing.exit_code, 2);
    }

private:
    QTemporaryDir dir_;
};

QTEST_GUILESS_MAIN(StragglersCliTest)
#include "tst_stragglers_cli.moc"
