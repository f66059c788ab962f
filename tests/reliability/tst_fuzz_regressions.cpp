// Replays every input the fuzzers ever found (tests/fixtures/fuzz-regressions/TARGET/*)
// through the same entry point as the fuzz target TARGET, in the normal suite: each must now
// give a value or an InputError. A crash, a sanitizer report or an escaping exception fails.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QTest>

#include "tests/fuzz/fuzz_inputs.h"

class TestFuzzRegressions : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { meshwork::fuzz::use_source_resources(); }
    void replay_data();
    void replay();
};

void TestFuzzRegressions::replay_data() {
    QTest::addColumn<QString>("target");
    QTest::addColumn<QString>("path");
    const QDir root(QString(MESHWORK_TEST_FIXTURES) + "/fuzz-regressions");
    for (const QString& target : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        QDirIterator it(root.filePath(target), QDir::Files);
        while (it.hasNext()) {
            const QString path = it.next();
            QTest::newRow(qPrintable(target + "/" + QFileInfo(path).fileName())) << target << path;
        }
    }
}

void TestFuzzRegressions::replay() {
    QFETCH(QString, target);
    QFETCH(QString, path);
    const auto& points = meshwork::fuzz::entry_points();
    const auto entry = points.find(target.toStdString());
    QVERIFY2(entry != points.end(), qPrintable("no fuzz target named " + target));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray bytes = file.readAll();
    try {
        entry->second(reinterpret_cast<const std::uint8_t*>(bytes.constData()),
                      static_cast<std::size_t>(bytes.size()));
    } catch (const std::exception& e) {
        QFAIL(qPrintable(QString("escaped: ") + e.what()));
    }
}

QTEST_GUILESS_MAIN(TestFuzzRegressions)
#include "tst_fuzz_regressions.moc"
