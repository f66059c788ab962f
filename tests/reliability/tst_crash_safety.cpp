// Crash safety of the trace store: a profiled process killed with SIGKILL at random points
// leaves a trace that opens, passes PRAGMA integrity_check and holds every event added more
// than one second before the kill (the writer commits at least every second); SIGINT closes
// the trace completely, for the writer itself and for `meshwork-cli run --profile`.
//
// MESHWORK_CRASH_ROUNDS sets the number of kills (default 12), MESHWORK_CRASH_SEED the seed
// of the kill times (printed, so that a failing round can be replayed).
#include <chrono>
#include <csignal>

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include "tests/reliability/crash_check.h"

using namespace meshwork::reliability;

namespace {

constexpr std::int64_t kCommitWindowNs = 1'000'000'000;  // the writer's promise: 1 s

std::int64_t monotonic_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

int env_int(const char* name, int fallback) {
    bool ok = false;
    const int value = qEnvironmentVariableIntValue(name, &ok);
    return ok ? value : fallback;
}

// Starts trace_writer_loop and waits until its trace exists (the writer was created).
bool start_writer(QProcess& p, const QString& trace, const QString& progress) {
    p.start(MESHWORK_TRACE_LOOP_PATH, {trace, progress});
    if (!p.waitForStarted(30000)) return false;
    while (!p.canReadLine()) {
        if (!p.waitForReadyRead(30000)) return false;
    }
    return p.readLine().trimmed() == "ready";
}

// event_numbers() for a QVERIFY: a trace that does not open is a failure with its message,
// not an exception escaping the test function.
bool read_numbers(const QString& trace, std::vector<std::int64_t>& numbers, bool& complete,
                  QString& error) {
    try {
        numbers = event_numbers(trace.toStdString(), &complete);
        return true;
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
}

}  // namespace

class TestCrashSafety : public QObject {
    Q_OBJECT
private slots:
    void sigkillAtRandomPointsLosesNothingCommitted();
    void sigintClosesTheTrace();
    void sigintClosesTheProfileOfCliRun_data();
    void sigintClosesTheProfileOfCliRun();
};

void TestCrashSafety::sigkillAtRandomPointsLosesNothingCommitted() {
    const int rounds = env_int("MESHWORK_CRASH_ROUNDS", 12);
    const quint32 seed = static_cast<quint32>(
        env_int("MESHWORK_CRASH_SEED", static_cast<int>(QRandomGenerator::global()->bounded(1 << 30))));
    qInfo("rounds %d, MESHWORK_CRASH_SEED=%u", rounds, seed);
    QRandomGenerator random(seed);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    std::int64_t kept_total = 0;
    for (int round = 0; round < rounds; ++round) {
        const QString trace = dir.filePath(QString("kill%1.sqlite").arg(round));
        const QString progress = dir.filePath(QString("kill%1.progress").arg(round));
        QProcess p;
        QVERIFY2(start_writer(p, trace, progress), "trace_writer_loop did not start");
        // Anywhere from before the first commit to a few commits in.
        QThread::msleep(random.bounded(2500u));
        const std::int64_t killed_at = monotonic_ns();
        ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitStatus(), QProcess::CrashExit);

        const std::string path = trace.toStdString();
        bool complete = true;
        std::vector<std::int64_t> numbers;
        QString error;
        QVERIFY2(read_numbers(trace, numbers, complete, error),
                 qPrintable(QString("round %1: the killed trace does not open: %2").arg(round).arg(error)));
        QVERIFY2(!complete, "a killed trace must not claim to be complete");
        QCOMPARE(QString::fromStdString(integrity_check(readable_trace(path))), QString("ok"));
        QVERIFY2(is_unbroken_prefix(numbers), qPrintable(QString("round %1: events missing or doubled").arg(round)));

        const auto lines = read_progress(progress.toStdString());
        const std::int64_t required = added_by(lines, killed_at - kCommitWindowNs);
        const std::int64_t added = lines.empty() ? 0 : lines.back().count;
        const auto kept = static_cast<std::int64_t>(numbers.size());
        QVERIFY2(kept >= required,
                 qPrintable(QString("round %1: %2 events kept, %3 had been added more than 1 s before the kill")
                                .arg(round).arg(kept).arg(required)));
        // Nothing that was never added (one batch may be in flight after the last line).
        QVERIFY(kept <= added + 200);
        kept_total += kept;
    }
    qInfo("%d kills survived, %lld events kept in all", rounds, static_cast<long long>(kept_total));
}

