// Differential test of the bash interpreter (core/export/shell_script.cpp) against bash
// itself: a generated corpus of small scripts (arithmetic, ((...)), let, local, functions
// with return, subshells, pipelines, `&`, { ...; } | cat, if/case/for, [[ ]] patterns and
// regexes, parameter operators, arrays, break/continue) each ending in torchrun lines; bash
// runs them with `torchrun` replaced by a printer of its arguments, import-args interprets
// them, and the torchrun argument lists must agree, script by script. Skipped when bash is
// not installed. MESHWORK_DIFF_SCRIPTS and MESHWORK_DIFF_SEED change the corpus.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/export/shell_script.h"
#include "tests/core/export/shell_script_generator.h"

using namespace meshwork;


class TestShellDifferential : public QObject {
    Q_OBJECT
private slots:
    void against_bash();
};

void TestShellDifferential::against_bash() {
    const QString bash = QStandardPaths::findExecutable("bash");
    if (bash.isEmpty()) QSKIP("bash is not installed");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // The printer: one line per torchrun, its arguments between \x1f separators.
    const QString bin = dir.filePath("bin");
    QVERIFY(QDir().mkpath(bin));
    {
        QFile printer(bin + "/torchrun");
        QVERIFY(printer.open(QIODevice::WriteOnly));
        printer.write("#!/bin/sh\nprintf '@@torchrun'\nfor a in \"$@\"; do printf '\\037%s' \"$a\"; done\nprintf '\\n'\n");
        printer.close();
        printer.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    }
    const int count = qEnvironmentVariableIsSet("MESHWORK_DIFF_SCRIPTS") ? qEnvironmentVariableIntValue("MESHWORK_DIFF_SCRIPTS") : 150;
    const auto seed = static_cast<std::uint32_t>(
        qEnvironmentVariableIsSet("MESHWORK_DIFF_SEED") ? qEnvironmentVariableIntValue("MESHWORK_DIFF_SEED") : 31);
    meshwork::test::ShellScriptGenerator gen(seed);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("PATH", bin + ":" + env.value("PATH"));
    for (const char* name : {"TP", "PP", "CP", "EP", "A", "S", "X", "NOPE", "i"}) env.remove(name);
    int compared = 0;
    for (int k = 0; k < count; ++k) {
        const std::string script = gen.script();
        const QString path = dir.filePath(QString("s%1.sh").arg(k));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(script.data(), static_cast<qint64>(script.size()));
        f.close();
        QProcess p;
        p.setProcessEnvironment(env);
        p.setWorkingDirectory(dir.path());
        p.start(bash, {path});
        QVERIFY(p.waitForFinished(30000));
        std::vector<std::vector<std::string>> from_bash;
        for (const QByteArray& line : p.readAllStandardOutput().split('\n')) {
            if (!line.startsWith("@@torchrun")) continue;
            std::vector<std::string> words{"torchrun"};
            const QList<QByteArray> parts = line.split('\x1f');
            for (qsizetype i = 1; i < parts.size(); ++i) words.push_back(parts[i].toStdString());
            from_bash.push_back(words);
        }
        std::vector<std::vector<std::string>> from_us;
        try {
            const ScriptRun r = run_shell_script(script, "s.sh", {}, {});
            QVERIFY2(r.decisions.empty(), script.c_str());
            for (const auto& c : r.commands) {
                if (c.words.empty() || c.words[0].text != "torchrun") continue;
                std::vector<std::string> words;
                for (const auto& w : c.words) {
                    QVERIFY2(w.unresolved.empty(), (script + "\nunknown: " + w.unresolved).c_str());
                    words.push_back(w.text);
                }
                from_us.push_back(words);
            }
        } catch (const InputError& e) {
            QFAIL((script + "\nimport-args: " + e.what()).c_str());
        }
        if (from_us != from_bash) {
            std::string msg = script + "\nbash:\n";
            for (const auto& c : from_bash) {
                for (const auto& w : c) msg += " " + w;
                msg += "\n";
            }
            msg += "import-args:\n";
            for (const auto& c : from_us) {
                for (const auto& w : c) msg += " " + w;
                msg += "\n";
            }
            QFAIL(msg.c_str());
        }
        ++compared;
    }
    QCOMPARE(compared, count);
}

QTEST_GUILESS_MAIN(TestShellDifferential)
#include "tst_shell_differential.moc"
