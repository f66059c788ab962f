// A complete trace passes SQLite's own checks: PRAGMA integrity_check (what a user runs on a
// trace copied off a cluster) and TraceReader::verify (quick_check). The events are long
// enough to land in long_events, the table SQLite 3.40 misreported as holding NULLs while
// its key columns were not its leading ones.
#include <QTemporaryDir>
#include <QTest>

#include "crash_check.h"
#include "store/trace_reader.h"
#include "store/trace_writer.h"

class TestTraceIntegrity : public QObject {
    Q_OBJECT
private slots:
    void closedTraceWithLongEventsPassesIntegrityCheck();
};

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

QTEST_GUILESS_MAIN(TestTraceIntegrity)
#include "tst_trace_integrity.moc"
