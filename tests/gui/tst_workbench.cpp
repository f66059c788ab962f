// The workbench as a person uses it: drag blocks and experts from the model palette onto
// the mesh canvas, edit axes, undo; refused edits say why where they were dropped.
#include <QtTest>

#include <QDragEnterEvent>
#include <QCheckBox>
#include <QComboBox>
#include <QSpinBox>
#include <QUndoStack>
#include <QTreeWidget>

#include <cstdlib>

#include "core/cost/cost_model.h"
#include "gui/document/layout_document.h"
#include "gui/document/layout_mime.h"
#include "gui/estimate/assessment_runner.h"
#include "gui/estimate/estimate_panel.h"
#include "gui/mainwindow/main_window.h"
#include "gui/mesh/axis_editor.h"
#include "gui/mesh/mesh_canvas.h"
#include "gui/model/model_palette.h"
#include "gui/model/model_tree.h"
#include "gui/timeline/timeline_panel.h"
#include "gui/timeline/timeline_view.h"

using namespace meshwork;
using namespace meshwork::gui;

namespace {
QString bundled(const char* name) { return QString(MESHWORK_RESOURCES_DIR) + "/layouts/" + name + ".json"; }

// Drops `mime` on the canvas at `pos` through the same events a real drag delivers.
void drop(MeshCanvas* canvas, QMimeData* mime, QPoint pos) {
    QDragEnterEvent enter(pos, Qt::MoveAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(canvas, &enter);
    QDragMoveEvent move(pos, Qt::MoveAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(canvas, &move);
    QDropEvent dropped(QPointF(pos), Qt::MoveAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(canvas, &dropped);
}

// The drag payload the model palette builds for the given tree items.
QMimeData* palette_drag(ModelTree* tree, const QList<QTreeWidgetItem*>& items) {
    tree->clearSelection();
    for (auto* item : items) item->setSelected(true);
    return tree->model()->mimeData(tree->selectionModel()->selectedIndexes());
}
}  // namespace

class TstWorkbench : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("MeshworkTests");
        QCoreApplication::setApplicationName("tst_gui_workbench");
        QSettings().clear();
    }

    void drop_block_on_stage_moves_the_boundary_and_undo_restores_it() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* estimate = w.estimate_panel();
        estimate->runner()->wait();
        QTRY_VERIFY(estimate->current().has_value());
        const auto before_generation = estimate->current()->generation;
        QSignalSpy assessed(estimate, &EstimatePanel::assessed);

        auto* tree = w.palette()->tree();
        std::unique_ptr<QMimeData> mime(palette_drag(tree, {tree->block_item(20)}));
        QVERIFY(mime && mime->hasFormat(kBlocksMime));
        drop(w.canvas(), mime.get(), w.canvas()->stage_drop_point(0));
        QCOMPARE(w.document()->layout().placement.layers_per_stage, (std::vector<int>{21, 19, 20, 20}));
        QVERIFY(w.canvas()->last_refusal().isEmpty());
        QCOMPARE(tree->block_item(20)->text(ModelTree::PlaceColumn), QString("S0"));
        // The estimate follows the edit, off the UI thread.
        QTRY_VERIFY(!assessed.isEmpty());
        QVERIFY(estimate->current()->generation > before_generation);
        QVERIFY(w.isWindowModified());

        w.document()->undo_stack()->undo();
        QCOMPARE(w.document()->layout().placement.layers_per_stage, (std::vector<int>{20, 20, 20, 20}));
        QCOMPARE(tree->block_item(20)->text(ModelTree::PlaceColumn), QString("S1"));
        QVERIFY(!w.document()->is_modified());
    }

