// The GUI at cluster scale: ranks grouped by mesh coordinates (pipeline stage, dp replica,
// then tp), the overview's colour scale and what its cells show, clicks and keys that open
// ranks in the timeline, and the timeline's lane groups collapsing and expanding.
#include <QtTest>

#include <QScrollBar>
#include <QSignalSpy>

#include <set>

#include "gui/mainwindow/main_window.h"
#include "gui/ranks/heat_scale.h"
#include "gui/ranks/rank_grouping.h"
#include "gui/ranks/rank_overview.h"
#include "gui/ranks/rank_overview_panel.h"
#include "gui/timeline/lane_groups.h"
#include "gui/timeline/memory_timeline_source.h"
#include "gui/timeline/timeline_panel.h"
#include "gui/timeline/timeline_view.h"
#include "tests/gui/cluster_trace.h"

using namespace meshwork;
using namespace meshwork::gui;

namespace {

DeviceMesh make_mesh(int tp, int dp, int pp, std::string order = std::string(kDefaultAxisOrder)) {
    MeshShape shape;
    shape.tp = tp;
    shape.dp = dp;
    shape.pp = pp;
    shape.order = std::move(order);
    return DeviceMesh(shape, 8);
}

std::vector<int> iota_ranks(int n) {
    std::vector<int> r(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) r[static_cast<std::size_t>(i)] = i;
    return r;
}

// ranks × steps, step time 10 ms + rank·0.1 ms + step·1 ms; exposed comm the reverse order
// of ranks; step 0 (warm-up) ten times longer; one absent cell (rank 3, step 2).
profiler::RankStepMatrix make_matrix(int ranks, int steps) {
    profiler::RankStepMatrix m;
    m.ranks = iota_ranks(ranks);
    for (int s = 0; s < steps; ++s) m.steps.push_back(s);
    for (int r = 0; r < ranks; ++r) {
        for (int s = 0; s < steps; ++s) {
            profiler::RankStepCell c;
            c.present = !(r == 3 && s == 2);
            c.step_s = (10e-3 + r * 1e-4 + s * 1e-3) * (s == 0 ? 10 : 1);
            c.compute_s = c.step_s * 0.7;
            c.exposed_comm_s = (ranks - r) * 1e-4;
            m.cells.push_back(c);
        }
    }
    return m;
}

// One lane per rank and stream (compute, comm:tp, comm:dp), one event each, carrying `mesh`.
std::shared_ptr<MemoryTimelineSource> make_source(const DeviceMesh& mesh) {
    auto source = std::make_shared<MemoryTimelineSource>();
    for (int r = 0; r < mesh.world_size(); ++r) {
        const int lanes[] = {source->add_lane({r, TrackKind::ComputeStream, "compute"}),
                             source->add_lane({r, TrackKind::CommStream, "comm:tp"}),
                             source->add_lane({r, TrackKind::CommStream, "comm:dp"})};
        for (int lane : lanes) {
            TraceEvent e;
            e.rank = r;
            e.kind = lane % 3 == 0 ? EventKind::Compute : EventKind::Communication;
            e.name = lane % 3 == 0 ? "gemm" : "all_reduce";
            e.start_ns = 1000 * (lane % 3);
            e.end_ns = e.start_ns + 500;
            source->add_event(lane, e);
        }
    }
    source->set_mesh(mesh);
    return source;
}

QPoint centre(const QRect& r) { return r.center(); }

}  // namespace

