// The defects a person who lives in Nsight Systems or Perfetto met first (issue 30), each
// driven as they met it: comparison roles taken from the traces, a window that never widens
// past a 1280×720 screen, valid versus fits, spin-box arrows that step through accepted
// values only, Kineto JSON through Open Trace, nested host slices, and the small ones (the
// toolbar's undo label, GPU counts, the Training dock's sideways scroll, the shortcuts
// dialog's height, a receive's rate).
#include <QtTest>

#include <QDialog>
#include <QDockWidget>
#include <QLineEdit>
#include <QScreen>
#include <QTimer>
#include <QFile>
#include <QCursor>
#include <QHeaderView>
#include <QLabel>
#include <QComboBox>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QPainter>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QWheelEvent>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTextBrowser>
#include <QToolBar>
#include <QToolButton>
#include <QTreeWidget>
#include <QUndoStack>

#include <map>
#include <set>

#include "core/engine/backend_registry.h"
#include "core/layout/layout_json.h"
#include "core/sim/simulate.h"
#include "gui/app/theme.h"
#include "gui/compare/compare_panel.h"
#include "gui/compare/comparison_loader.h"
#include "gui/compare/trace_roles.h"
#include "gui/document/issue_words.h"
#include "gui/dialogs/run_dialog.h"
#include "gui/document/layout_document.h"
#include "gui/document/layout_edits.h"
#include "gui/estimate/assessment_runner.h"
#include "gui/estimate/estimate_panel.h"
#include "gui/estimate/figure_text.h"
#include "gui/mainwindow/dropped_files.h"
#include "gui/mainwindow/main_window.h"
#include "gui/timeline/timeline_view.h"
#include "gui/mainwindow/shortcuts_dialog.h"
#include "gui/mainwindow/start_page.h"
#include "gui/mainwindow/trace_menu.h"
#include "gui/mesh/axis_editor.h"
#include "gui/mesh/mesh_canvas.h"
#include "gui/mesh/mesh_geometry.h"
#include "gui/timeline/memory_timeline_source.h"
#include "gui/timeline/peer_flows.h"
#include "gui/timeline/selection_stats_table.h"
#include "gui/timeline/timeline_panel.h"
#include "gui/timeline/trace_reader_source.h"
#include "gui/training/training_editor.h"
#include "profiler/import/import_trace.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_writer.h"
#include "tests/gui/trace_files.h"

using namespace meshwork;
using namespace meshwork::gui;

namespace {
QString bundled(const char* name) { return QString(MESHWORK_RESOURCES_DIR) + "/layouts/" + name + ".json"; }

// A Shift+drag on the timeline from (x0, y) to (x1, y_end): the range selection.
void shift_drag(TimelineView* view, int x0, int y, int x1, int y_end) {
    QTest::mousePress(view->viewport(), Qt::LeftButton, Qt::ShiftModifier, QPoint(x0, y));
    QMouseEvent move(QEvent::MouseMove, QPointF(x1, y_end), view->viewport()->mapToGlobal(QPointF(x1, y_end)),
                     Qt::LeftButton, Qt::LeftButton, Qt::ShiftModifier);
    QApplication::sendEvent(view->viewport(), &move);
    QTest::mouseRelease(view->viewport(), Qt::LeftButton, Qt::ShiftModifier, QPoint(x1, y_end));
}

// Shift+drag across every lane's full width, one lane height below the ruler.
void select_whole_range(TimelineView* view) {
    view->fit_all();
    const int y = view->ruler_height() + view->lane_height() / 2;
    shift_drag(view, view->lane_header_width() + 2, y, view->viewport()->width() - 2, y + 2);
}
QString fixture(const char* name) { return QString(MESHWORK_TEST_FIXTURES) + "/" + name; }
constexpr int kScreenW = 1280, kScreenH = 720;

// The label in the status bar that says the GPUs and the verdict.
QString status_verdict(QMainWindow& w) {
    for (auto* label : w.statusBar()->findChildren<QLabel*>()) {
        if (label->text().contains("GPUs")) return label->text();
    }
    return {};
}

void wait_for_estimate(MainWindow& w) {
    w.estimate_panel()->runner()->wait();
    QTRY_VERIFY(w.estimate_panel()->current().has_value());
}
// One compute lane of `count` "gemm" events, one every `period_ns`, each `duration_ns` long.
std::shared_ptr<MemoryTimelineSource> gemm_lane(int count, std::int64_t period_ns, std::int64_t duration_ns) {
    auto source = std::make_shared<MemoryTimelineSource>();
    const int lane = source->add_lane({0, TrackKind::ComputeStream, "compute"});
    TraceEvent e;
    e.kind = EventKind::Compute;
    e.name = "gemm";
    for (int i = 0; i < count; ++i) {
        e.start_ns = i * period_ns;
        e.end_ns = e.start_ns + duration_ns;
        source->add_event(lane, e);
    }
    return source;
}

}  // namespace

