// Remote traces in the window: `host:/path` is served through ssh by the remote
// meshwork-cli (here the ssh stand-in of tests/support/ssh-standin, first on PATH, runs it
// locally). The remote timeline draws the same pixels as the local file; go-to-step and
// find work over the pipe; a session that dies mid-way shows a clear error and leaves the
// window working; a host without meshwork-cli falls back to the scp copy.
#include <QtTest>

#include <QMessageBox>
#include <QPainter>
#include <QStandardPaths>

#include "gui/mainwindow/main_window.h"
#include "gui/mainwindow/trace_menu.h"
#include "gui/ranks/rank_overview.h"
#include "gui/ranks/rank_overview_data.h"
#include "gui/ranks/rank_overview_panel.h"
#include "gui/timeline/timeline_panel.h"
#include "gui/timeline/timeline_view.h"
#include "gui/timeline/trace_reader_source.h"
#include "gui/trace/remote_trace_source.h"
#include "gui/trace/trace_cache.h"
#include "profiler/analysis/rank_steps.h"
#include "profiler/analysis/trace_layout.h"
#include "tests/gui/trace_files.h"

using namespace meshwork;
using namespace meshwork::gui;

namespace {

constexpr int kRanks = 4;  // two lanes each

QImage render(TimelineView& view, QSize size) {
    QImage frame(size, QImage::Format_ARGB32_Premultiplied);
    QPainter p(&frame);
    view.render_frame(p, size);
    return frame;
}

bool error_dialog_shown(const QWidget& window, const QString& containing) {
    for (auto* box : window.findChildren<QMessageBox*>()) {
        if (box->text().contains(containing)) return true;
    }
    return false;
}

}  // namespace

