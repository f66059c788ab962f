// Rank mapping and process groups against Megatron-LM's conventions, checked by hand.
#include <QtTest>

#include <set>
#include <tuple>

#include "core/common/error.h"
#include "core/mesh/device_mesh.h"
#include "core/schedule/pipeline_schedule.h"

using namespace meshwork;
using Groups = std::vector<std::vector<int>>;

class TestMesh : public QObject {
    Q_OBJECT
private slots:
    void megatron_docstring_tp2_pp4();
    void world16_tp2_pp2();
    void context_parallel_groups();
    void expert_folding();
    void custom_order();
    void nodes_and_local_gpus();
    void coords_round_trip();
    void group_of_is_the_group_that_holds_the_rank();
    void bad_order();
    void schedules_cover_every_pass();
    void one_f_one_b_warmup();
    void interleaved_matches_megatron_order();
};

void TestMesh::megatron_docstring_tp2_pp4() {
    // Megatron-LM parallel_state.initialize_model_parallel docstring: 16 GPUs, tp 2, pp 4:
    // 8 TP groups [g0,g1],[g2,g3]...; 4 PP groups [g0,g4,g8,g12],...; 8 DP groups
    // [g0,g2],[g1,g3],[g4,g6],[g5,g7],...
    MeshShape s;
    s.tp = 2;
    s.pp = 4;
    s.dp = 2;
    const DeviceMesh m(s, 8);
    QCOMPARE(m.groups(Axis::Tp), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}));
    QCOMPARE(m.groups(Axis::Pp), (Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}));
    QCOMPARE(m.groups(Axis::Dp), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}}));
}

void TestMesh::world16_tp2_pp2() {
    MeshShape s;
    s.tp = 2;
    s.pp = 2;
    s.dp = 4;
    const DeviceMesh m(s, 8);
    QCOMPARE(m.groups(Axis::Dp), (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}}));
    QCOMPARE(m.groups(Axis::Pp).front(), (std::vector<int>{0, 8}));
    QCOMPARE(m.group_of(13, Axis::Tp), (std::vector<int>{12, 13}));
    const RankCoords c = m.coords(13);
    QCOMPARE(c.tp, 1);
    QCOMPARE(c.dp, 2);
    QCOMPARE(c.pp, 1);
    QVERIFY(!m.axis_crosses_nodes(Axis::Tp));
    QVERIFY(!m.axis_crosses_nodes(Axis::Dp));
    QVERIFY(m.axis_crosses_nodes(Axis::Pp));
}

void TestMesh::context_parallel_groups() {
    // tp 2, cp 2, dp 2, pp 2 in order tp-cp-ep-dp-pp: strides tp 1, cp 2, dp 4, pp 8.
    MeshShape s;
    s.tp = 2;
    s.cp = 2;
    s.dp = 2;
    s.pp = 2;
    const DeviceMesh m(s, 8);
    QCOMPARE(m.groups(Axis::Cp).front(), (std::vector<int>{0, 2}));
    QCOMPARE(m.groups(Axis::Dp).front(), (std::vector<int>{0, 4}));
    QCOMPARE(m.groups(Axis::DpCp).front(), (std::vector<int>{0, 2, 4, 6}));
    QCOMPARE(m.groups(Axis::DpCp).size(), std::size_t{4});
    QCOMPARE(m.groups(Axis::Pp).front(), (std::vector<int>{0, 8}));
}

