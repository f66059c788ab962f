// A complete trace passes SQLite's own checks: PRAGMA integrity_check (what a user runs on a
// trace copied off a cluster) and TraceReader::verify (quick_check). The events are long
// enough to land in long_events, the table SQLite 3.40 misreported as holding NULLs while
// its key columns were not its leading ones. A trace whose writer was killed inside a
// rollback-journal transaction (closing leaves WAL for one) is refused by readers, which never
// replay a journal, and recover_trace() gives it back as committed, from a copy.
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "tests/reliability/crash_check.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_recover.h"
#include "profiler/store/trace_writer.h"

class TestTraceIntegrity : public QObject {
    Q_OBJECT
private slots:
    void closedTraceWithLongEventsPassesIntegrityCheck();
    void killedInsideARollbackTransactionIsRecoveredFromACopy();
};

namespace {

void write_closed_trace(const std::string& path, int events) {
    auto writer = meshwork::profiler::TraceWriter::create(path);
    const int track = writer->add_track({0, meshwork::TrackKind::ComputeStream, 0, "compute"});
    for (int i = 0; i < events; ++i) {
        meshwork::TraceEvent e;
        e.track = track;
        e.name = "op";
        e.start_ns = std::int64_t{i} * 1000;
        e.end_ns = e.start_ns + 500;
        e.correlation_id = i;
        writer->add_event(e);
    }
    writer->close();
}

// In a child process: opens `path` in rollback-journal mode, changes rows inside a
// transaction and exits without committing or closing, as a writer killed while closing
// does. Returns the child's exit status.
int die_inside_a_transaction(const std::string& path) {
    const pid_t child = ::fork();
    if (child == 0) {
        sqlite3* db = nullptr;
        if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) ::_exit(3);
        const char* sql =
            "PRAGMA journal_mode = DELETE; PRAGMA cache_size = 1; BEGIN;"
            "UPDATE meta SET value = '0' WHERE key = 'complete';"
            "UPDATE events SET bytes = bytes + 1;";
        ::_exit(sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK ? 0 : 4);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

void TestTraceIntegrity::closedTraceWithLongEventsPassesIntegrityCheck() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("long.sqlite").toStdString();
    {
        auto writer = meshwork::profiler::TraceWriter::create(path);
        const int track = writer->add_track({0, meshwork::TrackKind::ComputeStream, 0, "compute"});
        for (int i = 0; i < 2000; ++i) {
            meshwork::TraceEvent e;
            e.track = track;
            e.name = "step";
            e.start_ns = std::int64_t{i} * 1'000'000;
            // Every 100th event spans a second: far longer than the finest summary bucket.
            e.end_ns = e.start_ns + (i % 100 == 0 ? 1'000'000'000 : 500);
            e.correlation_id = i;
            writer->add_event(e);
        }
        writer->close();
    }
    QCOMPARE(QString::fromStdString(meshwork::reliability::integrity_check(path)), QString("ok"));
    const auto reader = meshwork::profiler::TraceReader::open(path);
    QVERIFY(reader.complete());
    QCOMPARE(reader.event_count(), 2000);
    try {
        reader.verify();
    } catch (const std::exception& e) {
        QFAIL(e.what());
    }
}

void TestTraceIntegrity::killedInsideARollbackTransactionIsRecoveredFromACopy() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("killed.sqlite").toStdString();
    // Enough rows that the change spills out of a one-page cache: SQLite then syncs the
    // journal (its header gets its magic: the journal is hot) and writes the changed pages
    // into the file, which is half-written until the journal is played back. (A journal
    // whose first byte is still zero was never synced; the file is then as committed and
    // SQLite, like the reader, ignores it.)
    write_closed_trace(path, 20000);
    QCOMPARE(die_inside_a_transaction(path), 0);
    const QString journal = QString::fromStdString(path + "-journal");
    QVERIFY2(QFile::exists(journal), "no journal was left behind");
    const auto bytes_of = [](const QString& file) {
        QFile f(file);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    };
    const QByteArray trace_before = bytes_of(QString::fromStdString(path)), journal_before = bytes_of(journal);
    try {
        (void)meshwork::profiler::TraceReader::open(path);
        QFAIL("a reader opened a trace with a hot journal beside it");
    } catch (const std::exception& e) {
        QVERIFY2(QString(e.what()).contains("left unfinished"), e.what());
    }
    const std::string recovered = dir.filePath("recovered.sqlite").toStdString();
    try {
        const auto r = meshwork::profiler::recover_trace(path, recovered);
        QCOMPARE(QString::fromStdString(r.replayed), journal);
        const auto reader = meshwork::profiler::TraceReader::open(recovered);
        QVERIFY2(reader.complete(), "the uncommitted change must be rolled back");
        QCOMPARE(reader.event_count(), 20000);
        std::int64_t changed = 0;
        reader.for_each_event([&](const meshwork::TraceEvent& e) { changed += e.bytes != 0; });
        QCOMPARE(changed, std::int64_t{0});
    } catch (const std::exception& e) {
        QFAIL(e.what());
    }
    QCOMPARE(QString::fromStdString(meshwork::reliability::integrity_check(recovered)), QString("ok"));
    // The killed file and its journal are as the writer left them.
    QCOMPARE(bytes_of(QString::fromStdString(path)), trace_before);
    QCOMPARE(bytes_of(journal), journal_before);
}

QTEST_GUILESS_MAIN(TestTraceIntegrity)
#include "tst_trace_integrity.moc"
