// simulate --all-ranks (issue 18): every rank of a 64-GPU job is in the trace, each a replica
// of its pipeline stage's representative (the same events at the same times, nothing shifted),
// its collectives sized by the groups of the mesh the trace's layout describes, and `stats`
// lists every rank. Bad flag combinations exit 2 and write nothing.
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/mesh/device_mesh.h"
#include "profiler/analysis/trace_layout.h"
#include "profiler/store/trace_reader.h"
#include "tests/profiler/trace_test_util.h"
#include "tests/support/run_cli.h"

using namespace meshwork;
using namespace meshwork::profiler;
using meshwork::test::run_cli;
using meshwork::test::temp_path;

namespace {

// TP2 × CP2 × PP4 × DP4 = 64 ranks of an 8B model, two micro-batches per step: every kind of
// group (tp, cp, dp × cp, pp) and a few hundred events per rank.
QStringList layout_flags() {
    return {"--model", "llama3-8b", "--cluster", "dgx-h100", "--tp", "2", "--cp", "2", "--pp", "4",
            "--dp", "4", "--gbs", "8", "--seq", "4096", "--sp"};
}

// One event as a rank sees it: everything but the rank and the track id (the track by name).
using EventKey = std::tuple<std::string, std::string, int, std::int64_t, std::int64_t, std::int64_t, double, int,
                            int, int, std::int64_t, int>;

std::map<int, std::vector<EventKey>> events_by_rank(const TraceReader& r) {
    std::map<int, std::vector<EventKey>> out;
    r.for_each_event([&](const TraceEvent& e) {
        out[e.rank].emplace_back(r.track(e.track)->info.name, e.name, static_cast<int>(e.kind), e.start_ns, e.end_ns,
                                 e.bytes, e.flops, e.step, e.micro_batch, e.layer, e.correlation_id, e.group_size);
    });
    for (auto& [rank, v] : out) std::sort(v.begin(), v.end());
    return out;
}

// The mesh axis a simulated collective's name names, e.g. "all_reduce(tp)" -> Tp.
std::optional<Axis> axis_of(const std::string& name, int cp) {
    if (name.find("(tp)") != std::string::npos) return Axis::Tp;
    if (name.find("(cp)") != std::string::npos) return Axis::Cp;
    if (name.find("(ep)") != std::string::npos) return Axis::Ep;
    if (name.find("(pp)") != std::string::npos) return Axis::Pp;
    if (name.find("(dp)") != std::string::npos) return cp > 1 ? Axis::DpCp : Axis::Dp;
    return std::nullopt;
}

}  // namespace

class SimAllRanksTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