class TstRankOverview : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    // A rank order with pp inside dp ("tp-cp-ep-pp-dp") numbers ranks otherwise than the
    // grouping: rows follow coordinates, not rank numbers.
    void grouping_orders_by_stage_replica_then_tp() {
        const auto mesh = make_mesh(2, 2, 2, std::string(kTpPpDpAxisOrder));
        const auto g = group_ranks({7, 6, 5, 4, 3, 2, 1, 0}, &mesh);
        QVERIFY(g.by_mesh);
        QCOMPARE(g.depth_count, 2);
        QCOMPARE(g.ranks.size(), std::size_t{8});
        for (std::size_t row = 0; row < g.ranks.size(); ++row) {
            QCOMPARE(g.coords[row], mesh.coords(g.ranks[row]));
            if (row == 0) continue;
            const auto& a = g.coords[row - 1];
            const auto& b = g.coords[row];
            QVERIFY(std::tie(a.pp, a.dp, a.tp) < std::tie(b.pp, b.dp, b.tp));
        }
        QVERIFY(g.ranks != iota_ranks(8));  // this order is not rank order
        // pp 0 {dp 0, dp 1}, pp 1 {dp 0, dp 1}, in pre-order.
        QCOMPARE(g.groups.size(), std::size_t{6});
        QCOMPARE(RankGrouping::label(g.groups[0]), std::string("pp 0"));
        QCOMPARE(g.groups[0].first_row, 0);
        QCOMPARE(g.groups[0].last_row, 3);
        QCOMPARE(RankGrouping::label(g.groups[2]), std::string("dp 1"));
        QCOMPARE(g.groups[2].parent, 0);
        QCOMPARE(g.groups[2].depth, 1);
        QCOMPARE(g.groups[2].size(), 2);
        QCOMPARE(RankGrouping::label(g.groups[3]), std::string("pp 1"));
        QCOMPARE(g.groups[5].parent, 3);
        for (int r : g.ranks_of(g.groups[5])) {
            QCOMPARE(mesh.coords(r).pp, 1);
            QCOMPARE(mesh.coords(r).dp, 1);
        }
        QCOMPARE(g.innermost_group_of_row(5), 4);
    }

    void grouping_without_a_mesh_or_with_one_level() {
        const auto flat = group_ranks({3, 1, 2, 0}, nullptr);
        QCOMPARE(flat.ranks, iota_ranks(4));
        QVERIFY(flat.groups.empty());
        QVERIFY(!flat.by_mesh);
        // pp = 1 makes no stage level; ranks beyond the mesh go last, ungrouped.
        const auto mesh = make_mesh(2, 2, 1);
        const auto g = group_ranks({9, 0, 1, 2, 3}, &mesh);
        QCOMPARE(g.depth_count, 1);
        QCOMPARE(g.groups.size(), std::size_t{2});
        QVERIFY(g.groups[0].axis == Axis::Dp);
        QCOMPARE(g.groups[0].depth, 0);
        QCOMPARE(g.ranks.back(), 9);
        QCOMPARE(g.unplaced_first_row, 4);
        QCOMPARE(g.innermost_group_of_row(4), -1);
    }

    void colour_scale() {
        // viridis' ends, and a ramp that gets lighter all the way (the slow end stands out).
        QCOMPARE(HeatScale::ramp(0.0), QColor(68, 1, 84));
        QCOMPARE(HeatScale::ramp(1.0), QColor(253, 231, 37));
        auto luma = [](const QColor& c) { return 0.299 * c.red() + 0.587 * c.green() + 0.114 * c.blue(); };
        for (int i = 1; i <= 50; ++i) QVERIFY(luma(HeatScale::ramp(i / 50.0)) > luma(HeatScale::ramp((i - 1) / 50.0)));
        const HeatScale s(1.0, 3.0);
        QCOMPARE(s.fraction(2.0), 0.5);
        QCOMPARE(s.fraction(0.0), 0.0);
        QCOMPARE(s.fraction(9.0), 1.0);
        QCOMPARE(HeatScale(2.0, 2.0).fraction(2.0), 0.5);

        // The warm-up step (10× longer) stays out of the range; absent cells count nowhere.
        auto m = make_matrix(8, 4);
        const auto step_scale = HeatScale::over(m, RankMetric::StepTime);
        QCOMPARE(step_scale.warmup_steps(), 1);
        QCOMPARE(step_scale.low_s(), 11e-3);
        QCOMPARE(step_scale.high_s(), 13e-3 + 7e-4);
        QVERIFY(step_scale.clamps_high());
        QVERIFY(!step_scale.clamps_low());
        m.cells[3 * 4 + 2].step_s = 1.0;  // absent: ignored
        QCOMPARE(HeatScale::over(m, RankMetric::StepTime).high_s(), 13e-3 + 7e-4);
        const auto comm = HeatScale::over(m, RankMetric::ExposedComm);
        QCOMPARE(comm.low_s(), 1e-4);
        QCOMPARE(comm.high_s(), 8e-4);
        // Two steps: both count.
        QCOMPARE(HeatScale::over(make_matrix(2, 2), RankMetric::StepTime).warmup_steps(), 0);
    }

    void cells_show_their_colour_and_open_ranks() {
        const auto mesh = make_mesh(2, 2, 2, std::string(kTpPpDpAxisOrder));
        auto data = std::make_shared<RankOverviewData>(make_rank_overview_data(make_matrix(8, 4), &mesh, "t"));
        RankOverview view;
        view.resize(900, 500);
        view.set_data(data);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(view.data()->grouping.depth_count, 2);

        auto pixel = [&](RankOverview::Cell c) {
            return view.viewport()->grab().toImage().pixelColor(centre(view.cell_rect(c)));
        };
        const auto& scale = view.scale();
        for (int row : {0, 5, 7}) {
            for (int s : {1, 3}) {
                const double v = data->cell(row, s).step_s;
                QCOMPARE(pixel({row, s}), scale.colour(v));
            }
        }
        // Rows are grouped: the row of rank r shows rank r's numbers.
        const int row_of_6 = data->grouping.row_of(6);
        QCOMPARE(data->cell(row_of_6, 1).step_s, data->matrix.at(6, 1).step_s);
        // The other metric recolours.
        const QColor before = pixel({row_of_6, 1});
        view.set_metric(RankMetric::ExposedComm);
        QCOMPARE(pixel({row_of_6, 1}), view.scale().colour(data->matrix.at(6, 1).exposed_comm_s));
        QVERIFY(pixel({row_of_6, 1}) != before);

        QSignalSpy opened(&view, &RankOverview::ranks_requested);
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, centre(view.cell_rect({row_of_6, 2})));
        QCOMPARE(opened.count(), 1);
        QCOMPARE(opened.last().at(0).value<QList<int>>(), QList<int>{6});
        QCOMPARE(opened.last().at(1).toInt(), 2);
        // A group's label: its ranks, every step.
        const int replica = 4;  // pp 1, dp 0
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, centre(view.group_rect(replica)));
        QCOMPARE(opened.count(), 2);
        QList<int> expected;
        for (int r : data->grouping.ranks_of(data->grouping.groups[replica])) expected << r;
        QCOMPARE(opened.last().at(0).value<QList<int>>(), expected);
        QCOMPARE(opened.last().at(1).toInt(), -1);

        // Keyboard: from the clicked cell, Right then Down, Enter; Shift+Enter its replica.
        view.setFocus();
        QTest::keyClick(&view, Qt::Key_Right);
        QTest::keyClick(&view, Qt::Key_Down);
        QCOMPARE(*view.current(), (RankOverview::Cell{row_of_6 + 1, 3}));
        QTest::keyClick(&view, Qt::Key_Return);
        QCOMPARE(opened.last().at(0).value<QList<int>>(), QList<int>{data->grouping.ranks[row_of_6 + 1]});
        QCOMPARE(opened.last().at(1).toInt(), 3);
        QTest::keyClick(&view, Qt::Key_Return, Qt::ShiftModifier);
        QCOMPARE(opened.last().at(0).value<QList<int>>().size(), 2);
        QTest::keyClick(&view, Qt::Key_End, Qt::ControlModifier);
        QCOMPARE(view.current()->row, 7);
        QTest::keyClick(&view, Qt::Key_Home);
        QCOMPARE(view.current()->step_index, 0);
        QTest::keyClick(&view, Qt::Key_Down);  // clamped at the last row
        QCOMPARE(view.current()->row, 7);
    }

    // 1,024 ranks in 500 px: rows fold, a pixel row shows its slowest rank, and a click
    // there opens that rank.
    void thousands_of_ranks_fold_to_the_height() {
        auto m = make_matrix(1024, 3);
        m.cells[517 * 3 + 2].step_s = 1.0;  // one rank, one step, far slower than all others
        auto data = std::make_shared<RankOverviewData>(make_rank_overview_data(std::move(m), nullptr, "t"));
        RankOverview view;
        view.resize(700, 500);
        view.set_data(data);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(view.verticalScrollBar()->maximum(), 0);  // no scrolling: everything fits
        const QRect r = view.cell_rect({517, 2});
        QVERIFY(r.height() <= 1);
        QCOMPARE(view.scale().high_s(), 1.0);
        const QImage shot = view.viewport()->grab().toImage();
        QCOMPARE(shot.pixelColor(r.center()), HeatScale::ramp(1.0));
        QSignalSpy opened(&view, &RankOverview::ranks_requested);
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, r.center());
        QCOMPARE(opened.count(), 1);
        QCOMPARE(opened.last().at(0).value<QList<int>>(), QList<int>{517});
        QCOMPARE(opened.last().at(1).toInt(), 2);
        // Taller, the rows unfold and the view scrolls instead.
        view.resize(700, 1024 * 2 + 200);
        QApplication::processEvents();
        QVERIFY(view.cell_rect({517, 2}).height() >= 2);
    }

    void lane_groups_collapse_and_expand() {
        const auto mesh = make_mesh(2, 2, 2);
        const auto source = make_source(mesh);
        LaneGroups groups;
        groups.build(source.get());
        QVERIFY(groups.grouped());
        // 2 stage headers + 4 replica headers + 8 ranks × 3 lanes, nothing collapsed (24 lanes).
        QCOMPARE(groups.row_count(), 30);
        const auto all_open = groups.rows();
        const int replica = 2;  // pp 0, dp 1: ranks 2, 3
        QCOMPARE(groups.grouping().ranks_of(groups.grouping().groups[replica]), (std::vector<int>{2, 3}));
        groups.set_collapsed(replica, true);
        QCOMPARE(groups.row_count(), 30 - 6 + 1);
        const int header = groups.row_of_group(replica);
        QVERIFY(groups.rows()[static_cast<std::size_t>(header + 1)].kind == LaneRow::Kind::Summary);
        QCOMPARE(groups.summary_lanes(replica), (std::vector<int>{6}));  // its first rank's compute lane
        QCOMPARE(groups.row_of_lane(6), -1);
        QCOMPARE(groups.lanes_of_rows(header + 1, header + 1), (std::vector<int>{6, 7, 8, 9, 10, 11}));
        groups.toggle(replica);
        QVERIFY(groups.rows().size() == all_open.size());
        for (std::size_t i = 0; i < all_open.size(); ++i) {
            QVERIFY(groups.rows()[i].kind == all_open[i].kind);
            QCOMPARE(groups.rows()[i].lane, all_open[i].lane);
        }
        // A collapsed stage hides its replicas' headers too.
        groups.set_collapsed(0, true);
        QCOMPARE(groups.row_count(), 2 + 15);
        // Showing rank 5 opens pp 1 and dp 0 of it, and closes everything else.
        QVERIFY(groups.show_only_ranks({5}));
        QVERIFY(groups.collapsed(0));
        QVERIFY(!groups.collapsed(3));
        QVERIFY(!groups.collapsed(4));
        QVERIFY(groups.collapsed(5));
        QVERIFY(groups.row_of_lane(5 * 3) >= 0);
        QVERIFY(!groups.show_only_ranks({99}));
        // Revealing a hidden lane expands what holds it.
        QCOMPARE(groups.row_of_lane(0), -1);
        QVERIFY(groups.reveal_lane(0) >= 0);
        QVERIFY(!groups.collapsed(0) && !groups.collapsed(1));
        groups.set_all_collapsed(true);
        QCOMPARE(groups.row_count(), 4);  // two stages, each a header and a summary
    }

    void ungrouped_sources_keep_one_row_per_lane() {
        auto source = std::make_shared<MemoryTimelineSource>();
        for (int r = 0; r < 3; ++r) source->add_lane({r, TrackKind::ComputeStream, "compute"});
        LaneGroups groups;
        groups.build(source.get());
        QVERIFY(!groups.grouped());
        QCOMPARE(groups.row_count(), 3);
        for (int lane = 0; lane < 3; ++lane) QCOMPARE(groups.row_of_lane(lane), lane);
    }

    void timeline_headers_clicks_and_keys() {
        const auto mesh = make_mesh(2, 2, 2);
        const auto source = make_source(mesh);
        TimelineView view;
        view.resize(1000, 900);
        view.set_source(source);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const auto& groups = view.lane_groups();
        auto row_y = [&](int row) { return view.ruler_height() + row * view.lane_height() + view.lane_height() / 2; };
        // A click on a header toggles its group; the header stays where it was.
        const int replica = 1;
        const int header = groups.row_of_group(replica);
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, QPoint(60, row_y(header)));
        QVERIFY(groups.collapsed(replica));
        QCOMPARE(groups.row_of_group(replica), header);
        QCOMPARE(view.current_group(), replica);
        // Space toggles the current group back; Ctrl+Down moves to the next header.
        view.setFocus();
        QTest::keyClick(&view, Qt::Key_Space);
        QVERIFY(!groups.collapsed(replica));
        QTest::keyClick(&view, Qt::Key_Down, Qt::ControlModifier);
        QCOMPARE(view.current_group(), 2);
        QTest::keyClick(&view, Qt::Key_BracketLeft);
        QVERIFY(groups.collapsed(2));
        QTest::keyClick(&view, Qt::Key_BracketRight);
        QVERIFY(!groups.collapsed(2));
        // Collapsing one group, then all: Backspace steps back to the one collapsed.
        view.set_group_collapsed(3, true);
        QCOMPARE(groups.row_count(), 1 + 2 + 12 + 2);  // pp 0 open (its header, 2 replica headers, 12 lanes), pp 1 a summary
        QTest::keyClick(&view, Qt::Key_BraceLeft);
        QCOMPARE(groups.row_count(), 4);
        QTest::keyClick(&view, Qt::Key_Backspace);
        QCOMPARE(groups.row_count(), 17);
        QVERIFY(groups.collapsed(3) && !groups.collapsed(0));
        QTest::keyClick(&view, Qt::Key_BraceRight);
        QCOMPARE(groups.row_count(), 30);

        // A range over a collapsed group's summary row counts every lane of the group.
        view.set_group_collapsed(replica, true);
        int lanes = 0;
        const int summary = groups.row_of_group(replica) + 1;
        const auto stats = view.range_stats(summary, summary, 0, 5000, &lanes);
        QCOMPARE(lanes, 6);
        QCOMPARE(stats.events, std::int64_t{6});

        // The summary row draws the group's compute lanes: frames ask only for visible rows.
        QApplication::processEvents();
        view.viewport()->repaint();
        QVERIFY(view.last_frame_items() > 0);

        // show_ranks: rank 6's group opened, others collapsed, its lanes at the top.
        const auto rows_before = groups.row_count();
        QVERIFY(view.show_ranks({6}));
        const int row6 = groups.row_of_lane(6 * 3);
        QVERIFY(row6 >= 0);
        QVERIFY(view.first_visible_row() <= row6);
        QVERIFY(groups.collapsed(0));
        // ... and back to what was open before; ranks without lanes change nothing.
        QVERIFY(view.groups_back());
        QCOMPARE(groups.row_count(), rows_before);
        QVERIFY(!view.show_ranks({99}));
        QCOMPARE(groups.row_count(), rows_before);
        QVERIFY(view.show_ranks({6}));
        // Selecting an event inside a collapsed group opens it (event 0: rank 0's compute lane).
        QCOMPARE(groups.row_of_lane(0), -1);
        view.select_event(0);
        QVERIFY(groups.row_of_lane(0) >= 0);
    }

    void large_sources_open_with_replicas_collapsed() {
        const auto mesh = make_mesh(8, 8, 2);  // 128 ranks, 384 lanes
        const auto source = make_source(mesh);
        TimelineView view;
        view.resize(1200, 800);
        view.set_source(source);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const auto& groups = view.lane_groups();
        // 2 stages × (header + 8 replicas × (header + summary)).
        QCOMPARE(groups.row_count(), 2 * (1 + 8 * 2));
        const auto queries = view.source_queries();
        view.viewport()->repaint();
        const int visible_rows = groups.row_count();  // all fit in 800 px
        QVERIFY(view.source_queries() - queries <= static_cast<std::size_t>(visible_rows * LaneGroups::kSummaryRanks));
        QVERIFY(view.last_frame_items() > 0);
    }

    // The Ranks tab over a trace file with a layout: computed on a worker thread, grouped by
    // the trace's mesh; a click shows that rank's lanes in the timeline, at that step.
    void main_window_ranks_tab_end_to_end() {
        const QString path = dir_.filePath("cluster.sqlite");
        test::ClusterTraceShape shape;
        shape.tp = 2;
        shape.dp = 2;
        shape.pp = 2;
        shape.steps = 4;
        shape.slow_rank = 5;
        shape.slow_factor = 2.0;
        test::write_cluster_trace(shape, path.toStdString());

        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QSignalSpy opened(&w, &MainWindow::trace_opened);
        QSignalSpy ready(&w, &MainWindow::rank_overview_ready);
        w.open_trace(path);
        QVERIFY(opened.wait(20000));
        QCOMPARE(ready.count(), 0);  // computed when first looked at
        w.show_view(MainWindow::View::Ranks);
        QVERIFY(ready.wait(20000));
        auto* overview = w.rank_overview()->overview();
        const auto* data = overview->data();
        QVERIFY(data);
        QCOMPARE(data->grouping.ranks.size(), std::size_t{8});
        QCOMPARE(data->matrix.steps.size(), std::size_t{4});
        QVERIFY(data->grouping.by_mesh);
        // The slow rank computes longest in every step.
        for (std::size_t s = 0; s < data->matrix.steps.size(); ++s) {
            for (std::size_t r = 0; r < data->matrix.ranks.size(); ++r) {
                if (data->matrix.ranks[r] != 5) QVERIFY(data->matrix.at(r, s).compute_s < data->matrix.at(5, s).compute_s);
            }
        }
        QSignalSpy step_shown(&w, &MainWindow::step_shown);
        const int row = data->grouping.row_of(5);
        QTest::mouseClick(overview->viewport(), Qt::LeftButton, {}, overview->cell_rect({row, 2}).center());
        QVERIFY(step_shown.wait(20000));
        auto* view = w.timeline()->view();
        const auto& groups = view->lane_groups();
        std::set<int> shown_ranks;
        for (const auto& r : groups.rows()) {
            if (r.kind == LaneRow::Kind::Lane) shown_ranks.insert(view->source()->lane(r.lane).rank);
        }
        // Rank 5's replica (pp 1, dp 0: ranks 4 and 5) is open, every other group collapsed.
        QCOMPARE(shown_ranks, (std::set<int>{4, 5}));
        // ... at that step: its start is inside the window shown.
        const auto [t0, t1] = view->visible_window();
        const auto step_start = static_cast<double>(step_shown.last().at(0).toLongLong());
        QVERIFY(step_start > t0 && step_start < t1);
    }
};

QTEST_MAIN(TstRankOverview)
#include "tst_rank_overview.moc"
