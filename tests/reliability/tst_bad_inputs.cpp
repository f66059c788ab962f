// The hostile-input corpus tests/fixtures/hostile/: every case in cases.txt is fed to the meshwork-cli
// verb it names, which must exit 2 (bad input) within seconds, not die of a signal, and print
// an error that names the file and says what is wrong. Outside sanitizer builds each run is
// limited to 4 GiB of address space, so an allocation sized by the file fails the case.
#include <sys/resource.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#ifndef MESHWORK_BAD_INPUTS_DIR
#error "MESHWORK_BAD_INPUTS_DIR must name tests/fixtures/hostile"
#endif

namespace {

constexpr int kFinishWithinMs = 20000;  // "quickly": a hang or a huge allocation runs longer

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;  // sanitizers reserve terabytes of address space
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

struct Case {
    QString file;       // absolute path
    QStringList args;   // with {} and {out} still in place
    QString expected;   // a fragment of the error message
};

QList<Case> read_cases(QString& error) {
    const QDir dir(MESHWORK_BAD_INPUTS_DIR);
    QFile f(dir.filePath("cases.txt"));
    if (!f.open(QIODevice::ReadOnly)) {
        error = f.fileName() + ": cannot open";
        return {};
    }
    QList<Case> cases;
    int line_no = 0;
    while (!f.atEnd()) {
        ++line_no;
        const QString line = QString::fromUtf8(f.readLine()).trimmed();
        if (line.isEmpty() || line.startsWith('#')) continue;
        const QStringList fields = line.split(" | ");
        if (fields.size() != 3) {
            error = QString("cases.txt:%1: expected FILE | ARGUMENTS | EXPECTED").arg(line_no);
            return {};
        }
        cases.append({QDir::cleanPath(dir.filePath(fields[0].trimmed())),
                      fields[1].trimmed().split(' ', Qt::SkipEmptyParts), fields[2].trimmed()});
    }
    return cases;
}

}  // namespace

class TestBadInputs : public QObject {
    Q_OBJECT
private slots:
    void everyFileInTheCorpusIsACase();
    void exitsTwoNamingTheFile_data();
    void exitsTwoNamingTheFile();
};

// A file added to tests/fixtures/hostile without a line in cases.txt would never be tried.
void TestBadInputs::everyFileInTheCorpusIsACase() {
    QString error;
    const QList<Case> cases = read_cases(error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QSet<QString> listed;
    for (const Case& c : cases) listed.insert(QFileInfo(c.file).fileName());
    const QDir dir(MESHWORK_BAD_INPUTS_DIR);
    for (const QString& name : dir.entryList(QDir::Files)) {
        if (name == "cases.txt" || (name.startsWith("make_") && name.endsWith(".sh"))) continue;
        QVERIFY2(listed.contains(name), qPrintable(name + " has no case in cases.txt"));
    }
    for (const Case& c : cases) QVERIFY2(QFileInfo::exists(c.file), qPrintable(c.file + " is missing"));
}

void TestBadInputs::exitsTwoNamingTheFile_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expected");
    QString error;
    const QList<Case> cases = read_cases(error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    for (const Case& c : cases) {
        const QString tag = QFileInfo(c.file).fileName() + " " + c.args.value(0);
        QTest::newRow(qPrintable(tag)) << c.file << c.args << c.expected;
    }
}

void TestBadInputs::exitsTwoNamingTheFile() {
    QFETCH(QString, file);
    QFETCH(QStringList, args);
    QFETCH(QString, expected);
    QTemporaryDir out_dir;
    QVERIFY(out_dir.isValid());
    for (QString& a : args) {
        if (a == "{}") a = file;
        if (a == "{out}") a = out_dir.filePath("out.sqlite");
    }

    QProcess cli;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("MESHWORK_RESOURCES", MESHWORK_RESOURCES_DIR);
    cli.setProcessEnvironment(env);
    if (!kSanitized) {
        cli.setChildProcessModifier([] {
            const rlim_t limit = rlim_t{4} << 30;
            const rlimit r{limit, limit};
            ::setrlimit(RLIMIT_AS, &r);
        });
    }
    QElapsedTimer clock;
    clock.start();
    cli.start(MESHWORK_CLI_PATH, args);
    QVERIFY2(cli.waitForStarted(10000), "meshwork-cli did not start");
    const bool finished = cli.waitForFinished(kFinishWithinMs);
    if (!finished) {
        cli.kill();
        cli.waitForFinished(5000);
    }
    const QString err = QString::fromUtf8(cli.readAllStandardError());
    const QString context = "meshwork-cli " + args.join(' ') + "\n" + err;
    QVERIFY2(finished, qPrintable("still running after 20 s: " + context));
    qInfo("%lld ms", static_cast<long long>(clock.elapsed()));
    QVERIFY2(cli.exitStatus() == QProcess::NormalExit, qPrintable("died of a signal: " + context));
    QVERIFY2(cli.exitCode() == 2, qPrintable(QString("exit %1, not 2: ").arg(cli.exitCode()) + context));
    QVERIFY2(err.contains(file), qPrintable("the error does not name the file: " + context));
    QVERIFY2(err.contains(expected), qPrintable("the error does not say \"" + expected + "\": " + context));
}

QTEST_GUILESS_MAIN(TestBadInputs)
#include "tst_bad_inputs.moc"