private:
    // Simulates `flags` (a 64-rank job of `stages` pipeline stages) with and without
    // --all-ranks and checks the first against the second and the layout's mesh; `needed`:
    // collectives the layout must show.
    void check_all_ranks(const std::string& name, const QStringList& flags, int stages,
                         std::initializer_list<const char*> needed) {
        const auto all = temp_path(dir_, name + "_all.sqlite"), reps = temp_path(dir_, name + "_reps.sqlite");
        auto r = run_cli(QStringList{"simulate"} << flags
                                                 << QStringList{"--all-ranks", "--trace",
                                                                QString::fromStdString(all), "--json"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const auto j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["simulation"]["trace_ranks"].get<int>(), 64);
        QCOMPARE(j["simulation"]["simulated_ranks"].get<int>(), stages);
        r = run_cli(QStringList{"simulate"} << flags << QStringList{"--trace", QString::fromStdString(reps)});
        QVERIFY2(r.exit_code == 0, r.err.constData());

        const TraceReader trace = TraceReader::open(all);
        QCOMPARE(trace.run_info().world_size, 64);
        const auto layout = trace_layout(trace);
        QVERIFY(layout.has_value());
        const DeviceMesh mesh = layout->mesh();
        QCOMPARE(mesh.world_size(), 64);
        QCOMPARE(static_cast<int>(trace.ranks().size()), 64);
        for (int i = 0; i < 64; ++i) {
            const RankRecord& rk = trace.ranks()[static_cast<std::size_t>(i)];
            QCOMPARE(rk.rank, i);
            const std::string expected =
                "h100-sxm node " + std::to_string(mesh.node_of(i)) + " gpu " + std::to_string(mesh.local_gpu_of(i));
            QCOMPARE(rk.device, expected);
        }

        // Every rank holds exactly its stage representative's events (from the trace of the
        // representatives alone), at the same times.
        const auto all_events = events_by_rank(trace);
        const auto rep_events = events_by_rank(TraceReader::open(reps));
        QCOMPARE(static_cast<int>(rep_events.size()), stages);
        QCOMPARE(static_cast<int>(all_events.size()), 64);
        std::set<int> distinct_timelines;
        for (int rank = 0; rank < 64; ++rank) {
            RankCoords first_of_stage;
            first_of_stage.pp = mesh.coords(rank).pp;
            const int rep = mesh.rank_of(first_of_stage);
            QVERIFY(rep_events.count(rep));
            QVERIFY2(all_events.at(rank) == rep_events.at(rep),
                     ("rank " + std::to_string(rank) + " differs from its representative " + std::to_string(rep)).c_str());
            distinct_timelines.insert(rep);
        }
        QCOMPARE(static_cast<int>(distinct_timelines.size()), stages);

        // Collectives carry the size of their group in the layout's mesh, and a payload where
        // the cost model has one (the per-block TP collectives).
        std::map<std::string, int> checked;
        std::string first_wrong;  // the first collective whose group is not its mesh group
        trace.for_each_event([&](const TraceEvent& e) {
            if (e.kind != EventKind::Communication) return;
            const auto axis = axis_of(e.name, layout->parallel.mesh.cp);
            if (!axis) return;
            const int expected = *axis == Axis::Pp ? 2 : static_cast<int>(mesh.group_of(e.rank, *axis).size());
            if (first_wrong.empty() && e.group_size != expected) {
                first_wrong = "rank " + std::to_string(e.rank) + " " + e.name + ": group_size " +
                              std::to_string(e.group_size) + ", mesh group " + std::to_string(expected);
            }
            if (first_wrong.empty() && e.layer >= 0 && *axis == Axis::Tp && e.bytes <= 0) {
                first_wrong = "no bytes on " + e.name;
            }
            ++checked[e.name.substr(0, e.name.find(')') + 1)];
        });
        QVERIFY2(first_wrong.empty(), first_wrong.c_str());
        for (const char* collective : needed) QVERIFY2(checked[collective] > 0, collective);
        QVERIFY(checked["all_reduce(dp)"] + checked["reduce_scatter(dp)"] > 0);

        // stats lists every rank.
        r = run_cli({"stats", QString::fromStdString(all), "--json"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const auto stats = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(static_cast<int>(stats["ranks"].size()), 64);
        for (int i = 0; i < 64; ++i) QCOMPARE(stats["ranks"][static_cast<std::size_t>(i)]["rank"].get<int>(), i);
    }

private slots:
    void every_rank_is_a_replica_of_its_stage() {
        check_all_ranks("dense", layout_flags(), 4,
                        {"all_gather(tp)", "reduce_scatter(tp)", "ring_exchange(cp)", "send(pp)"});
    }

    // Mixtral's preset: TP2 × PP4 × DP8 with 8-way expert parallelism folded into dp.
    void expert_parallel_ranks_are_replicas_too() {
        check_all_ranks("moe",
                        {QString::fromStdString(std::string(MESHWORK_RESOURCES_DIR) + "/layouts/mixtral-8x7b-h100-64.json"),
                         "--gbs", "16"},
                        4, {"all_to_all(ep)", "all_gather(tp)", "send(pp)"});
    }

    void bad_flag_combinations_exit_2_and_write_nothing() {
        // --all-ranks names what goes into the trace: without --trace it has nothing to do.
        auto r = run_cli(QStringList{"simulate"} << layout_flags() << QStringList{"--all-ranks"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("--all-ranks") && r.err.contains("--trace"), r.err.constData());
        // A layout that does not fill the mesh: refused before a trace is begun.
        const auto out = temp_path(dir_, "never.sqlite");
        r = run_cli({"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "64", "--tp", "3",
                     "--all-ranks", "--trace", QString::fromStdString(out)});
        QCOMPARE(r.exit_code, 2);
        QVERIFY(!std::filesystem::exists(out));
        // --trace without its file.
        r = run_cli(QStringList{"simulate"} << layout_flags() << QStringList{"--all-ranks", "--trace"});
        QCOMPARE(r.exit_code, 2);
    }
};

QTEST_GUILESS_MAIN(SimAllRanksTest)
#include "tst_sim_all_ranks.moc"