void TestMesh::expert_folding() {
    // Megatron-Core MoE parallel folding: tp 2, dp 4 (8 ranks/stage), ep 2, etp 1 →
    // edp = 8 / 2 = 4; the expert mesh orders etp(1)-ep(2)-edp(4)-pp.
    MeshShape s;
    s.tp = 2;
    s.dp = 4;
    s.ep = 2;
    s.etp = 1;
    const DeviceMesh m(s, 8);
    QCOMPARE(m.edp(), 4);
    QCOMPARE(m.groups(Axis::Ep), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
    QCOMPARE(m.groups(Axis::Edp), (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
    QCOMPARE(m.groups(Axis::Etp).size(), std::size_t{8});
    // ep 4, etp 2 on tp 2 dp 4: edp 1, one EP group of 4 with stride etp.
    s.ep = 4;
    s.etp = 2;
    const DeviceMesh m2(s, 8);
    QCOMPARE(m2.edp(), 1);
    QCOMPARE(m2.groups(Axis::Etp).front(), (std::vector<int>{0, 1}));
    QCOMPARE(m2.groups(Axis::Ep).front(), (std::vector<int>{0, 2, 4, 6}));
    // ep × etp must divide tp × cp × dp.
    s.ep = 3;
    s.etp = 1;
    QVERIFY_THROWS_EXCEPTION(InputError, DeviceMesh(s, 8));
}

void TestMesh::custom_order() {
    // "dp-tp-cp-ep-pp": dp varies fastest, so a TP group strides over the dp size.
    MeshShape s;
    s.tp = 2;
    s.dp = 4;
    s.order = "dp-tp-cp-ep-pp";
    const DeviceMesh m(s, 8);
    QCOMPARE(m.groups(Axis::Dp).front(), (std::vector<int>{0, 1, 2, 3}));
    QCOMPARE(m.groups(Axis::Tp).front(), (std::vector<int>{0, 4}));
}

void TestMesh::nodes_and_local_gpus() {
    MeshShape s;
    s.tp = 8;
    s.pp = 16;
    s.dp = 128;
    const DeviceMesh m(s, 8);
    QCOMPARE(m.world_size(), 16384);
    QCOMPARE(m.num_nodes(), 2048);
    QCOMPARE(m.node_of(9), 1);
    QCOMPARE(m.local_gpu_of(9), 1);
    QCOMPARE(m.node_of(16383), 2047);
    QCOMPARE(m.groups(Axis::Dp).size(), std::size_t{128});
    QCOMPARE(m.group_of(0, Axis::Pp).back(), 15 * 1024);
}

void TestMesh::coords_round_trip() {
    MeshShape s;
    s.tp = 2;
    s.cp = 2;
    s.dp = 3;
    s.pp = 2;
    s.ep = 3;
    s.order = "tp-cp-ep-dp-pp";
    const DeviceMesh m(s, 4);
    for (int r = 0; r < m.world_size(); ++r) QCOMPARE(m.rank_of(m.coords(r)), r);
}

// group_of and group_first_rank compute one group from the rank's coordinates; they must
// give the member of groups() that holds the rank, for every rank and axis, in orders where
// dp is faster than cp and slower, with folded experts.
void TestMesh::group_of_is_the_group_that_holds_the_rank() {
    MeshShape s;
    s.tp = 2;
    s.cp = 2;
    s.dp = 3;
    s.pp = 2;
    s.ep = 3;
    s.etp = 2;
    for (const char* order : {"tp-cp-ep-dp-pp", "tp-dp-ep-cp-pp", "dp-pp-ep-cp-tp"}) {
        s.order = order;
        const DeviceMesh m(s, 4);
        for (std::size_t a = 0; a < kAxisCount; ++a) {
            const Axis axis = static_cast<Axis>(a);
            for (const auto& g : m.groups(axis)) {
                for (int r : g) {
                    QCOMPARE(m.group_of(r, axis), g);
                    QCOMPARE(m.group_first_rank(r, axis), g.front());
                }
            }
        }
        QVERIFY(m.group_of(-1, Axis::Tp).empty());
        QVERIFY(m.group_of(m.world_size(), Axis::Dp).empty());
        QCOMPARE(m.group_first_rank(m.world_size(), Axis::Dp), -1);
    }
}

void TestMesh::bad_order() {
    MeshShape s;
    for (const char* order : {"tp-cp-dp-pp", "tp-tp-ep-dp-pp", "tp,cp,ep,dp,pp", "", "xx-cp-ep-dp-pp"}) {
        s.order = order;
        try {
            DeviceMesh m(s, 8);
            QFAIL(order);
        } catch (const InputError& e) {
            QCOMPARE(e.issues().front().field, std::string("parallel.order"));
        }
    }
}

void TestMesh::schedules_cover_every_pass() {
    for (Schedule kind : {Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved}) {
        const int vpp = kind == Schedule::Interleaved ? 2 : 1;
        const auto s = build_pipeline_schedule(kind, 4, vpp, 8);
        for (int r = 0; r < 4; ++r) {
            std::set<std::tuple<int, int, int>> seen;
            std::set<std::pair<int, int>> forwarded;
            for (const auto& op : s.ops[r]) {
                QVERIFY(seen.insert({static_cast<int>(op.kind), op.micro_batch, op.chunk}).second);
                if (op.kind == PipeOpKind::Forward) forwarded.insert({op.micro_batch, op.chunk});
                else QVERIFY2(forwarded.count({op.micro_batch, op.chunk}), "backward before forward");
            }
            QCOMPARE(seen.size(), std::size_t(2 * 8 * vpp));
        }
    }
}

void TestMesh::one_f_one_b_warmup() {
    // PipeDream-Flush: rank r holds at most pp - r micro-batches; GPipe holds all m.
    const auto s = build_pipeline_schedule(Schedule::OneFOneB, 4, 1, 8);
    for (int r = 0; r < 4; ++r) {
        QCOMPARE(s.warmup_forwards(r), 4 - r);  // warm-up pp-r-1, then the first 1F1B forward
        QCOMPARE(s.max_in_flight(r), 4 - r);
    }
    const auto g = build_pipeline_schedule(Schedule::GPipe, 4, 1, 8);
    QCOMPARE(g.max_in_flight(0), 8);
}

void TestMesh::interleaved_matches_megatron_order() {
    // pp 2, vpp 2, m 4. Megatron: forward k runs chunk (k/pp)%vpp on micro-batch
    // (k/(pp·vpp))·pp + k%pp; rank 0 warms up (pp-1)·2 + (vpp-1)·pp = 4 forwards.
    const auto s = build_pipeline_schedule(Schedule::Interleaved, 2, 2, 4);
    std::vector<std::string> rank0;
    for (const auto& op : s.ops[0]) rank0.push_back(to_string(op));
    const std::vector<std::string> expected{"F0", "F1", "F0.1", "F1.1", "F2", "B0.1", "F3",
                                            "B1.1", "F2.1", "B0", "F3.1", "B1", "B2.1", "B3.1",
                                            "B2", "B3"};
    QCOMPARE(rank0, expected);
    QVERIFY_THROWS_EXCEPTION(InputError, build_pipeline_schedule(Schedule::Interleaved, 4, 2, 3));
    // Megatron's micro-batch group (model_parallel_config.py:431, schedules.py:1160-1181): pp
    // when pp divides m, else the smallest group in [pp, m] whose last group is 0 or ≥ pp.
    QCOMPARE(interleaved_group_size(4, 8), 4);
    QCOMPARE(interleaved_group_size(4, 6), 6);
    QCOMPARE(interleaved_group_size(4, 10), 5);
    QCOMPARE(interleaved_group_size(4, 9), 5);  // a group of 4 leaves 1, of 5 leaves 4
    QCOMPARE(interleaved_group_size(4, 3), 0);
    // m 3 on pp 2: one group of 3; rank 0 warms up (pp-1)·2 + (vpp-1)·3 = 5 forwards.
    const auto odd = build_pipeline_schedule(Schedule::Interleaved, 2, 2, 3);
    std::vector<std::string> odd0;
    for (const auto& op : odd.ops[0]) odd0.push_back(to_string(op));
    const std::vector<std::string> odd_expected{"F0", "F1", "F2", "F0.1", "F1.1", "F2.1", "B0.1",
                                                "B1.1", "B2.1", "B0", "B1", "B2"};
    QCOMPARE(odd0, odd_expected);
}

QTEST_GUILESS_MAIN(TestMesh)
#include "tst_mesh.moc"