    void impossible_drop_is_refused_with_its_reason() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const Layout before = w.document()->layout();
        QSignalSpy refused(w.canvas(), &MeshCanvas::edit_refused);
        auto* tree = w.palette()->tree();
        QList<QTreeWidgetItem*> stage1;
        for (int b = 20; b < 40; ++b) stage1 << tree->block_item(b);
        std::unique_ptr<QMimeData> mime(palette_drag(tree, stage1));
        drop(w.canvas(), mime.get(), w.canvas()->stage_drop_point(0));
        QVERIFY(w.document()->layout() == before);
        QCOMPARE(refused.count(), 1);
        const QString reason = w.canvas()->last_refusal();
        QVERIFY2(reason.contains("stage 1 would hold 0 layers") && reason.contains("at least one layer"), qPrintable(reason));
        QCOMPARE(w.document()->undo_stack()->count(), 0);
    }

    void expert_drop_on_a_tile_moves_it_to_that_ep_rank() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("tiny-moe-cpu")));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* tree = w.palette()->tree();
        QVERIFY(tree->expert_item(0));
        // Find a tile whose EP coordinate is 1.
        int rank_on_ep1 = -1;
        for (const auto& t : w.canvas()->geometry().tiles) {
            if (t.coords.ep == 1) rank_on_ep1 = t.rank;
        }
        QVERIFY(rank_on_ep1 >= 0);
        std::unique_ptr<QMimeData> mime(palette_drag(tree, {tree->expert_item(0)}));
        QVERIFY(mime->hasFormat(kExpertsMime));
        drop(w.canvas(), mime.get(), w.canvas()->tile_center(rank_on_ep1));
        QCOMPARE(w.document()->layout().placement.experts_per_ep_rank,
                 (std::vector<std::vector<int>>{{1, 2, 3}, {0, 4, 5, 6, 7}}));
        QCOMPARE(tree->expert_item(0)->text(ModelTree::PlaceColumn), QString("EP1"));
        // Emptying EP rank 0 is impossible: refused, in words.
        std::unique_ptr<QMimeData> rest(palette_drag(tree, {tree->expert_item(1), tree->expert_item(2), tree->expert_item(3)}));
        drop(w.canvas(), rest.get(), w.canvas()->tile_center(rank_on_ep1));
        QVERIFY2(w.canvas()->last_refusal().contains("EP rank 0 would hold 0 experts"), qPrintable(w.canvas()->last_refusal()));
    }

    void axis_edits_update_the_canvas() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(static_cast<int>(w.canvas()->geometry().stages.size()), 4);
        w.axis_editor()->spin_box("pp")->setValue(2);
        QCOMPARE(w.document()->layout().parallel.mesh.pp, 2);
        QCOMPARE(w.document()->layout().parallel.mesh.dp, 4);
        QCOMPARE(static_cast<int>(w.canvas()->geometry().stages.size()), 2);
        // tp 3 cannot divide 64 GPUs: refused, the spin box snaps back and says why.
        w.axis_editor()->spin_box("tp")->setValue(3);
        QCOMPARE(w.document()->layout().parallel.mesh.tp, 8);
        QCOMPARE(w.axis_editor()->spin_box("tp")->value(), 8);
        QVERIFY(!w.axis_editor()->last_refusal().isEmpty());
        w.document()->undo_stack()->undo();
        QCOMPARE(static_cast<int>(w.canvas()->geometry().stages.size()), 4);
        QCOMPARE(w.axis_editor()->spin_box("pp")->value(), 4);
    }

    // The TP communication overlap chooser (parallel.tp_comm_overlap) edits the layout as a
    // person does (keys on the chooser), the estimate follows, undo and redo walk it back and
    // forth; turning sequence parallelism off turns the overlap off with it (it needs SP).
    void tp_overlap_chooser_changes_the_estimate_with_undo() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));  // tp 8 with SP
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* estimate = w.estimate_panel();
        auto step_s = [&] {
            for (const auto& f : estimate->current()->figures) {
                if (f.key == "step_time_s") return f.value;
            }
            return -1.0;
        };
        estimate->runner()->wait();
        QTRY_VERIFY(estimate->current().has_value());
        const double none_s = step_s();
        QVERIFY(none_s > 0);
        auto* box = w.axis_editor()->tp_overlap_box();
        QVERIFY(box->isEnabled());
        QCOMPARE(box->currentData().toString(), QString("none"));
        QCOMPARE(box->count(), 3);

        QSignalSpy assessed(estimate, &EstimatePanel::assessed);
        box->setFocus();
        QTest::keyClick(box, Qt::Key_End);  // the last item: ring
        QCOMPARE(w.document()->layout().parallel.tp_comm_overlap, TpOverlap::Ring);
        QCOMPARE(w.document()->undo_stack()->undoText(), QString("Set TP communication overlap ring"));
        QTRY_VERIFY(!assessed.isEmpty());
        const double ring_s = step_s();
        // The SP collectives of tp 8 now run tiled beside their GEMMs: the step is shorter.
        QVERIFY2(ring_s < none_s * 0.99, qPrintable(QString("%1 vs %2 s").arg(ring_s).arg(none_s)));

        assessed.clear();
        QTest::keyClick(box, Qt::Key_Up);  // pipe: one transfer tile per collective exposed
        QCOMPARE(w.document()->layout().parallel.tp_comm_overlap, TpOverlap::Pipe);
        QTRY_VERIFY(!assessed.isEmpty());
        const double pipe_s = step_s();
        QVERIFY2(pipe_s > ring_s && pipe_s < none_s, qPrintable(QString("%1 s").arg(pipe_s)));

        assessed.clear();
        w.document()->undo_stack()->undo();  // back to ring
        QCOMPARE(box->currentData().toString(), QString("ring"));
        QTRY_VERIFY(!assessed.isEmpty());
        QCOMPARE(step_s(), ring_s);
        w.document()->undo_stack()->undo();  // back to none
        QCOMPARE(w.document()->layout().parallel.tp_comm_overlap, TpOverlap::None);
        QCOMPARE(box->currentData().toString(), QString("none"));
        w.document()->undo_stack()->redo();
        QCOMPARE(w.document()->layout().parallel.tp_comm_overlap, TpOverlap::Ring);

        // Sequence parallelism off: the overlap goes with it, and the chooser closes.
        auto* sp = w.axis_editor()->sequence_parallel_box();
        QVERIFY(sp->isChecked());
        sp->click();
        QVERIFY(!w.document()->layout().parallel.sequence_parallel);
        QCOMPARE(w.document()->layout().parallel.tp_comm_overlap, TpOverlap::None);
        QVERIFY(!box->isEnabled());
        w.document()->undo_stack()->undo();
        QVERIFY(sp->isChecked());
        QCOMPARE(box->currentData().toString(), QString("ring"));
        QVERIFY(box->isEnabled());
    }

    // The data-parallel overlaps, an undoable edit from their box: off, they never make the
    // step shorter. (The gradients' type is the Training dock's: tst_gui_training.)
    void dp_overlap_is_an_edit() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));  // dp 2, bf16, ZeRO-1
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* dp = w.axis_editor()->dp_overlap_box();
        QVERIFY(dp->isEnabled() && dp->isChecked());  // the layout default: both overlaps on
        const Estimate before = estimate_layout(w.document()->layout());
        dp->setFocus();
        QTest::keyClick(dp, Qt::Key_Space);
        QVERIFY(!w.document()->layout().parallel.overlap_grad_reduce);
        QVERIFY(!w.document()->layout().parallel.overlap_param_gather);
        QVERIFY(estimate_layout(w.document()->layout()).step_time_s >= before.step_time_s);
        w.document()->undo_stack()->undo();
        QVERIFY(dp->isChecked() && w.document()->layout().parallel.overlap_grad_reduce);
        w.document()->undo_stack()->redo();
        QVERIFY(!dp->isChecked());
    }

    // MoE dispatch from the Parallelism dock, by keyboard: on Mixtral with EP 8 across two
    // nodes (expert TP 2 · ep 8), per-node dispatch (flex) shortens the step; the all-to-all overlap
    // stays closed at pp 4 without virtual stages (Megatron-LM's rule, said in its tooltip),
    // opens with vpp 2 and shortens the step again; all-gather turns it off; undo walks back.
    void moe_dispatch_and_overlap_are_edits() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("mixtral-8x7b-h100-64")));  // tp 2, pp 4, ep 8, alltoall
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* dispatch = w.axis_editor()->moe_dispatch_box();
        auto* overlap = w.axis_editor()->moe_a2a_overlap_box();
        QVERIFY(dispatch->isEnabled());
        QCOMPARE(dispatch->currentData().toString(), QString("alltoall"));
        QVERIFY(!overlap->isEnabled() && !overlap->isChecked());
        QVERIFY(overlap->toolTip().contains("virtual stages"));
        auto* undo = w.document()->undo_stack();
        const Layout opened = w.document()->layout();
        w.axis_editor()->spin_box("etp")->setValue(2);  // the EP group of 8 now spans two nodes
        QCOMPARE(w.document()->layout().parallel.mesh.etp, 2);
        const double alltoall_s = estimate_layout(w.document()->layout()).step_time_s;

        dispatch->setFocus();
        QTest::keyClick(dispatch, Qt::Key_Down);  // Flex · DeepEP
        QCOMPARE(w.document()->layout().parallel.moe_dispatcher, MoeDispatcher::Flex);
        QCOMPARE(w.document()->layout().parallel.moe_flex_backend, MoeFlexBackend::DeepEP);
        QCOMPARE(undo->undoText(), QString("Set MoE dispatch to flex (deepep)"));
        const double flex_s = estimate_layout(w.document()->layout()).step_time_s;
        qInfo("Mixtral 8x7B tp2 pp4 ep8 etp2 on 64 H100: alltoall %.3f s, flex %.3f s", alltoall_s, flex_s);
        QVERIFY2(flex_s < alltoall_s, qPrintable(QString("%1 vs %2 s").arg(flex_s).arg(alltoall_s)));

        w.axis_editor()->spin_box("vpp")->setValue(2);
        QCOMPARE(w.document()->layout().parallel.vpp, 2);
        QVERIFY(overlap->isEnabled());
        const double vpp_s = estimate_layout(w.document()->layout()).step_time_s;
        overlap->setFocus();
        QTest::keyClick(overlap, Qt::Key_Space);
        QVERIFY(w.document()->layout().parallel.moe_a2a_overlap);
        const double overlap_s = estimate_layout(w.document()->layout()).step_time_s;
        qInfo("with vpp 2: overlap off %.3f s, on %.3f s", vpp_s, overlap_s);
        QVERIFY2(overlap_s < vpp_s, qPrintable(QString("%1 vs %2 s").arg(overlap_s).arg(vpp_s)));

        // All-gather overlaps nothing: choosing it turns the overlap off and closes the box.
        dispatch->setFocus();
        QTest::keyClick(dispatch, Qt::Key_Home);
        QCOMPARE(w.document()->layout().parallel.moe_dispatcher, MoeDispatcher::AllGather);
        QVERIFY(!w.document()->layout().parallel.moe_a2a_overlap);
        QVERIFY(!overlap->isChecked() && !overlap->isEnabled());
        undo->undo();
        QVERIFY(overlap->isChecked() && overlap->isEnabled());
        QCOMPARE(dispatch->currentData().toString(), QString("flex:deepep"));
        for (int i = 0; i < 4; ++i) undo->undo();  // overlap, vpp, dispatch, etp
        QVERIFY(w.document()->layout() == opened);
        QCOMPARE(dispatch->currentData().toString(), QString("alltoall"));
    }

    void estimate_after_an_edit_fits_its_budget() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy assessed(w.estimate_panel(), &EstimatePanel::assessed);
        w.estimate_panel()->runner()->wait();  // the assessment of the opened layout
        QCoreApplication::processEvents();
        assessed.clear();
        QVERIFY(w.document()->apply(move_blocks_to_stage(w.document()->layout(), {20}, 0)).accepted);
        QTRY_VERIFY(!assessed.isEmpty());
        const double latency_ms = assessed.takeFirst().at(0).toDouble();
        const double compute_ms = w.estimate_panel()->current()->elapsed_ms;
        qInfo("assessment %.2f ms; edit to result shown %.2f ms", compute_ms, latency_ms);
        // Both figures are measured in docs/BENCHMARKS.md (bench_gui_workbench), not asserted
        // here: a loaded machine makes any bound on them fail a good build (issue 31). What
        // is checked is that the edit was assessed and shown.
        QVERIFY(compute_ms > 0 && latency_ms > 0);
    }

    void corrupt_trace_shows_an_error() {
        QTemporaryDir dir;
        const QString path = dir.filePath("corrupt.sqlite");
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray("SQLite format 3\0", 16) + QByteArray(4096, '\x5a'));
        }
        MainWindow w;
        QVERIFY(w.open_layout(bundled("tiny-cpu")));
        QSignalSpy failed(&w, &MainWindow::trace_failed);
        w.open_trace(path);
        QTRY_COMPARE(failed.count(), 1);
        QVERIFY(!w.last_error().isEmpty());
        QVERIFY(w.timeline()->view()->source() == nullptr);
    }

    void bad_layout_file_shows_an_error() {
        QTemporaryDir dir;
        const QString path = dir.filePath("bad.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"format\": \"meshwork-layout\", \"version\": 1, \"gpus\": \"many\"}");
        f.close();
        MainWindow w;
        QVERIFY(!w.open_layout(path));
        QVERIFY(w.last_error().contains("bad.json"));
        QVERIFY(!w.document()->has_layout());
    }
};

QTEST_MAIN(TstWorkbench)
#include "tst_workbench.moc"
