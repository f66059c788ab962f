// Reading a trace never writes (issue 35, docs/RELIABILITY.md "Readers never write"): every
// reader of a Meshwork trace (the CLI verbs that read one, serve-trace, the GUI's timeline and
// Ranks view) is given a trace with a file planted beside it, as an attacker with write access
// to a shared folder would plant it:
//  - a hot rollback journal with no pages whose super-journal names another file (SQLite's
//    recovery deletes that file);
//  - a hot rollback journal declaring the database one page long (recovery truncates it);
//  - a write-ahead log (a read-only connection creates -shm beside it; a writer checkpoints it).
// Each must end with exit 2 and a message saying the trace was left unfinished, and every file
// in the folder must be byte-identical afterwards, with no file added or removed.
// recover-trace, the one writer that replays them, does so on a copy and writes a new file.
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMap>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "core/trace/trace_event.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_writer.h"

#ifndef MESHWORK_CLI_PATH
#error "MESHWORK_CLI_PATH must name meshwork-cli"
#endif

namespace {

constexpr int kPageSize = 8192;  // TraceWriter's page size (trace_writer.cpp)

void write_trace(const QString& path, int events) {
    auto writer = meshwork::profiler::TraceWriter::create(path.toStdString());
    meshwork::TraceRunInfo info;
    info.source = "test";
    info.world_size = 2;
    writer->set_run_info(info);
    for (int rank = 0; rank < 2; ++rank) {
        const int track = writer->add_track({rank, meshwork::TrackKind::ComputeStream, 0, "compute"});
        for (int i = 0; i < events; ++i) {
            meshwork::TraceEvent e;
            e.track = track;
            e.rank = rank;
            e.name = i % 2 ? "gemm" : "softmax";
            e.start_ns = std::int64_t{i} * 1000;
            e.end_ns = e.start_ns + 700;
            e.step = i / 100;
            e.flops = 1e6;
            e.correlation_id = i;
            writer->add_event(e);
        }
    }
    writer->close();
}

QByteArray be32(quint32 v) {
    QByteArray b(4, '\0');
    for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
    return b;
}

// A hot rollback journal as SQLite's pager.c reads it: a 512-byte header (magic, record
// count 0, checksum seed, the database's size before the transaction in pages, sector and
// page size), no page records, and optionally a super-journal record at the end (page
// number, name, its length, the sum of its bytes, magic).
void plant_journal(const QString& path, quint32 original_pages, const QString& super_journal) {
    const QByteArray magic("\xd9\xd5\x05\xf9\x20\xa1\x63\xd7", 8);
    QByteArray j = magic + be32(0) + be32(0) + be32(original_pages) + be32(512) + be32(kPageSize);
    j.append(QByteArray(512 - j.size(), '\0'));
    if (!super_journal.isEmpty()) {
        const QByteArray name = super_journal.toUtf8();
        quint32 sum = 0;
        for (const char c : name) sum += static_cast<quint32>(static_cast<unsigned char>(c));
        j += be32(0x40000000 / kPageSize + 1) + name + be32(static_cast<quint32>(name.size())) + be32(sum) + magic;
    }
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(j);
}

// A real write-ahead log of `trace`: a copy is changed in WAL mode by a child that exits
// without closing (as a killed writer does), and its log is planted beside `trace`.
void plant_wal(const QString& trace, const QString& scratch_dir) {
    const QString copy = scratch_dir + "/wal-source.sqlite";
    QFile::remove(copy);
    QVERIFY(QFile::copy(trace, copy));
    const pid_t child = ::fork();
    if (child == 0) {
        sqlite3* db = nullptr;
        if (sqlite3_open_v2(copy.toUtf8().constData(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) ::_exit(3);
        const char* sql =
            "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;"
            "UPDATE events SET bytes = 4096; UPDATE meta SET value = 'planted' WHERE key = 'source';";
        ::_exit(sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK ? 0 : 4);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    QCOMPARE(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
    QVERIFY(QFileInfo(copy + "-wal").size() > 0);
    QVERIFY(QFile::copy(copy + "-wal", trace + "-wal"));
}

// Name -> SHA-256 of every file in `dir`.
QMap<QString, QByteArray> snapshot(const QString& dir) {
    QMap<QString, QByteArray> files;
    for (const auto& info : QDir(dir).entryInfoList(QDir::Files | QDir::Hidden | QDir::System)) {
        QFile f(info.filePath());
        if (!f.open(QIODevice::ReadOnly)) {
            files[info.fileName()] = "unreadable";
            continue;
        }
        files[info.fileName()] = QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex();
    }
    return files;
}

struct Outcome {
    int exit_code = -1;
    bool crashed = false;
    QString err;
};

Outcome run(const QString& program, const QStringList& args, const QByteArray& input = {}) {
    QProcess p;
    p.start(program, args);
    Outcome o;
    if (!p.waitForStarted(10000)) {
        o.err = "did not start";
        return o;
    }
    if (!input.isEmpty()) p.write(input);
    p.closeWriteChannel();
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        o.err = "did not finish in 60 s";
        return o;
    }
    o.crashed = p.exitStatus() != QProcess::NormalExit;
    o.exit_code = p.exitCode();
    o.err = QString::fromUtf8(p.readAllStandardError()) + QString::fromUtf8(p.readAllStandardOutput());
    return o;
}

}  // namespace

class TestReadersReadOnly : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void plantedFilesChangeNothing_data();
    void plantedFilesChangeNothing();
    void recoverReplaysALogOnACopy();
    void recoverRefusesASuperJournal();
    void craftedTracesAreRefusedByTheGui_data();
    void craftedTracesAreRefusedByTheGui();

private:
    QTemporaryDir templates_;
    QString clean_;
};

void TestReadersReadOnly::initTestCase() {
    QVERIFY(templates_.isValid());
    clean_ = templates_.filePath("clean.sqlite");
    write_trace(clean_, 600);
    QVERIFY(QFileInfo(clean_).size() > 4 * kPageSize);
}

void TestReadersReadOnly::plantedFilesChangeNothing_data() {
    QTest::addColumn<QString>("plant");
    QTest::addColumn<QString>("program");  // "cli" or "gui"
    QTest::addColumn<QStringList>("args");  // {trace} {other} {out} replaced
    QTest::addColumn<QByteArray>("input");
    struct Reader {
        const char* name;
        const char* program;
        QStringList args;
        QByteArray input;
    };
    const QList<Reader> readers = {
        {"stats", "cli", {"stats", "{trace}"}, {}},
        {"stats --stragglers", "cli", {"stats", "{trace}", "--stragglers"}, {}},
        {"compare (measured)", "cli", {"compare", "{other}", "{trace}"}, {}},
        {"compare (predicted)", "cli", {"compare", "{trace}", "{other}"}, {}},
        {"calibrate", "cli", {"calibrate", "{trace}", "--out", "{out}/cluster.json"}, {}},
        {"merge (an input)", "cli", {"merge", "{other}", "{trace}", "--out", "{out}/merged.sqlite"}, {}},
        {"export-trace", "cli", {"export-trace", "{trace}", "--out", "{out}/trace.json"}, {}},
        {"import-trace", "cli", {"import-trace", "{trace}", "--out", "{out}/imported.sqlite"}, {}},
        {"serve-trace", "cli", {"serve-trace", "{trace}"}, "{\"id\":1,\"op\":\"bye\"}\n"},
        {"gui timeline", "gui", {"--trace", "{trace}", "--view", "timeline", "--screenshot", "{out}/t.png"}, {}},
        {"gui ranks", "gui", {"--trace", "{trace}", "--view", "ranks", "--screenshot", "{out}/r.png"}, {}},
    };
    for (const char* plant : {"super-journal", "journal-one-page", "wal"}) {
        for (const auto& r : readers) {
            QTest::newRow(qPrintable(QString("%1, %2").arg(plant, r.name)))
                << QString(plant) << QString(r.program) << r.args << r.input;
        }
    }
}

void TestReadersReadOnly::plantedFilesChangeNothing() {
    QFETCH(QString, plant);
    QFETCH(QString, program);
    QFETCH(QStringList, args);
    QFETCH(QByteArray, input);
#ifdef MESHWORK_GUI_PATH
    const QString gui = MESHWORK_GUI_PATH;
#else
    const QString gui;
#endif
    if (program == "gui" && gui.isEmpty()) QSKIP("the GUI is not built");

    QTemporaryDir dir, out, scratch;
    const QString trace = dir.filePath("trace.sqlite"), other = dir.filePath("other.sqlite");
    const QString victim = dir.filePath("victim.txt");
    QVERIFY(QFile::copy(clean_, trace));
    QVERIFY(QFile::copy(clean_, other));
    {
        QFile v(victim);
        QVERIFY(v.open(QIODevice::WriteOnly));
        v.write("a file the reading user may delete\n");
    }
    const auto pages = static_cast<quint32>(QFileInfo(trace).size() / kPageSize);
    if (plant == "super-journal") plant_journal(trace + "-journal", pages, victim);
    if (plant == "journal-one-page") plant_journal(trace + "-journal", 1, {});
    if (plant == "wal") plant_wal(trace, scratch.path());
    const auto before = snapshot(dir.path());

    for (auto& a : args) {
        a.replace("{trace}", trace).replace("{other}", other).replace("{out}", out.path());
    }
    const auto o = run(program == "gui" ? gui : QString(MESHWORK_CLI_PATH), args, input);
    const QString context = args.join(' ') + "\n" + o.err;
    QVERIFY2(!o.crashed, qPrintable("crashed: " + context));
    QVERIFY2(o.exit_code == 2, qPrintable(QString("exit %1, not 2: ").arg(o.exit_code) + context));
    QVERIFY2(o.err.contains("left unfinished"), qPrintable("no 'left unfinished' message: " + context));
    QVERIFY2(o.err.contains(trace), qPrintable("the message does not name the trace: " + context));

    const auto after = snapshot(dir.path());
    QCOMPARE(after.keys(), before.keys());  // nothing deleted (the victim) or added (-shm)
    for (auto it = before.cbegin(); it != before.cend(); ++it) {
        QVERIFY2(after.value(it.key()) == it.value(), qPrintable(it.key() + " changed: " + context));
    }
}

// A writer killed with commits in its log: recover-trace gives a trace holding them, and the
// killed file and its log stay as they were.
void TestReadersReadOnly::recoverReplaysALogOnACopy() {
    QTemporaryDir dir, out, scratch;
    const QString trace = dir.filePath("killed.sqlite");
    QVERIFY(QFile::copy(clean_, trace));
    plant_wal(trace, scratch.path());
    const auto before = snapshot(dir.path());
    const QString recovered = out.filePath("recovered.sqlite");
    const auto o = run(MESHWORK_CLI_PATH, {"recover-trace", trace, "--out", recovered, "--json"});
    QVERIFY2(o.exit_code == 0 && !o.crashed, qPrintable(o.err));
    QCOMPARE(snapshot(dir.path()), before);
    QCOMPARE(QDir(out.path()).entryList(QDir::Files), QStringList{"recovered.sqlite"});  // no copy left
    try {
        const auto reader = meshwork::profiler::TraceReader::open(recovered.toStdString());
        QCOMPARE(reader.run_info().source, std::string("planted"));  // the log's commit is in
        std::int64_t changed = 0;
        reader.for_each_event([&](const meshwork::TraceEvent& e) { changed += e.bytes == 4096; });
        QCOMPARE(changed, reader.event_count());
        QCOMPARE(reader.event_count(), std::int64_t{1200});
    } catch (const std::exception& e) {
        QFAIL(e.what());
    }
}

void TestReadersReadOnly::recoverRefusesASuperJournal() {
    QTemporaryDir dir, out;
    const QString trace = dir.filePath("trace.sqlite"), victim = dir.filePath("victim.txt");
    QVERIFY(QFile::copy(clean_, trace));
    {
        QFile v(victim);
        QVERIFY(v.open(QIODevice::WriteOnly));
        v.write("keep me\n");
    }
    plant_journal(trace + "-journal", static_cast<quint32>(QFileInfo(trace).size() / kPageSize), victim);
    const auto before = snapshot(dir.path());
    const auto o = run(MESHWORK_CLI_PATH, {"recover-trace", trace, "--out", out.filePath("r.sqlite")});
    QVERIFY2(o.exit_code == 2 && !o.crashed, qPrintable(o.err));
    QVERIFY2(o.err.contains("super-journal"), qPrintable(o.err));
    QCOMPARE(snapshot(dir.path()), before);
    QVERIFY(QDir(out.path()).entryList(QDir::Files).isEmpty());
}

// The GUI's loading runs the checks the CLI runs: a crafted trace is refused with exit 2 (a
// dialog without --screenshot) naming what is wrong, never an abort.
void TestReadersReadOnly::craftedTracesAreRefusedByTheGui_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("view");
    QTest::addColumn<QString>("expected");
    const QList<QStringList> cases = {
        {"trace-unknown-string-id.sqlite", "events[id=1].name_id"},
        {"trace-overflowing-span.sqlite", "events[id=1].start_ns"},
        {"trace-negative-duration.sqlite", "events[id=1].end_ns"},
        {"trace-text-start.sqlite", "events[id=1].start_ns"},
        {"trace-null-start.sqlite", "events[id=1].start_ns"},
        {"trace-real-counter-time.sqlite", "counters[rowid=1].time_ns"},
        {"trace-third-party-trigger.sqlite", "trigger 'wipe'"},
        {"trace-view-instead-of-events.sqlite", "view 'events'"},
    };
    for (const auto& c : cases) {
        for (const char* view : {"timeline", "ranks"}) {
            QTest::newRow(qPrintable(c[0] + ", " + view)) << c[0] << QString(view) << c[1];
        }
    }
}

void TestReadersReadOnly::craftedTracesAreRefusedByTheGui() {
    QFETCH(QString, file);
    QFETCH(QString, view);
    QFETCH(QString, expected);
#ifdef MESHWORK_GUI_PATH
    QTemporaryDir out;
    const QString trace = QString(MESHWORK_HOSTILE_DIR) + "/" + file;
    const auto o = run(MESHWORK_GUI_PATH, {"--trace", trace, "--view", view, "--screenshot", out.filePath("x.png")});
    QVERIFY2(!o.crashed, qPrintable("crashed: " + o.err));
    QVERIFY2(o.exit_code == 2, qPrintable(QString("exit %1: ").arg(o.exit_code) + o.err));
    QVERIFY2(o.err.contains(expected), qPrintable(o.err));
    QVERIFY(!QFile::exists(out.filePath("x.png")));
#else
    Q_UNUSED(file);
    Q_UNUSED(view);
    Q_UNUSED(expected);
    QSKIP("the GUI is not built");
#endif
}

QTEST_GUILESS_MAIN(TestReadersReadOnly)
#include "tst_readers_read_only.moc"
