// stats --stragglers end to end on a real CPU run of 8 data-parallel ranks with rank 5's
// compute slowed 2× (run --slow-rank): the report's shape (ranks, steps, cells, CPU time per
// cell, the straggler fields); and the flags' refusals and outputs as scripts see them. Issue
// 18's acceptance (rank 5 the only straggler, about 2x) depends on the scheduler of a shared
// machine, so it is measured by bench/stragglers-cpu-run.sh, not asserted here (issue 31).
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/support/run_cli.h"

using meshwork::test::CliResult;
using meshwork::test::run_cli;

namespace {

// 8 DP ranks of the tiny model, steps of about 25 ms on two cores. The report's shape needs
// few steps; bench/stragglers-cpu-run.sh runs 40 for the figures.
constexpr int kSteps = 12;

QStringList run_args(const QString& trace) {
    return {"run", "--model", "tiny", "--dp", "8", "--gpus", "8", "--seq", "64", "--mbs", "2", "--gbs", "16",
            "--steps", QString::number(kSteps), "--profile", trace};
}

nlohmann::json parse(const CliResult& r) { return nlohmann::json::parse(r.out.toStdString()); }

}  // namespace

class StragglersCliTest : public QObject {
    Q_OBJECT

private slots:
    void slow_rank_run_reports_every_cell() {
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

        // Which ranks the rule names, and by how much, depends on how two shared cores
        // scheduled 8 rank threads: "slowdown >= 1.5" failed at 1.4953 on a loaded machine
        // (issue 31). Those figures are bench/stragglers-cpu-run.sh's (docs/BENCHMARKS.md),
        // and the rule itself is checked on traces with fixed timestamps (tst_rank_steps).
        // Here: the report's shape, which load cannot change.
        for (const auto& s : j["stragglers"]) {
            QVERIFY(s.contains("step") && s.contains("slowdown") && s.contains("reason"));
            const int rank = s["rank"].get<int>();
            QVERIFY2(rank >= 0 && rank < 8, s.dump().c_str());
            // Every cell has the rank's CPU time, so compute is judged on it, never on wall time.
            if (s["reason"] == "compute") QCOMPARE(s["slowdown_basis"], "cpu_time");
        }
        for (const auto& c : j["cells"]) {
            if (c["waited_for_rank"].is_null()) continue;  // waited for no one
            const int waited = c["waited_for_rank"].get<int>();
            QVERIFY2(waited >= 0 && waited < 8 && waited != c["rank"].get<int>(), c.dump().c_str());
        }

        // The table has its sections.
        const CliResult human = run_cli({"stats", trace, "--stragglers"});
        QCOMPARE(human.exit_code, 0);
        QVERIFY2(human.out.contains("stragglers (peers: the ranks of the same pipeline stage)"),
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
