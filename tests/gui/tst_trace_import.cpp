// Import and remote open from the File menu: a corrupt file gives an error dialog (never a
// crash), a PyTorch trace is imported into the cache and opened, an import can be
// cancelled, and remote traces are copied with the system's scp when their host cannot
// serve them — here a fake scp first on PATH that copies a local file, one that fails like
// ssh does, one that hangs (cancel), and none at all (tst_gui_remote_trace: serving).
#include <QtTest>

#include <QMainWindow>
#include <QMenuBar>
#include <QMessageBox>
#include <QStandardPaths>

#include "gui/mainwindow/trace_menu.h"
#include "profiler/store/trace_reader.h"
#include "gui/timeline/timeline_panel.h"
#include "gui/trace/remote_fetch.h"
#include "gui/trace/trace_cache.h"
#include "gui/trace/trace_import_job.h"
#include "tests/gui/trace_files.h"

using namespace meshwork;
using namespace meshwork::gui;

class TstTraceImport : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QByteArray original_path_;

    struct Fixture {
        QMainWindow window;
        TimelinePanel* timeline = nullptr;
        TraceMenu* menu = nullptr;
        QStringList opened;  // what the menu asked the window to open
        Fixture() {
            timeline = new TimelinePanel(&window);
            window.setCentralWidget(timeline);
            menu = new TraceMenu({&window, timeline, [this](const QString& p) { opened << p; }, [] {}},
                                 window.menuBar()->addMenu("File"));
        }
        [[nodiscard]] bool error_dialog_shown() const {
            for (auto* box : window.findChildren<QMessageBox*>()) {
                if (box->isVisible()) return true;
            }
            return false;
        }
    };

    QString write_file(const QString& name, const QByteArray& bytes) {
        const QString path = dir_.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly)) return {};
        f.write(bytes);
        return path;
    }

    // A folder holding an executable `scp` with `body` (sh), put first on PATH.
    void use_fake_scp(const QString& name, const QByteArray& body) {
        const QString bin = dir_.filePath(name);
        QVERIFY(QDir().mkpath(bin));
        const QString scp = write_file(name + "/scp", "#!/bin/sh\n" + body);
        QVERIFY(QFile::setPermissions(scp, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        qputenv("PATH", (bin + ":").toLocal8Bit() + original_path_);
    }

    // A Kineto trace of `kernels` back-to-back kernels on one stream.
    static QByteArray kineto_json(int kernels) {
        QByteArray json = R"({"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [)";
        for (int i = 0; i < kernels; ++i) {
            if (i) json += ',';
            json += QByteArray(R"({"ph": "X", "cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 7, "ts": )") +
                    QByteArray::number(10 + 3 * i) + R"(, "dur": 2, "args": {"device": 0, "stream": 7}})";
        }
        return json + "]}";
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        QStandardPaths::setTestModeEnabled(true);  // the cache goes to ~/.qttest, not the user's
        original_path_ = qgetenv("PATH");
    }

    void cleanup() { qputenv("PATH", original_path_); }

    void corrupt_import_shows_an_error() {
        Fixture f;
        QSignalSpy failed(f.menu, &TraceMenu::failed);
        // Kineto JSON cut short, and an "SQLite" file that is garbage after the header.
        const QString json = write_file("cut.json", kineto_json(5).left(120));
        QByteArray sqlite("SQLite format 3");
        sqlite.append('\0');
        sqlite.append(QByteArray(4096, '\x5a'));
        const QString db = write_file("garbage.nsys.sqlite", sqlite);
        for (const QString& path : {json, db}) {
            f.menu->import_trace(path);
            QVERIFY(failed.wait(10000));
            QVERIFY2(f.menu->last_error().contains(QFileInfo(path).fileName()), qPrintable(f.menu->last_error()));
            QVERIFY(f.error_dialog_shown());
            QVERIFY(f.opened.isEmpty());
            QVERIFY(!QFileInfo::exists(import_cache_path(path)));
        }
    }

    void pytorch_trace_is_imported_into_the_cache_and_opened() {
        Fixture f;
        const QString input = write_file("rank0.pt.trace.json", kineto_json(2000));
        QFile::remove(import_cache_path(input));
        QSignalSpy done(f.menu, &TraceMenu::import_finished);
        f.menu->import_trace(input);
        QVERIFY(done.wait(20000));
        const QString out = done.at(0).at(0).toString();
        QCOMPARE(f.opened, QStringList{out});
        QVERIFY(out.startsWith(QStandardPaths::writableLocation(QStandardPaths::CacheLocation)));
        const auto reader = profiler::TraceReader::open(out.toStdString());
        QCOMPARE(reader.event_count(), 2000);
        // The second time the cached import opens directly.
        f.menu->import_trace(input);
        QCOMPARE(done.count(), 2);
        QCOMPARE(f.opened.size(), 2);
    }

    void import_can_be_cancelled() {
        TraceImportJob job;
        const QString input = write_file("big.json", kineto_json(50'000));
        const QString out = dir_.filePath("big.sqlite");
        QSignalSpy cancelled(&job, &TraceImportJob::cancelled);
        QSignalSpy finished(&job, &TraceImportJob::finished);
        QVERIFY(job.start(input, out));
        QVERIFY(!job.start(input, out));  // one at a time
        job.cancel();
        QVERIFY(cancelled.wait(20000));
        QCOMPARE(finished.count(), 0);
        QVERIFY(!QFileInfo::exists(out));
    }

    void remote_spec_is_checked() {
        RemoteSpec spec;
        QString error;
        QVERIFY(parse_remote_spec("me@node01:/scratch/run/rank0.sqlite", spec, error));
        QCOMPARE(spec.host, QString("me@node01"));
        QCOMPARE(spec.path, QString("/scratch/run/rank0.sqlite"));
        QVERIFY(parse_remote_spec("[fe80::1]:t.sqlite", spec, error));
        QCOMPARE(spec.host, QString("[fe80::1]"));
        QVERIFY(!parse_remote_spec("/local/file.sqlite", spec, error));
        QVERIFY(!parse_remote_spec("node01:", spec, error));
        QVERIFY(!parse_remote_spec("-oProxyCommand=x:y", spec, error));
        // Shell syntax in the host, a control character in the path (ssh_command.h).
        for (const char* bad : {"node01;touch x:/p", "$(touch x):/p", "`id`:/p", "me@-o:/p", "node01:/p\ntouch x"}) {
            QVERIFY2(!parse_remote_spec(bad, spec, error), bad);
        }
        QVERIFY(error.contains("control character"));
    }

    void remote_trace_is_fetched_with_scp_and_opened() {
        const QString trace = dir_.filePath("remote-run.sqlite");
        test::write_step_trace(trace, "meshwork-cpu", 2, 0, 1000, 500);
        const QString args_log = dir_.filePath("scp-args.txt");
        // Copies the local file named after "host:" and logs its arguments, one a line.
        use_fake_scp("bin-ok", "for a in \"$@\"; do echo \"$a\"; done > '" + args_log.toLocal8Bit() +
                                   "'\nsrc=; dst=\nfor a in \"$@\"; do src=\"$dst\"; dst=\"$a\"; done\n"
                                   "cp -- \"${src#*:}\" \"$dst\"\n");
        Fixture f;
        QSignalSpy fetched(f.menu, &TraceMenu::remote_fetched);
        f.menu->fetch_remote("node07:" + trace);
        QVERIFY(fetched.wait(10000));
        const QString local = fetched.at(0).at(0).toString();
        QCOMPARE(f.opened, QStringList{local});
        QCOMPARE(local, remote_cache_path("node07", trace));
        QCOMPARE(QFileInfo(local).size(), QFileInfo(trace).size());
        QVERIFY(!QFileInfo::exists(local + ".part"));
        QFile log(args_log);
        QVERIFY(log.open(QIODevice::ReadOnly));
        const QStringList args = QString::fromLocal8Bit(log.readAll()).split('\n', Qt::SkipEmptyParts);
        QVERIFY(args.contains("-B"));  // batch mode: never a password prompt
        QCOMPARE(args.at(args.size() - 3), QString("--"));
        QCOMPARE(args.at(args.size() - 2), "node07:" + trace);
    }

    void open_remote_asks_the_window_to_serve_it() {
        // The window serves host:path through ssh (tst_gui_remote_trace); the menu only checks it.
        Fixture f;
        f.menu->open_remote(" node07:/scratch/run.sqlite ");
        QCOMPARE(f.opened, QStringList{"node07:/scratch/run.sqlite"});
        QSignalSpy failed(f.menu, &TraceMenu::failed);
        f.menu->open_remote("/local/only.sqlite");
        QCOMPARE(failed.count(), 1);
        QCOMPARE(f.opened.size(), 1);
    }

    void failing_scp_shows_its_message() {
        use_fake_scp("bin-fail", "echo 'ssh: Could not resolve hostname nosuchnode: Name or service not known' >&2\n"
                                 "exit 255\n");
        Fixture f;
        QSignalSpy failed(f.menu, &TraceMenu::failed);
        f.menu->fetch_remote("nosuchnode:/tmp/x.sqlite");
        QVERIFY(failed.wait(10000));
        QVERIFY2(f.menu->last_error().contains("Could not resolve hostname nosuchnode"), qPrintable(f.menu->last_error()));
        QVERIFY(f.menu->last_error().contains("255"));
        QVERIFY(f.error_dialog_shown());
        QVERIFY(f.opened.isEmpty());
        QVERIFY(!QFileInfo::exists(remote_cache_path("nosuchnode", "/tmp/x.sqlite") + ".part"));
    }

    void missing_scp_is_a_clear_error() {
        const QString empty = dir_.filePath("bin-empty");
        QVERIFY(QDir().mkpath(empty));
        qputenv("PATH", empty.toLocal8Bit());
        Fixture f;
        QSignalSpy failed(f.menu, &TraceMenu::failed);
        f.menu->fetch_remote("node01:/tmp/x.sqlite");
        QCOMPARE(failed.count(), 1);
        QVERIFY2(f.menu->last_error().contains("scp was not found"), qPrintable(f.menu->last_error()));
    }

    void hanging_scp_can_be_cancelled() {
        use_fake_scp("bin-hang", "exec sleep 60\n");
        RemoteFetch fetch;
        QSignalSpy cancelled(&fetch, &RemoteFetch::cancelled);
        RemoteSpec spec{"node01", "/tmp/x.sqlite"};
        QVERIFY(fetch.start(spec, dir_.filePath("hang.sqlite")));
        QVERIFY(fetch.running());
        QTest::qWait(200);
        fetch.cancel();
        QVERIFY(cancelled.wait(5000));
        QVERIFY(!fetch.running());
        QVERIFY(!QFileInfo::exists(dir_.filePath("hang.sqlite")));
    }
};

QTEST_MAIN(TstTraceImport)
#include "tst_trace_import.moc"