class TstRemoteTrace : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString trace_;
    QByteArray original_path_;

    void use_path(const QByteArray& first) { qputenv("PATH", first + ":" + MESHWORK_SSH_STANDIN_DIR + ":" + original_path_); }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        QCoreApplication::setOrganizationName("MeshworkTests");
        QCoreApplication::setApplicationName("tst_gui_remote_trace");
        QStandardPaths::setTestModeEnabled(true);  // the scp fallback's cache goes to ~/.qttest
        original_path_ = qgetenv("PATH");
        trace_ = dir_.filePath("run.sqlite");
        test::write_step_trace(trace_, "meshwork-cpu", kRanks, 5'000, 40'000, 10'000);
    }

    void init() {
        use_path(dir_.path().toLocal8Bit() + "/no-bin");
        qputenv("MESHWORK_REMOTE_CLI", MESHWORK_CLI_PATH);
    }

    void cleanup() {
        qputenv("PATH", original_path_);
        qunsetenv("MESHWORK_REMOTE_CLI");
        qunsetenv("MESHWORK_TEST_SSH_DIE_ON");
    }

    void remote_trace_draws_what_the_local_file_draws() {
        MainWindow w;
        QSignalSpy opened(&w, &MainWindow::trace_opened);
        QSignalSpy failed(&w, &MainWindow::trace_failed);
        w.resize(1400, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.open_trace("node01:" + trace_);
        QVERIFY(opened.wait(20000));
        QCOMPARE(failed.count(), 0);
        QCOMPARE(opened.at(0).at(0).toString(), "node01:" + trace_);
        auto* view = w.timeline()->view();
        const auto* remote = dynamic_cast<const RemoteTraceSource*>(view->source());
        QVERIFY(remote);
        QCOMPARE(remote->lane_count(), 2 * kRanks);
        QSignalSpy painted(view, &TimelineView::frame_painted);
        QVERIFY(painted.wait(5000));  // the window draws it
        const QString shot = qEnvironmentVariable("MESHWORK_REMOTE_SCREENSHOT");
        if (!shot.isEmpty()) QVERIFY(w.grab().save(shot));

        // The same pixels as the local file, at two zooms.
        TimelineView local;
        local.set_source(std::make_shared<TraceReaderSource>(profiler::TraceReader::open(trace_.toStdString())));
        local.set_steps_shown(false);  // the remote protocol carries no steps: no step row there
        local.resize(view->size());
        local.show();
        QVERIFY(QTest::qWaitForWindowExposed(&local));
        // Same viewport (their scroll bars may differ): the same scale for the same window.
        local.resize(local.size() + (view->viewport()->size() - local.viewport()->size()));
        QTRY_COMPARE(local.viewport()->size(), view->viewport()->size());
        for (const auto& [t0, t1] : {std::pair<double, double>{0, 80'000}, {40'000, 46'000}}) {
            view->set_visible_window(t0, t1);
            local.set_visible_window(t0, t1);
            const QImage got = render(*view, view->viewport()->size());
            const QImage want = render(local, local.viewport()->size());
            QVERIFY(view->last_frame_items() > 0);
            QCOMPARE(view->last_frame_items(), local.last_frame_items());
            QVERIFY(got == want);
        }
        // Find and the box totals go over the same session.
        QVERIFY(w.timeline()->find_next("all_reduce"));
        const auto totals = remote->range_stats(0, 2 * kRanks - 1, 0, 100'000);
        QCOMPARE(totals.events, std::int64_t{2 * kRanks});
        // Go to step asks over a session of its own.
        QSignalSpy shown(&w, &MainWindow::step_shown);
        w.go_to_step(0, -1);
        QVERIFY(shown.wait(20000));
        QCOMPARE(shown.at(0).at(0).toLongLong(), 5'000);
        QCOMPARE(shown.at(0).at(1).toLongLong(), 5'000 + 1000 * (kRanks - 1) + 50'000);
    }

    void remote_trace_carries_its_layout_mesh() {
        // A simulated trace carries its layout: the remote source gives the same mesh as the
        // local one (lanes group by it).
        const QString sim = dir_.filePath("sim.sqlite");
        QProcess cli;
        cli.start(MESHWORK_CLI_PATH, {"simulate", QString(MESHWORK_RESOURCES_DIR) + "/layouts/tiny-cpu.json", "--trace", sim});
        QVERIFY(cli.waitForFinished(120000));
        QCOMPARE(cli.exitCode(), 0);
        const TraceReaderSource local(profiler::TraceReader::open(sim.toStdString()));
        const auto layout = profiler::trace_layout(local.reader());
        QVERIFY(layout);
        const DeviceMesh mesh = layout->mesh();
        const auto remote = std::make_shared<RemoteTraceSource>(connect_remote_trace({"node01", sim}));
        QVERIFY(remote->mesh());
        QVERIFY(remote->layout_error().empty());
        QCOMPARE(remote->mesh()->world_size(), mesh.world_size());
        for (int r = 0; r < mesh.world_size(); ++r) QVERIFY(remote->mesh()->coords(r) == mesh.coords(r));
        QCOMPARE(remote->lane_count(), local.lane_count());
    }

    void remote_rank_overview_is_computed_where_the_trace_lies() {
        // The Ranks tab of a host:path trace asks serve-trace for the matrix: the same figures
        // and the same mesh grouping as the local file gives.
        const QString sim = dir_.filePath("sim-ranks.sqlite");
        QProcess cli;
        cli.start(MESHWORK_CLI_PATH, {"simulate", QString(MESHWORK_RESOURCES_DIR) + "/layouts/tiny-cpu.json",
                                      "--all-ranks", "--trace", sim});
        QVERIFY(cli.waitForFinished(120000));
        QCOMPARE(cli.exitCode(), 0);
        const auto reader = profiler::TraceReader::open(sim.toStdString());
        const profiler::RankStepMatrix want = profiler::compute_rank_steps(reader);
        QVERIFY(want.ranks.size() > 1);

        MainWindow w;
        QSignalSpy opened(&w, &MainWindow::trace_opened);
        QSignalSpy ready(&w, &MainWindow::rank_overview_ready);
        QSignalSpy failed(&w, &MainWindow::rank_overview_failed);
        w.open_trace("node01:" + sim);
        QVERIFY(opened.wait(20000));
        w.show_view(MainWindow::View::Ranks);
        QVERIFY(ready.wait(30000));
        QCOMPARE(failed.count(), 0);
        const RankOverviewData* got = w.rank_overview()->overview()->data();
        QVERIFY(got);
        QVERIFY(got->layout_error.isEmpty());
        QCOMPARE(got->matrix.ranks, want.ranks);
        QCOMPARE(got->matrix.steps, want.steps);
        QCOMPARE(got->matrix.cells.size(), want.cells.size());
        for (std::size_t i = 0; i < want.cells.size(); ++i) {
            QCOMPARE(got->matrix.cells[i].step_s, want.cells[i].step_s);
            QCOMPARE(got->matrix.cells[i].exposed_comm_s, want.cells[i].exposed_comm_s);
            QCOMPARE(got->matrix.cells[i].waited_for_rank, want.cells[i].waited_for_rank);
        }
        // Grouped by the layout's mesh, as a local trace is.
        const auto layout = profiler::trace_layout(reader);
        QVERIFY(layout);
        const DeviceMesh mesh = layout->mesh();
        const RankOverviewData local = make_rank_overview_data(want, &mesh, "local");
        QCOMPARE(got->matrix_row, local.matrix_row);
    }

    void session_that_dies_shows_an_error_and_the_window_keeps_working() {
        // The stand-in drops the connection, as a lost ssh session does, at the first
        // request that searches for "die-here".
        qputenv("MESHWORK_TEST_SSH_DIE_ON", "die-here");
        MainWindow w;
        QSignalSpy opened(&w, &MainWindow::trace_opened);
        QSignalSpy lost(&w, &MainWindow::remote_trace_lost);
        w.resize(1400, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.open_trace("node01:" + trace_);
        QVERIFY(opened.wait(20000));
        auto* view = w.timeline()->view();
        QSignalSpy painted(view, &TimelineView::frame_painted);
        QVERIFY(painted.wait(5000));
        QVERIFY(!w.timeline()->find_next("die-here"));
        QVERIFY(lost.wait(5000));
        const QString message = lost.at(0).at(1).toString();
        QVERIFY2(message.contains("was lost") && message.contains("node01:"), qPrintable(message));
        QVERIFY2(message.contains("closed by remote host"), qPrintable(message));
        QVERIFY(error_dialog_shown(w, "was lost"));
        // No hang: later frames, finds and details return at once with nothing.
        for (const auto& [t0, t1] : {std::pair<double, double>{10'000, 20'000}, {0, 3'000}}) {
            view->set_visible_window(t0, t1);
            render(*view, view->viewport()->size());
            QVERIFY(painted.wait(20000));
        }
        QVERIFY(!w.timeline()->find_next("all_reduce"));
        QCOMPARE(lost.count(), 1);  // told once
        // The window still opens traces.
        w.open_trace(trace_);
        QVERIFY(opened.wait(20000));
        QCOMPARE(opened.last().at(0).toString(), trace_);
        QVERIFY(dynamic_cast<const TraceReaderSource*>(view->source()));
    }

    void host_without_meshwork_cli_falls_back_to_scp() {
        // The remote command is missing (an older install, or none); a fake scp copies.
        const QString bin = dir_.filePath("bin-scp");
        QVERIFY(QDir().mkpath(bin));
        QFile scp(bin + "/scp");
        QVERIFY(scp.open(QIODevice::WriteOnly));
        scp.write("#!/bin/sh\nsrc=; dst=\nfor a in \"$@\"; do src=\"$dst\"; dst=\"$a\"; done\ncp -- \"${src#*:}\" \"$dst\"\n");
        scp.close();
        QVERIFY(scp.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        use_path(bin.toLocal8Bit());
        qputenv("MESHWORK_REMOTE_CLI", dir_.filePath("nowhere/meshwork-cli").toLocal8Bit());
        QFile::remove(remote_cache_path("node02", trace_));
        MainWindow w;
        QSignalSpy opened(&w, &MainWindow::trace_opened);
        QSignalSpy unavailable(&w, &MainWindow::remote_serve_unavailable);
        w.trace_menu()->open_remote("node02:" + trace_);
        QVERIFY(opened.wait(20000));
        QCOMPARE(unavailable.count(), 1);
        QVERIFY2(unavailable.at(0).at(1).toString().contains("remote meshwork-cli was not found"),
                 qPrintable(unavailable.at(0).at(1).toString()));
        QCOMPARE(opened.at(0).at(0).toString(), remote_cache_path("node02", trace_));
        QVERIFY(dynamic_cast<const TraceReaderSource*>(w.timeline()->view()->source()));
    }

    void fallback_failure_says_both_reasons() {
        const QString bin = dir_.filePath("bin-scp-fails");
        QVERIFY(QDir().mkpath(bin));
        QFile scp(bin + "/scp");
        QVERIFY(scp.open(QIODevice::WriteOnly));
        scp.write("#!/bin/sh\necho 'scp: /scratch/run.sqlite: Permission denied' >&2\nexit 1\n");
        scp.close();
        QVERIFY(scp.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        use_path(bin.toLocal8Bit());
        qputenv("MESHWORK_REMOTE_CLI", dir_.filePath("nowhere/meshwork-cli").toLocal8Bit());
        MainWindow w;
        QSignalSpy failed(w.trace_menu(), &TraceMenu::failed);
        w.open_trace("node03:/scratch/run.sqlite");
        QVERIFY(failed.wait(20000));
        const QString message = w.trace_menu()->last_error();
        QVERIFY2(message.contains("Permission denied"), qPrintable(message));
        QVERIFY2(message.contains("remote meshwork-cli was not found"), qPrintable(message));
    }
};

QTEST_MAIN(TstRemoteTrace)
#include "tst_remote_trace.moc"