void TestCrashSafety::sigintClosesTheTrace() {
    QTemporaryDir dir;
    const QString trace = dir.filePath("int.sqlite");
    QProcess p;
    QVERIFY(start_writer(p, trace, dir.filePath("int.progress")));
    QThread::msleep(1500);
    ::kill(static_cast<pid_t>(p.processId()), SIGINT);
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 0);
    const std::int64_t added = QString(p.readAllStandardOutput()).trimmed().toLongLong();
    QVERIFY(added > 0);

    bool complete = false;
    std::vector<std::int64_t> numbers;
    QString error;
    QVERIFY2(read_numbers(trace, numbers, complete, error), qPrintable(error));
    QVERIFY2(complete, "close() after SIGINT must mark the trace complete");
    QCOMPARE(QString::fromStdString(integrity_check(trace.toStdString())), QString("ok"));
    QCOMPARE(static_cast<std::int64_t>(numbers.size()), added);  // every event, not most
    QVERIFY(is_unbroken_prefix(numbers));
}

void TestCrashSafety::sigintClosesTheProfileOfCliRun_data() {
    QTest::addColumn<int>("signal");
    QTest::addColumn<QString>("message");
    QTest::newRow("SIGINT") << SIGINT << "interrupted (Ctrl-C)";
    // What a scheduler (or mpirun, for the other ranks of a failed job) sends.
    QTest::newRow("SIGTERM") << SIGTERM << "terminated (SIGTERM)";
}

void TestCrashSafety::sigintClosesTheProfileOfCliRun() {
    QFETCH(int, signal);
    QFETCH(QString, message);
    if (!QFileInfo(MESHWORK_CLI_PATH).isExecutable()) QSKIP("meshwork-cli is not built");
    QTemporaryDir dir;
    const QString trace = dir.filePath("run.sqlite");
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(MESHWORK_CLI_PATH, {"run", "--model", "tiny", "--tp", "2", "--seq", "32", "--mbs", "2",
                                "--gbs", "4", "--steps", "100000", "--profile", trace});
    QVERIFY(p.waitForStarted(30000));
    // Interrupt once the run is stepping (a first step line is out), mid-step or between.
    QByteArray out;
    while (!out.contains("step")) {
        if (!p.waitForReadyRead(120000)) break;
        out += p.readAll();
    }
    if (!out.contains("step") && p.state() == QProcess::NotRunning) {
        QSKIP(qPrintable("meshwork-cli run did not start stepping: " + QString(out)));
    }
    QThread::msleep(300);
    ::kill(static_cast<pid_t>(p.processId()), signal);
    QVERIFY2(p.waitForFinished(30000), "run did not stop within 30 s of the signal");
    out += p.readAll();
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 1);  // CLI.md: an interrupted run is a runtime failure
    QVERIFY2(out.contains(message.toUtf8()), out.constData());

    bool complete = false;
    std::vector<std::int64_t> numbers;
    QString error;
    QVERIFY2(read_numbers(trace, numbers, complete, error), qPrintable(error));
    QVERIFY2(complete, "the interrupted run must close its profile");
    QVERIFY(!numbers.empty());
    QCOMPARE(QString::fromStdString(integrity_check(trace.toStdString())), QString("ok"));
}

QTEST_GUILESS_MAIN(TestCrashSafety)
#include "tst_crash_safety.moc"