class TstUsability : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    // One rank's file of a two-rank CPU job: `gemms` compute events 100 µs apart on one
    // compute lane, rank r starting r µs late (so the ranks' events differ).
    QString write_rank_trace(const QString& job, int rank, int gemms) {
        const QString path = dir_.filePath(QString("%1_rank%2.sqlite").arg(job).arg(rank));
        auto writer = profiler::TraceWriter::create(path.toStdString());
        TraceRunInfo info;
        info.source = "meshwork-cpu";
        info.world_size = 2;
        info.start_time_unix_ns = 1'700'000'000'000'000'000;
        writer->set_run_info(info);
        const int track = writer->add_track({rank, TrackKind::ComputeStream, 0, "compute"});
        TraceEvent e;
        e.rank = rank;
        e.track = track;
        e.kind = EventKind::Compute;
        e.name = "gemm";
        e.start_ns = 1000 * rank;
        e.end_ns = e.start_ns + 50'000;
        for (int i = 0; i < gemms; ++i) {
            writer->add_event(e);
            e.start_ns += 100'000;
            e.end_ns += 100'000;
        }
        writer->close();
        return path;
    }
    QString predicted_, measured_;

    // A window as a person has it on a 1280×720 screen.
    static void show_small(MainWindow& w) {
        w.resize(kScreenW, kScreenH);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
    }
    // Shown and active, as a window a person types into (shortcuts need an active window).
    static void show_active(MainWindow& w) {
        w.show();
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
    }
    static void check_fits_the_screen(MainWindow& w, const char* after) {
        QCoreApplication::processEvents();
        QVERIFY2(w.width() <= kScreenW, qPrintable(QString("%1: window %2 px wide").arg(after).arg(w.width())));
        QVERIFY2(w.minimumSizeHint().width() <= kScreenW,
                 qPrintable(QString("%1: minimum %2 px").arg(after).arg(w.minimumSizeHint().width())));
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("MeshworkTests");
        QCoreApplication::setApplicationName("tst_gui_usability");
        QSettings().clear();
        QVERIFY(dir_.isValid());
        predicted_ = dir_.filePath("predicted.sqlite");
        measured_ = dir_.filePath("measured.sqlite");
        test::write_step_trace(predicted_, "meshwork-sim", 2, 0, 100'000, 50'000);
        test::write_step_trace(measured_, "meshwork-cpu", 2, 5'000'000'000, 120'000, 80'000);
    }

    // After F5 the timeline holds the measured run; comparing it with a simulation makes the
    // simulation the prediction, and the dialog's title says so beforehand.
    void comparison_roles_come_from_the_traces() {
        const auto data = ComparisonLoader::load_now(measured_, predicted_, 1, RoleOrder::FromTraces);
        QCOMPARE(data->predicted.path, predicted_);
        QCOMPARE(data->measured.path, measured_);
        QVERIFY(data->predicted.simulated && !data->measured.simulated);
        // As given (Swap) keeps the order asked for.
        QCOMPARE(ComparisonLoader::load_now(measured_, predicted_)->predicted.path, measured_);

        MainWindow w;
        QVERIFY(w.open_layout(bundled("tiny-cpu")));
        QSignalSpy opened(&w, &MainWindow::trace_opened);
        w.open_trace(measured_);
        QVERIFY(opened.wait(10000));
        auto* menu = w.trace_menu();
        QSignalSpy shown(menu, &TraceMenu::comparison_shown);
        menu->compare_with_current(predicted_);
        QVERIFY(shown.wait(10000));
        const auto* shown_data = w.timeline()->comparison()->data();
        QCOMPARE(shown_data->predicted.path, predicted_);
        QCOMPARE(shown_data->measured.path, measured_);
        // The step error is the prediction's against the measurement: 150 µs vs 200 µs.
        QVERIFY(std::abs(shown_data->comparison.categories.front().error - (-0.25)) < 1e-9);

        auto measured_info = profiler::TraceReader::open(measured_.toStdString()).run_info();
        QCOMPARE(role_of(measured_info), TraceRole::Measurement);
        QVERIFY(comparison_prompt("measured.sqlite", TraceRole::Measurement).contains("the measurement"));
        QVERIFY(comparison_prompt("predicted.sqlite", TraceRole::Prediction).contains("the prediction"));
    }

    // At 1280×720 neither a comparison, a calibration nor an invalid layout on the Timeline
    // tab makes the window wider than the screen.
    void the_window_never_widens_past_the_screen() {
        const Layout tiny = load_layout(bundled("tiny-cpu").toStdString());
        const QString sim = dir_.filePath("tiny-a-long-name-for-a-prediction-of-the-tiny-layout.sqlite");
        const QString slow = dir_.filePath("tiny-a-long-name-for-a-measurement-on-a-slower-cluster.sqlite");
        {
            auto writer = profiler::TraceWriter::create(sim.toStdString());
            simulate_layout(tiny, writer.get());
            writer->close();
        }
        Layout slower = tiny;
        slower.cluster.efficiency.gemm *= 0.5;
        slower.cluster.intra_node.latency_s *= 40;
        {
            auto writer = profiler::TraceWriter::create(slow.toStdString());
            simulate_layout(slower, writer.get());
            writer->close();
        }
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        show_small(w);
        wait_for_estimate(w);
        check_fits_the_screen(w, "opened");
        QSignalSpy shown(w.trace_menu(), &TraceMenu::comparison_shown);
        w.trace_menu()->compare_by_role(sim, slow);
        QVERIFY(shown.wait(20000));
        check_fits_the_screen(w, "comparison");
        w.timeline()->comparison()->calibrate_button()->click();
        QVERIFY(shown.wait(30000));
        QVERIFY(!w.timeline()->comparison()->data()->calibration_note.isEmpty());
        check_fits_the_screen(w, "calibrate");

        // An invalid layout (its mesh holds 24 of its 64 GPUs) opened on the Timeline tab.
        QFile in(bundled("llama3-70b-h100-64"));
        QVERIFY(in.open(QIODevice::ReadOnly));
        QByteArray text = in.readAll();
        text.replace("\"tp\": 8", "\"tp\": 4").replace("\"pp\": 4", "\"pp\": 3");
        const QString invalid = dir_.filePath("invalid-llama.json");
        QFile out(invalid);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(text);
        out.close();
        w.show_view(MainWindow::View::Timeline);
        QVERIFY(w.open_layout(invalid));
        wait_for_estimate(w);
        QTRY_VERIFY(!w.estimate_panel()->current()->validation.valid());
        check_fits_the_screen(w, "invalid layout");
        // The mesh's legend and the status bar count the same GPUs.
        const QString gpus = gpu_count_text(w.document()->layout());
        QCOMPARE(gpus, QString("mesh of 24 GPUs (layout: 64)"));
        QTRY_VERIFY2(status_verdict(w).startsWith(gpus), qPrintable(status_verdict(w)));
        // The error table's Problem column is as wide as the table leaves it, and wraps.
        auto* issues = w.estimate_panel()->issues_table();
        QVERIFY(issues->isVisible());
        QCOMPARE(issues->header()->sectionResizeMode(1), QHeaderView::Stretch);
        QVERIFY(issues->wordWrap());
        QCOMPARE(issues->textElideMode(), Qt::ElideNone);
    }

    // A valid layout 1 TB over HBM is not "Valid layout" in green: header and status bar say
    // that it does not fit, and by how much.
    void valid_but_over_hbm_says_it_does_not_fit() {
        MainWindow w;
        Layout layout = load_layout(bundled("llama3-70b-h100-64").toStdString());
        layout.parallel.mesh.tp = 1;
        layout.parallel.mesh.pp = 1;
        layout.parallel.mesh.dp = 64;
        layout.parallel.sequence_parallel = false;
        layout.placement = {};
        w.document()->reset(layout, QString());
        wait_for_estimate(w);
        const auto& a = *w.estimate_panel()->current();
        QVERIFY(a.validation.valid());
        QVERIFY(!a.fits);
        QCOMPARE(verdict_of(a), Verdict::DoesNotFit);
        const QString header = w.estimate_panel()->state_label()->text();
        QVERIFY2(header.contains("does not fit") && header.contains("GiB"), qPrintable(header));
        QVERIFY(!header.contains("fits"));
        QVERIFY(status_verdict(w).contains("does not fit"));
        // The bundled layout fits, and says so.
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        wait_for_estimate(w);
        QTRY_VERIFY(w.estimate_panel()->current()->fits);
        QVERIFY(w.estimate_panel()->state_label()->text().startsWith("Valid layout · fits"));
    }

    // TP 2 → Up lands on the next value the layout accepts, never on one it refuses.
    void spin_arrows_step_through_accepted_values() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* tp = w.axis_editor()->spin_box("tp");
        const Layout& l = w.document()->layout();
        for (int step = 0; step < 3; ++step) {
            const int before = tp->value();
            tp->setFocus();
            QTest::keyClick(tp, Qt::Key_Down);
            const int after = tp->value();
            if (after == before) break;  // nothing accepted below
            QVERIFY2(after < before, qPrintable(QString("%1 -> %2").arg(before).arg(after)));
            QCOMPARE(l.parallel.mesh.tp, after);  // accepted, not snapped back
            QVERIFY(w.axis_editor()->last_refusal().isEmpty());
            QCOMPARE(w.document()->layout().gpus % (after * l.parallel.mesh.pp * l.parallel.mesh.cp), 0);
        }
        QCOMPARE(tp->value(), 1);
        // Up from 1 passes 3 (it does not divide 64 GPUs over pp 4) and stops on an accepted one.
        tp->setFocus();
        QTest::keyClick(tp, Qt::Key_Up);
        QCOMPARE(tp->value(), 2);
        QTest::keyClick(tp, Qt::Key_Up);
        QCOMPARE(tp->value(), 4);
        QCOMPARE(w.document()->layout().parallel.mesh.tp, 4);
        QVERIFY(w.axis_editor()->last_refusal().isEmpty());
    }

    // File → Open Trace takes a Kineto JSON: imported on the fly, then opened.
    void open_trace_imports_a_kineto_json() {
        QVERIFY(trace_file_filter().contains("*.json.gz"));
        QVERIFY(trace_file_filter().contains("*.sqlite"));
        MainWindow w;
        QVERIFY(w.open_layout(bundled("tiny-cpu")));
        QSignalSpy opened(&w, &MainWindow::trace_opened);
        QSignalSpy failed(&w, &MainWindow::trace_failed);
        w.open_trace(fixture("kineto/kineto__docs__traces__after_fix_trace.json"));
        QVERIFY(opened.wait(30000));
        QCOMPARE(failed.count(), 0);
        QVERIFY(w.timeline()->view()->source() != nullptr);
        QVERIFY(w.timeline()->view()->source()->event_count() > 0);
    }

    // Kineto's CPU ops nest; imported, each call depth is its own lane, so no two slices of
    // one lane overlap and an inner op is where a click finds it.
    void kineto_host_slices_are_nested_by_depth() {
        const std::string out = dir_.filePath("nested.sqlite").toStdString();
        {
            auto writer = profiler::TraceWriter::create(out);
            profiler::import_trace_file(fixture("kineto/hta__call_stack__backward_thread.json").toStdString(),
                                        *writer, {});
            writer->close();
        }
        const auto reader = profiler::TraceReader::open(out);
        std::map<int, std::vector<std::pair<std::int64_t, std::int64_t>>> host_slices;
        int host_tracks = 0;
        for (const auto& t : reader.tracks()) host_tracks += t.info.kind == TrackKind::Host;
        reader.for_each_event([&](const TraceEvent& e) {
            for (const auto& t : reader.tracks()) {
                if (t.id == e.track && t.info.kind == TrackKind::Host) host_slices[e.track].push_back({e.start_ns, e.end_ns});
            }
        });
        QVERIFY(host_tracks > 1);
        for (auto& [track, slices] : host_slices) {
            std::sort(slices.begin(), slices.end());
            for (std::size_t i = 1; i < slices.size(); ++i) {
                QVERIFY2(slices[i].first >= slices[i - 1].second,
                         qPrintable(QString("track %1: slices overlap").arg(track)));
            }
        }
    }

    // A long undo label leaves the toolbar's last action on the toolbar.
    void a_long_undo_label_keeps_the_toolbar() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        show_small(w);
        Layout changed = w.document()->layout();
        changed.training.seq_length *= 2;
        const std::string description =
            "Set the sequence length to a value with a description long enough to fill the toolbar twice over";
        QVERIFY(w.document()->apply(ProposedEdit{changed, description, {}}).accepted);
        QCoreApplication::processEvents();
        auto* toolbar = w.findChild<QToolBar*>("main_toolbar");
        QVERIFY(toolbar);
        QAction* last = toolbar->actions().back();
        QVERIFY(last->text().contains("Export"));
        QWidget* button = toolbar->widgetForAction(last);
        QVERIFY(button && button->isVisible());
        QVERIFY(button->geometry().right() <= toolbar->width());
        check_fits_the_screen(w, "long undo label");
    }

    // Tabbing through the Training dock never leaves it scrolled sideways.
    void training_dock_is_not_scrolled_sideways() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        show_small(w);
        w.raise_dock("training");
        auto* scroll = w.training_editor()->findChild<QScrollArea*>();
        QVERIFY(scroll);
        w.training_editor()->micro_batch_box()->setFocus(Qt::TabFocusReason);
        for (int i = 0; i < 40; ++i) {
            QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
            QCOMPARE(scroll->horizontalScrollBar()->value(), 0);
        }
        QVERIFY(scroll->widget()->width() <= scroll->viewport()->width());
    }

    // The shortcuts dialog fits a 720-px screen.
    void shortcuts_dialog_fits_the_screen() {
        QWidget parent;
        QDialog* dialog = open_shortcuts_dialog(&parent);
        QVERIFY(QTest::qWaitForWindowExposed(dialog));
        QVERIFY2(dialog->height() <= kScreenH * 9 / 10, qPrintable(QString::number(dialog->height())));
        QVERIFY(dialog->findChild<QTextBrowser*>()->toPlainText().contains("Shift+drag"));
        dialog->close();
    }

    // A receive's span holds its wait for the sender: no transfer rate is made of it.
    void a_receive_shows_no_transfer_rate() {
        const QString path = dir_.filePath("recv.sqlite");
        {
            auto writer = profiler::TraceWriter::create(path.toStdString());
            TraceRunInfo info;
            info.source = "meshwork-cpu";
            info.world_size = 1;
            writer->set_run_info(info);
            const int track = writer->add_track({0, TrackKind::CommStream, 0, "comm:pp"});
            TraceEvent e;
            e.track = track;
            e.kind = EventKind::Communication;
            e.bytes = 16 * 1024;
            e.name = "recv(pp)";
            e.start_ns = 0;
            e.end_ns = 1'200'000;
            writer->add_event(e);
            e.name = "send(pp)";
            e.start_ns = 2'000'000;
            e.end_ns = 2'001'000;
            writer->add_event(e);
            writer->close();
        }
        TimelinePanel panel;
        panel.resize(1000, 600);
        panel.set_source(std::make_shared<TraceReaderSource>(profiler::TraceReader::open(path.toStdString())), "recv");
        auto* details = panel.findChild<QTextBrowser*>();
        QVERIFY(panel.find_next("recv"));
        QVERIFY2(!details->toPlainText().contains("/s)"), qPrintable(details->toPlainText()));
        QVERIFY(details->toPlainText().contains("waiting"));
        QVERIFY(panel.find_next("send"));
        QVERIFY2(details->toPlainText().contains("/s)"), qPrintable(details->toPlainText()));
    }

    // Shift+drag over lanes: a table per event name (count, total, mean, min, max) that
    // sorts by value and copies as TSV.
    void range_selection_lists_statistics_per_name() {
        const QString path = dir_.filePath("names.sqlite");
        {
            auto writer = profiler::TraceWriter::create(path.toStdString());
            TraceRunInfo info;
            info.source = "meshwork-cpu";
            info.world_size = 1;
            writer->set_run_info(info);
            const int track = writer->add_track({0, TrackKind::ComputeStream, 0, "compute"});
            TraceEvent e;
            e.track = track;
            e.kind = EventKind::Compute;
            std::int64_t t = 0;
            // gemm: 3 events of 10, 20, 30 µs; norm: 2 events of 5 µs.
            for (const auto& [name, us] : std::vector<std::pair<const char*, int>>{
                     {"gemm", 10}, {"norm", 5}, {"gemm", 20}, {"norm", 5}, {"gemm", 30}}) {
                e.name = name;
                e.start_ns = t;
                e.end_ns = t + us * 1000;
                writer->add_event(e);
                t = e.end_ns + 1000;
            }
            writer->close();
        }
        TimelinePanel panel;
        panel.resize(1000, 700);
        panel.set_source(std::make_shared<TraceReaderSource>(profiler::TraceReader::open(path.toStdString())), "names");
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        select_whole_range(panel.view());
        auto* table = panel.selection_stats();
        QTRY_VERIFY(table->isVisible());
        QCOMPARE(table->rowCount(), 2);
        // Whole events, as Perfetto and Nsight count them: the headers and the summary say so.
        QVERIFY(table->horizontalHeaderItem(SelectionStatsTable::Total)->toolTip().contains("whole duration"));
        bool said = false;
        for (auto* b : panel.findChildren<QTextBrowser*>()) said = said || b->toPlainText().contains("whole events");
        QVERIFY(said);
        // Sorted by total, the largest first: gemm 60 µs over 3, norm 10 µs over 2.
        QCOMPARE(table->item(0, SelectionStatsTable::Name)->text(), QString("gemm"));
        QCOMPARE(table->item(0, SelectionStatsTable::Count)->data(Qt::UserRole).toDouble(), 3.0);
        QCOMPARE(table->item(0, SelectionStatsTable::Total)->data(Qt::UserRole).toDouble(), 60'000.0);
        QCOMPARE(table->item(0, SelectionStatsTable::Mean)->data(Qt::UserRole).toDouble(), 20'000.0);
        QCOMPARE(table->item(0, SelectionStatsTable::Min)->data(Qt::UserRole).toDouble(), 10'000.0);
        QCOMPARE(table->item(0, SelectionStatsTable::Max)->data(Qt::UserRole).toDouble(), 30'000.0);
        table->sortItems(SelectionStatsTable::Count, Qt::AscendingOrder);
        QCOMPARE(table->item(0, SelectionStatsTable::Name)->text(), QString("norm"));
        const QString tsv = table->tsv(false);
        QVERIFY2(tsv.startsWith("name\tcount\ttotal_ns"), qPrintable(tsv));
        QVERIFY2(tsv.contains("gemm\t3\t60000\t20000.0\t10000\t30000"), qPrintable(tsv));
    }

    // The find bar lists every match with their count; choosing one moves the view to it.
    void search_lists_every_match() {
        const QString path = dir_.filePath("many.sqlite");
        {
            auto writer = profiler::TraceWriter::create(path.toStdString());
            TraceRunInfo info;
            info.source = "meshwork-cpu";
            info.world_size = 2;
            writer->set_run_info(info);
            for (int r = 0; r < 2; ++r) {
                const int track = writer->add_track({r, TrackKind::ComputeStream, 0, "compute"});
                TraceEvent e;
                e.rank = r;
                e.track = track;
                e.kind = EventKind::Compute;
                for (int i = 0; i < 50; ++i) {
                    e.name = i % 5 == 0 ? "attention.fwd" : "mlp.fwd";
                    e.start_ns = i * 1'000'000 + r * 1000;
                    e.end_ns = e.start_ns + 500'000;
                    writer->add_event(e);
                }
            }
            writer->close();
        }
        TimelinePanel panel;
        panel.resize(1000, 700);
        panel.set_source(std::make_shared<TraceReaderSource>(profiler::TraceReader::open(path.toStdString())), "many");
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QCOMPARE(panel.list_matches("ATTENTION"), 20);
        auto* list = panel.matches_list();
        QVERIFY(list->isVisible());
        QCOMPARE(list->topLevelItemCount(), 20);
        QVERIFY(list->headerItem()->text(0).contains("20"));
        // In start order; choosing the last moves the view there and selects it.
        QSignalSpy selected(panel.view(), &TimelineView::event_selected);
        list->setCurrentItem(list->topLevelItem(19));
        QCOMPARE(selected.count(), 1);
        const auto details = selected.front().front().value<TimelineEventDetails>();
        QCOMPARE(details.event.name, std::string("attention.fwd"));
        QCOMPARE(details.event.start_ns, std::int64_t{45'001'000});
        const auto [a, b] = panel.view()->visible_window();
        QVERIFY(a <= 45'001'000 && b >= 45'501'000);
        QCOMPARE(panel.list_matches("no such name"), 0);
        QVERIFY(!list->isVisible());
    }

    // Shift+drag draws a translucent range: the events under it stay visible.
    void range_selection_is_translucent() {
        auto source = gemm_lane(20, 100'000, 60'000);
        TimelineView view;
        view.resize(900, 300);
        view.set_source(source);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.fit_all();
        const QSize size = view.viewport()->size();
        auto frame = [&] {
            QImage image(size, QImage::Format_RGB32);
            QPainter p(&image);
            view.render_frame(p, size);
            return image;
        };
        const QImage before = frame();
        const int y = view.ruler_height() + view.lane_height() / 2;
        const int x0 = view.lane_header_width() + 100, x1 = view.lane_header_width() + 500;
        shift_drag(&view, x0, y, x1, y);
        const QImage after = frame();
        // Inside the box (off its dashed outline) each pixel is the one before, tinted.
        int largest = 0;
        std::set<QRgb> colours_under_box;
        for (int x = x0 + 3; x < x1 - 3; ++x) {
            for (int yy = view.ruler_height() + 3; yy < view.ruler_height() + view.lane_height() - 3; ++yy) {
                const QRgb a = before.pixel(x, yy), b = after.pixel(x, yy);
                largest = std::max({largest, std::abs(qRed(a) - qRed(b)), std::abs(qGreen(a) - qGreen(b)),
                                    std::abs(qBlue(a) - qBlue(b))});
                colours_under_box.insert(b);
            }
        }
        QVERIFY2(largest <= 60, qPrintable(QString("a pixel changed by %1 of 255").arg(largest)));
        QVERIFY(colours_under_box.size() > 1);  // events and gaps still tell apart
    }

    // Timestamp flags: M sets one (at the window's middle when the cursor is elsewhere), a
    // second M there removes it, Shift+M clears; a flag is a line across the lanes in the
    // warning colour, and two flags show the time between them on the ruler.
    void timestamp_flags_mark_and_measure() {
        auto source = gemm_lane(10, 1'000'000, 600'000);
        TimelineView view;
        view.resize(900, 300);
        view.set_source(source);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.fit_all();
        QCursor::setPos(view.mapToGlobal(QPoint(-50, -50)));  // not over the lanes
        const auto [t0, t1] = view.visible_window();
        QTest::keyClick(&view, Qt::Key_M);
        QCOMPARE(view.time_flags().flags_ns().size(), std::size_t{1});
        const double middle = (t0 + t1) / 2;
        QVERIFY2(std::fabs(view.time_flags().flags_ns().front() - middle) <= view.ns_per_pixel(),
                 qPrintable(QString("flag at %1, middle %2").arg(view.time_flags().flags_ns().front()).arg(middle)));
        QTest::keyClick(&view, Qt::Key_M);  // the same place: removed
        QVERIFY(view.time_flags().empty());

        view.toggle_flag(2'000'000);
        view.toggle_flag(5'000'000);
        QCOMPARE(view.time_flags().flags_ns(), (std::vector<double>{2'000'000, 5'000'000}));
        const QSize size = view.viewport()->size();
        QImage image(size, QImage::Format_RGB32);
        {
            QPainter p(&image);
            view.render_frame(p, size);
        }
        const int x = view.lane_header_width() + static_cast<int>(std::floor((2'000'000 - t0) / view.ns_per_pixel()));
        const QColor warning = view_colours().warning;
        const int y = view.ruler_height() + view.lane_height() + 10;  // below the lane, on the background
        QCOMPARE(QColor(image.pixel(x, y)).name(), warning.name());
        QVERIFY(QColor(image.pixel(x + 3, y)).name() != warning.name());
        QTest::keyClick(&view, Qt::Key_M, Qt::ShiftModifier);
        QVERIFY(view.time_flags().empty());
    }

    // A measured trace's steps: a row under the time axis and a tick at each start.
    void step_markers_on_a_measured_trace() {
        auto source = std::make_shared<TraceReaderSource>(profiler::TraceReader::open(measured_.toStdString()));
        QCOMPARE(source->steps().size(), std::size_t{1});
        QCOMPARE(source->steps().front().step, 0);
        QCOMPARE(source->steps().front().start_ns, std::int64_t{5'000'000'000});  // rank 0's events only
        QCOMPARE(source->steps().front().end_ns, std::int64_t{5'000'200'000});
        TimelineView with_steps, without_steps;
        with_steps.set_source(source);
        without_steps.set_source(std::make_shared<TraceReaderSource>(
            profiler::TraceReader::open(dir_.filePath("recv.sqlite").toStdString())));
        QVERIFY(with_steps.ruler_height() > without_steps.ruler_height());
    }

    // Selecting a launch draws the arrow to the kernel it launched (one correlation id).
    void a_launch_flows_to_its_kernel() {
        const QString path = dir_.filePath("flow.sqlite");
        {
            auto writer = profiler::TraceWriter::create(path.toStdString());
            TraceRunInfo info;
            info.source = "kineto";
            info.world_size = 1;
            writer->set_run_info(info);
            const int stream = writer->add_track({0, TrackKind::ComputeStream, 0, "stream 7"});
            const int host = writer->add_track({0, TrackKind::Host, 0, "thread 1"});
            TraceEvent e;
            for (int i = 0; i < 3; ++i) {
                e.track = host;
                e.kind = EventKind::Marker;
                e.name = "cudaLaunchKernel";
                e.correlation_id = 100 + i;
                e.start_ns = i * 100'000;
                e.end_ns = e.start_ns + 5'000;
                writer->add_event(e);
                e.track = stream;
                e.kind = EventKind::Compute;
                e.name = "gemm_kernel_" + std::to_string(i);
                e.start_ns = i * 100'000 + 20'000;
                e.end_ns = e.start_ns + 50'000;
                writer->add_event(e);
            }
            writer->close();
        }
        TimelinePanel panel;
        panel.resize(1000, 600);
        panel.set_source(std::make_shared<TraceReaderSource>(profiler::TraceReader::open(path.toStdString())), "flow");
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QVERIFY(panel.find_next("cudaLaunchKernel"));
        QVERIFY(panel.find_next("cudaLaunchKernel"));  // the second launch
        panel.view()->viewport()->repaint();
        const auto& partner = panel.view()->flow_partner();
        QVERIFY(partner.has_value());
        QCOMPARE(partner->event.name, std::string("gemm_kernel_1"));
        QVERIFY(panel.findChild<QTextBrowser*>()->toPlainText().contains("gemm_kernel_1"));
    }

    // Selecting a send draws the arrow to its receive on the peer rank (named in the details),
    // and a collective the same call on the other ranks of its mesh group, not of another.
    void sends_flow_to_receives_and_collectives_join_their_ranks() {
        // pp 2 × dp 2 in the order tp-cp-ep-dp-pp: stage 0 holds ranks 0, 1; stage 1 ranks 2, 3;
        // pp groups {0, 2} and {1, 3}, dp groups {0, 1} and {2, 3}.
        MeshShape shape;
        shape.pp = 2;
        shape.dp = 2;
        auto source = std::make_shared<MemoryTimelineSource>();
        source->set_mesh(DeviceMesh(shape, 8));
        std::map<int, int> pp_lane, dp_lane;
        for (int rank = 0; rank < 4; ++rank) {
            pp_lane[rank] = source->add_lane({rank, TrackKind::CommStream, "comm:pp"});
            dp_lane[rank] = source->add_lane({rank, TrackKind::CommStream, "comm:dp"});
        }
        auto add = [&source](int lane, const char* name, std::int64_t start_ns, std::int64_t end_ns) {
            TraceEvent e;
            e.kind = EventKind::Communication;
            e.name = name;
            e.start_ns = start_ns;
            e.end_ns = end_ns;
            e.step = 0;
            e.micro_batch = 0;
            source->add_event(lane, e);
        };
        // Rank 1's send ends nearer rank 2's receive than rank 0's, but rank 1 is not in rank
        // 2's pipeline group.
        add(pp_lane[0], "send(pp)", 0, 10'000);
        add(pp_lane[1], "send(pp)", 0, 11'000);
        add(pp_lane[2], "recv(pp)", 0, 11'000);
        add(pp_lane[3], "recv(pp)", 0, 10'000);
        for (int rank = 0; rank < 4; ++rank) {
            add(dp_lane[rank], "all_reduce(dp)", 100'000 + rank * 1'000, 130'000);
            add(dp_lane[rank], "all_reduce(dp)", 200'000, 210'000);  // a later call of the same name
        }
        auto id = [](int lane, int index) { return (std::int64_t{lane} << 40) | index; };

        TimelinePanel panel;
        panel.resize(1000, 600);
        panel.set_source(source, "peers");
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto* view = panel.view();

        view->select_event(id(pp_lane[2], 0));  // rank 2's receive
        view->viewport()->repaint();
        QCOMPARE(view->peer_flows().kind, PeerFlows::Kind::PointToPoint);
        QCOMPARE(view->peer_flows().partners.size(), std::size_t{1});
        QCOMPARE(view->peer_flows().partners.front().event.rank, 0);
        QCOMPARE(view->peer_flows().partners.front().event.name, std::string("send(pp)"));
        QVERIFY(!view->peer_flows().selected_sends);
        const QString received = panel.findChild<QTextBrowser*>()->toPlainText();
        QVERIFY2(received.contains("received from") && received.contains("rank 0"), qPrintable(received));

        view->select_event(id(pp_lane[1], 0));  // rank 1's send goes to rank 3
        view->viewport()->repaint();
        QCOMPARE(view->peer_flows().kind, PeerFlows::Kind::PointToPoint);
        QCOMPARE(view->peer_flows().partners.front().event.rank, 3);
        QVERIFY(view->peer_flows().selected_sends);

        view->select_event(id(dp_lane[0], 0));  // rank 0's first all-reduce: its dp group is {0, 1}
        view->viewport()->repaint();
        QCOMPARE(view->peer_flows().kind, PeerFlows::Kind::Collective);
        QCOMPARE(view->peer_flows().partners.size(), std::size_t{1});
        QCOMPARE(view->peer_flows().partners.front().event.rank, 1);
        QCOMPARE(view->peer_flows().partners.front().event.start_ns, std::int64_t{101'000});  // the same call
        QCOMPARE(view->peer_flows().last_rank, 1);
        QCOMPARE(view->peer_flows().last_after_first_ns, std::int64_t{1'000});
        const QString joined = panel.findChild<QTextBrowser*>()->toPlainText();
        QVERIFY2(joined.contains("2 ranks (0, 1)") && joined.contains("rank 1"), qPrintable(joined));

        view->select_event(id(dp_lane[3], 1));  // rank 3's second all-reduce: rank 2's second
        view->viewport()->repaint();
        QCOMPARE(view->peer_flows().partners.size(), std::size_t{1});
        QCOMPARE(view->peer_flows().partners.front().event.rank, 2);
        QCOMPARE(view->peer_flows().partners.front().event.start_ns, std::int64_t{200'000});
    }

    // Several files opened together are the ranks of one view.
    void several_files_open_as_the_ranks_of_one_view() {
        QStringList paths;
        for (int rank = 0; rank < 2; ++rank) paths << write_rank_trace("job", rank, 1);
        MainWindow w;
        QSignalSpy opened(&w, &MainWindow::trace_opened);
        QSignalSpy failed(w.trace_menu(), &TraceMenu::failed);
        w.trace_menu()->import_traces(paths);
        QVERIFY2(opened.wait(30000), qPrintable(w.trace_menu()->last_error()));
        const auto* source = w.timeline()->view()->source();
        QVERIFY(source);
        QCOMPARE(source->event_count(), 2);
        std::set<int> ranks;
        for (int l = 0; l < source->lane_count(); ++l) ranks.insert(source->lane(l).rank);
        QCOMPARE(ranks, (std::set<int>{0, 1}));
    }

    // Files dropped on the window: a Kineto JSON opens as a trace (imported on the fly), a
    // layout JSON as a layout, and several traces as the ranks of one view.
    void files_dropped_on_the_window_open() {
        const QString kineto = fixture("kineto/kineto__docs__traces__after_fix_trace.json");
        QCOMPARE(classify_dropped_file(kineto), DroppedFile::Trace);
        QCOMPARE(classify_dropped_file(bundled("tiny-cpu")), DroppedFile::Layout);
        QCOMPARE(classify_dropped_file(measured_), DroppedFile::Trace);  // SQLite

        MainWindow w;
        show_small(w);
        auto drop = [&w](const QStringList& paths) {
            auto* mime = new QMimeData;
            QList<QUrl> urls;
            for (const QString& p : paths) urls << QUrl::fromLocalFile(p);
            mime->setUrls(urls);
            const QPoint at(w.width() / 2, w.height() / 2);
            QDragEnterEvent enter(at, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
            QCoreApplication::sendEvent(&w, &enter);
            QVERIFY(enter.isAccepted());
            QDropEvent dropped(QPointF(at), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
            QCoreApplication::sendEvent(&w, &dropped);
            QVERIFY(dropped.isAccepted());
            delete mime;
        };

        drop({bundled("tiny-cpu")});
        QVERIFY(w.document()->has_layout());
        QVERIFY(w.document()->path().endsWith("tiny-cpu.json"));

        QSignalSpy opened(&w, &MainWindow::trace_opened);
        drop({kineto});
        QVERIFY2(opened.wait(30000), qPrintable(w.trace_menu()->last_error()));
        QVERIFY(w.timeline()->view()->source()->event_count() > 0);

        // Two ranks of one job, dropped together.
        QStringList ranks;
        for (int rank = 0; rank < 2; ++rank) ranks << write_rank_trace("dropped", rank, 3);
        opened.clear();
        drop(ranks);
        QVERIFY2(opened.wait(30000), qPrintable(w.trace_menu()->last_error()));
        const auto* source = w.timeline()->view()->source();
        QCOMPARE(source->event_count(), 6);
        std::set<int> seen;
        for (int l = 0; l < source->lane_count(); ++l) seen.insert(source->lane(l).rank);
        QCOMPARE(seen, (std::set<int>{0, 1}));

        // Two layouts at once are refused in words, and the open layout stays.
        drop({bundled("tiny-cpu"), bundled("llama3-70b-h100-64")});
        QVERIFY2(w.last_error().contains("2 layouts"), qPrintable(w.last_error()));
        QVERIFY(w.document()->path().endsWith("tiny-cpu.json"));
    }

    // Placement by keyboard alone: the canvas takes focus, arrows pick a stage, Shift+arrows
    // move the block on its boundary as a drag would; undo puts it back.
    void keyboard_moves_a_block_across_a_stage_boundary() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        show_small(w);
        auto* canvas = w.canvas();
        QCOMPARE(canvas->focusPolicy(), Qt::StrongFocus);
        canvas->setFocus();
        QCOMPARE(canvas->current_stage(), 0);
        QTest::keyClick(canvas, Qt::Key_Right);
        QCOMPARE(canvas->current_stage(), 1);
        QTest::keyClick(canvas, Qt::Key_Left, Qt::ShiftModifier);  // stage 1's first block to stage 0
        QCOMPARE(w.document()->layout().stage_layers(), (std::vector<int>{21, 19, 20, 20}));
        QTest::keyClick(canvas, Qt::Key_Right, Qt::ShiftModifier);  // stage 1's last block to stage 2
        QCOMPARE(w.document()->layout().stage_layers(), (std::vector<int>{21, 18, 21, 20}));
        w.document()->undo_stack()->undo();
        w.document()->undo_stack()->undo();
        QCOMPARE(w.document()->layout().stage_layers(), (std::vector<int>{20, 20, 20, 20}));
        QTest::keyClick(canvas, Qt::Key_End);
        QCOMPARE(canvas->current_stage(), 3);
        QTest::keyClick(canvas, Qt::Key_Right, Qt::ShiftModifier);
        QVERIFY2(canvas->last_refusal().contains("last"), qPrintable(canvas->last_refusal()));
        QCOMPARE(w.document()->layout().stage_layers(), (std::vector<int>{20, 20, 20, 20}));
    }

    // Experts by keyboard alone: ↑/↓ pick the EP rank (its tiles outlined), Shift+↓ moves its
    // last expert to the EP rank after as a drop would; the context menu offers the same moves
    // and closes a refused one with its reason.
    void keyboard_and_context_menu_move_an_expert() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("mixtral-8x7b-h100-64")));
        QVERIFY(w.document()->apply(set_mesh_axis(w.document()->layout(), "ep", 4)).accepted);
        QCOMPARE(w.document()->layout().ep_experts(), (std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
        show_small(w);
        auto* canvas = w.canvas();
        canvas->setFocus();
        QCOMPARE(canvas->current_ep_rank(), 0);
        QTest::keyClick(canvas, Qt::Key_Down);
        QCOMPARE(canvas->current_ep_rank(), 1);
        QTest::keyClick(canvas, Qt::Key_Down, Qt::ShiftModifier);  // expert 3 to EP rank 2
        QVERIFY2(canvas->last_refusal().isEmpty(), qPrintable(canvas->last_refusal()));
        QCOMPARE(w.document()->layout().ep_experts(), (std::vector<std::vector<int>>{{0, 1}, {2}, {3, 4, 5}, {6, 7}}));
        w.document()->undo_stack()->undo();
        QCOMPARE(w.document()->layout().ep_experts(), (std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
        QTest::keyClick(canvas, Qt::Key_Up, Qt::ShiftModifier);  // expert 2 to EP rank 0
        QCOMPARE(w.document()->layout().ep_experts(), (std::vector<std::vector<int>>{{0, 1, 2}, {3}, {4, 5}, {6, 7}}));
        QTest::keyClick(canvas, Qt::Key_End);  // (a stage key: the EP rank stays)
        QCOMPARE(canvas->current_ep_rank(), 1);

        // The context menu: the block moves, then the expert moves of the current EP rank.
        canvas->set_current_ep_rank(3);
        QMenu menu;
        canvas->fill_context_menu(menu);
        QAction* back = nullptr;
        QAction* on = nullptr;
        for (auto* action : menu.actions()) {
            if (action->text().startsWith("Move expert 6 of EP rank 3 to EP rank 2")) back = action;
            if (action->text().startsWith("Move expert 7 of EP rank 3 on (no EP rank after it)")) on = action;
            // No item names a stage or an EP rank that does not exist.
            QVERIFY2(!action->text().contains("stage -1") && !action->text().contains("EP rank 4"),
                     qPrintable(action->text()));
        }
        QVERIFY(back && on);
        QVERIFY(!on->isEnabled());
        QVERIFY2(on->toolTip().contains("last"), qPrintable(on->toolTip()));
        QVERIFY(back->isEnabled());
        back->trigger();
        QCOMPARE(w.document()->layout().ep_experts()[2].back(), 6);
    }

    // Refusals and the error table say what an issue is about in words ("stage 1 would hold
    // 0 layers", "Stage 1 (0 layers)"), not its field path; the path stays in the tooltip.
    void refusals_and_issues_in_words() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        ProposedEdit edit{w.document()->layout(), "Split by hand", ""};
        edit.layout.placement.layers_per_stage = {40, 0, 20, 20};
        const auto outcome = w.document()->check(edit);
        QVERIFY(!outcome.accepted);
        QVERIFY2(outcome.reason.startsWith("stage 1 would hold 0 layers: "), qPrintable(outcome.reason));
        QVERIFY2(!outcome.reason.contains("placement."), qPrintable(outcome.reason));

        const QString invalid = dir_.filePath("empty-stage.json");
        save_layout(edit.layout, invalid.toStdString());
        QVERIFY(w.open_layout(invalid));
        wait_for_estimate(w);
        auto* table = w.estimate_panel()->issues_table();
        QVERIFY(table->topLevelItemCount() > 0);
        QCOMPARE(table->headerItem()->text(0), QString("About"));
        const auto* first = table->topLevelItem(0);
        QCOMPARE(first->text(0), QString("Stage 1 (0 layers)"));
        QVERIFY2(first->toolTip(0).contains("placement.layers_per_stage[1]"), qPrintable(first->toolTip(0)));
        for (int i = 0; i < table->topLevelItemCount(); ++i) {
            const QString about = table->topLevelItem(i)->text(0);
            QVERIFY2(!about.contains('.') && !about.contains('_'), qPrintable(about));
        }
        // The Problem column wraps: every row is as tall as its text at the column's width,
        // in a window as narrow as a laptop's, so no problem is cut to one line.
        w.resize(1280, 720);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const int problem_width = table->header()->sectionSize(1);
        QVERIFY(problem_width > 40);
        for (int i = 0; i < table->topLevelItemCount(); ++i) {
            const QModelIndex index = table->model()->index(i, 1);
            const QString text = index.data().toString();
            const QRect wrapped = table->fontMetrics().boundingRect(QRect(0, 0, problem_width - 8, 1 << 20),
                                                                    Qt::TextWordWrap, text);
            QVERIFY2(table->visualRect(index).height() >= wrapped.height(),
                     qPrintable(QString("row %1 is %2 px, its text needs %3 px at %4 px: %5")
                                    .arg(i).arg(table->visualRect(index).height()).arg(wrapped.height())
                                    .arg(problem_width).arg(text)));
        }
        QCOMPARE(issue_subject("training.global_batch_size", edit.layout), QString("Global batch"));
        QCOMPARE(issue_subject("training.some_new_setting", edit.layout), QString("Some new setting"));
    }

    // The Run dialog says which backends cannot run here, and why, before one is chosen: the
    // entries are probed as the dialog opens, off the UI thread, and the CPU stays chosen.
    void run_dialog_marks_unavailable_backends_before_they_are_chosen() {
        const Layout layout = load_layout(bundled("tiny-cpu").toStdString());
        RunDialog dialog(layout);
        auto* backend = dialog.backend_box();
        QCOMPARE(backend->currentData().toString(), QString("cpu"));
        QTRY_VERIFY_WITH_TIMEOUT(dialog.backends_probed(), 30000);
        QCOMPARE(backend->currentData().toString(), QString("cpu"));
        int probed = 0;
        for (engine::BackendKind kind : engine::backend_kinds()) {
            if (kind == engine::BackendKind::Cpu) continue;
            const int index = backend->findData(QString::fromStdString(engine::to_string(kind)));
            QVERIFY(index >= 0);
            const auto info = engine::probe_backend(kind, layout.gpus);
            if (info.reason.empty()) {
                QVERIFY(!backend->itemText(index).contains("unavailable"));
            } else {
                const QString text = backend->itemText(index);
                QVERIFY2(text.contains("unavailable: " + QString::fromStdString(info.reason)), qPrintable(text));
                QCOMPARE(backend->itemData(index, Qt::ToolTipRole).toString(), QString::fromStdString(info.reason));
            }
            ++probed;
        }
        if (probed == 0) QSKIP("this build has the CPU backend only");
    }

    // The Estimate dock's numbers: three significant figures everywhere, a change in the unit
    // of its value, and the durations of one layout in the step time's unit.
    void estimate_numbers_share_units_and_precision() {
        using U = Figure::Unit;
        const std::vector<Figure> figures{{"step_time_s", "Step time", 3.2, U::Seconds},
                                          {"exposed_comm_s", "Exposed communication", 0.85, U::Seconds},
                                          {"model_tflops", "Model TFLOP/s per GPU", 412.3456, U::Plain},
                                          {"micro_batches", "Micro-batches per pipeline", 8, U::Plain},
                                          {"peak_bytes", "Peak memory per GPU", 79.6 * (1ull << 30), U::Bytes},
                                          {"mfu", "MFU", 0.4531, U::Fraction}};
        auto text = [&figures](int i) { return figure_text(figures[i], figure_scale(figures[i], figures)); };
        auto change = [&figures](int i, double before) {
            return change_text(figures[i], before, figure_scale(figures[i], figures));
        };
        QCOMPARE(text(0), QString("3.20 s"));
        QCOMPARE(text(1), QString("0.85 s"));  // not "850 ms" beside a step time in seconds
        QCOMPARE(change(0, 3.05), QString("+0.15 s"));  // not "+150 ms"
        QCOMPARE(change(1, 0.85), QString());
        QCOMPARE(text(2), QString("412"));  // not "412.346"
        QCOMPARE(text(3), QString("8"));
        QCOMPARE(change(3, 4), QString("+4"));
        QCOMPARE(text(4), QString("79.6 GiB"));
        QCOMPARE(change(4, 79.1 * (1ull << 30)), QString("+0.5 GiB"));  // not "+512 MiB"
        QCOMPARE(text(5), QString("45.3 %"));
        QCOMPARE(change(5, 0.4411), QString("+1.2 pt"));
        QCOMPARE(change(0, 3.2 - 1e-6), QString("+<0.01 s"));
    }

    // Started with nothing, the window says what to do and lists the bundled examples.
    // A first start (no saved geometry) opens within the screen, whatever its size.
    void a_first_start_fits_the_screen() {
        QSettings().clear();
        MainWindow w;
        const QSize room = w.screen()->availableGeometry().size();
        QVERIFY2(w.width() <= room.width() && w.height() <= room.height(),
                 qPrintable(QString("%1×%2 on %3×%4").arg(w.width()).arg(w.height()).arg(room.width()).arg(room.height())));
    }

    // Ctrl+Z with the keyboard in a spin box undoes the layout's last edit (the spin box's
    // line edit does not keep it for its own text), and Ctrl+Y or Ctrl+Shift+Z redoes it.
    void undo_keys_in_a_spin_box_undo_the_layout() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        show_active(w);
        auto* tp = w.axis_editor()->spin_box("tp");
        tp->setFocus();
        const int before = w.document()->layout().parallel.mesh.tp;
        QTest::keyClick(tp, Qt::Key_Down);
        const int after = w.document()->layout().parallel.mesh.tp;
        QVERIFY(after != before);
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(w.document()->layout().parallel.mesh.tp, before);
        QCOMPARE(tp->value(), before);
        QVERIFY(w.document()->undo_stack()->canRedo());
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Y, Qt::ControlModifier);
        QCOMPARE(w.document()->layout().parallel.mesh.tp, after);
        // And Ctrl+Shift+Z, the other common redo key.
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(w.document()->layout().parallel.mesh.tp, before);
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(w.document()->layout().parallel.mesh.tp, after);
    }

    // With the Training dock in front, Tab reaching the Model dock tabbed behind it brings
    // that dock to the front: no key can change the model unseen.
    void tab_never_reaches_a_hidden_dock() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        show_active(w);
        QVERIFY(w.raise_dock("training"));
        QCoreApplication::processEvents();
        auto* model = w.findChild<QDockWidget*>("model_dock");
        QVERIFY(model != nullptr);
        w.axis_editor()->spin_box("tp")->setFocus();
        bool reached_model = false;
        for (int i = 0; i < 150; ++i) {
            QWidget* focus = QApplication::focusWidget();
            QVERIFY(focus != nullptr);
            QVERIFY2(focus->isVisible(), qPrintable(focus->objectName() + " " + focus->metaObject()->className()));
            QVERIFY2(!model->isAncestorOf(focus) || !focus->visibleRegion().isEmpty(),
                     qPrintable(QString("Tab %1 reached the hidden Model dock: %2").arg(i).arg(focus->metaObject()->className())));
            reached_model = reached_model || model->isAncestorOf(focus);
            QTest::keyClick(focus, Qt::Key_Tab);
            QCoreApplication::processEvents();
        }
        QVERIFY(reached_model);  // the walk did pass through it
    }

    // The wheel over a spin box that does not have the focus scrolls the dock instead of
    // editing the layout (it stepped the global batch 128 → 124 while scrolling the dock);
    // with the focus, the wheel steps the value.
    void wheel_scrolls_the_dock_not_the_values() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        w.resize(1280, 720);
        show_active(w);
        QVERIFY(w.raise_dock("training"));
        QCoreApplication::processEvents();
        QSpinBox* batch = w.training_editor()->global_batch_box();
        const int before = batch->value();
        const int edits = w.document()->undo_stack()->count();
        auto wheel = [&](QWidget* target) {
            const QPoint at = target->rect().center();
            QWheelEvent e(at, target->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
            QApplication::sendEvent(target, &e);
            QCoreApplication::processEvents();
        };
        QWidget* edit = batch->findChild<QLineEdit*>();
        QVERIFY(edit != nullptr);
        w.axis_editor()->spin_box("tp")->setFocus();
        QVERIFY(!batch->hasFocus());
        QVERIFY(batch->focusPolicy() == Qt::StrongFocus);  // the wheel passing over gives no focus
        wheel(edit);
        QCOMPARE(batch->value(), before);
        QCOMPARE(w.document()->undo_stack()->count(), edits);
        batch->setFocus();
        QTRY_VERIFY(batch->hasFocus());
        wheel(batch);
        QVERIFY(batch->value() != before);  // focused: the wheel steps it
    }

    // The empty timeline says how to get a trace, with the keys the window really binds (it
    // said traces would open "once the trace store is part of this build").
    void empty_timeline_names_the_real_keys() {
        MainWindow w;
        const QString text = TimelineView::empty_message();
        int named = 0;
        for (QAction* a : w.findChildren<QAction*>()) {
            const QString label = QString(a->text()).remove('&');
            if (label != "Open Trace…" && label != "Run Layout…") continue;
            QVERIFY2(text.contains(label), qPrintable(label));
            QVERIFY2(text.contains(a->shortcut().toString(QKeySequence::NativeText)), qPrintable(label));
            ++named;
        }
        QCOMPARE(named, 2);
        QVERIFY(!text.contains("this build"));
    }

    // Switching views by key leaves the docks as the user arranged them: the focus leaving a
    // hidden view does not fall into (and raise) the Model dock tabbed behind Training.
    void switching_views_keeps_the_docks_in_front() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        show_active(w);
        QVERIFY(w.raise_dock("training"));
        QCoreApplication::processEvents();
        auto* training = w.findChild<QDockWidget*>("training_dock");
        QVERIFY(training != nullptr);
        const int keys[] = {Qt::Key_2, Qt::Key_1, Qt::Key_2, Qt::Key_3, Qt::Key_1};
        for (int key : keys) {
            QTest::keyClick(QApplication::focusWidget() ? QApplication::focusWidget() : &w, static_cast<Qt::Key>(key),
                            Qt::ControlModifier);
            QCoreApplication::processEvents();
            QVERIFY2(!training->widget()->visibleRegion().isEmpty(),
                     qPrintable(QString("Ctrl+%1 hid the Training dock").arg(key - Qt::Key_0)));
        }
    }

    // Opening another trace takes away what the panel said about the previous one: a range's
    // statistics, the search's matches.
    void another_trace_clears_the_statistics() {
        const QString path = dir_.filePath("stale.sqlite");
        test::write_step_trace(path, "meshwork-cpu", 2, 0, 100'000, 50'000);
        TimelinePanel panel;
        panel.resize(1000, 700);
        panel.set_source(std::make_shared<TraceReaderSource>(profiler::TraceReader::open(path.toStdString())), "a");
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        select_whole_range(panel.view());
        QTRY_VERIFY(panel.selection_stats()->isVisible());
        panel.set_source(std::make_shared<TraceReaderSource>(profiler::TraceReader::open(predicted_.toStdString())), "b");
        QVERIFY(!panel.selection_stats()->isVisible());
    }

    // Ctrl+2 gives the timeline the keyboard: Ctrl+F then goes to its find box at once.
    void the_view_shown_takes_the_keyboard() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("tiny-cpu")));
        QSignalSpy opened(&w, &MainWindow::trace_opened);
        w.open_trace(measured_);
        QVERIFY(opened.wait(10000));
        show_active(w);
        w.show_view(MainWindow::View::Canvas);
        QCOMPARE(QApplication::focusWidget(), static_cast<QWidget*>(w.canvas()));
        w.show_view(MainWindow::View::Timeline);
        QVERIFY(w.timeline()->isAncestorOf(QApplication::focusWidget()));
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_F, Qt::ControlModifier);
        auto* find = qobject_cast<QLineEdit*>(QApplication::focusWidget());
        QVERIFY2(find != nullptr && w.timeline()->isAncestorOf(find),
                 QApplication::focusWidget() ? QApplication::focusWidget()->metaObject()->className() : "none");
    }

    // Shift+F10 opens the focused widget's context menu, as the Menu key does.
    void shift_f10_opens_the_context_menu() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("tiny-cpu")));
        show_active(w);
        w.show_view(MainWindow::View::Canvas);
        bool opened = false;
        QTimer::singleShot(200, &w, [&opened] {
            if (auto* popup = QApplication::activePopupWidget()) {
                opened = qobject_cast<QMenu*>(popup) != nullptr;
                popup->close();
            }
        });
        QTest::keyClick(w.canvas(), Qt::Key_F10, Qt::ShiftModifier);
        QTRY_VERIFY(opened);
    }

    void first_start_shows_the_start_page() {
        MainWindow w;
        QVERIFY(w.showing_start_page());
        // No layout yet: its editors hold nothing to edit and say so by being disabled (a
        // trace opened alone leaves them so), not by showing a preset's values.
        QVERIFY(!w.axis_editor()->isEnabled());
        QVERIFY(!w.training_editor()->isEnabled());
        auto* examples = w.start_page()->examples();
        QVERIFY(examples->count() >= 4);
        QList<QListWidgetItem*> tiny = examples->findItems("tiny-cpu", Qt::MatchExactly);
        QCOMPARE(tiny.size(), 1);
        emit examples->itemActivated(tiny.front());
        QVERIFY(w.document()->has_layout());
        QVERIFY(!w.showing_start_page());
        QVERIFY(w.document()->path().endsWith("tiny-cpu.json"));
        QVERIFY(w.axis_editor()->isEnabled());
        QVERIFY(w.training_editor()->isEnabled());
    }
};

QTEST_MAIN(TstUsability)
#include "tst_usability.moc"
