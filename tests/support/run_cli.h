// Runs meshwork-cli as a script would, for the test suites that check its contract (exit
// codes, stdout, stderr, standard input): the one copy of what five suites each wrote out.
// MESHWORK_CLI_PATH is defined for every suite by meshwork_add_qtest (tests/CMakeLists.txt).
#pragma once

#include <QByteArray>
#include <QProcess>
#include <QStringList>

#ifndef MESHWORK_CLI_PATH
#error "MESHWORK_CLI_PATH must name the meshwork-cli executable (meshwork_add_qtest defines it)"
#endif

namespace meshwork::test {

struct CliResult {
    // The exit code; kCliTimedOut when it ran past the timeout (it is killed), kCliCrashed
    // when a signal ended it. Neither is an exit code meshwork-cli documents.
    int exit_code = -1;
    QByteArray out, err;
};

inline constexpr int kCliTimedOut = -1;
inline constexpr int kCliCrashed = -2;

// `input`, when given, is written to its standard input, which is then closed.
inline CliResult run_cli(const QStringList& args, const QByteArray& input = {}, int timeout_ms = 120000) {
    QProcess p;
    p.start(MESHWORK_CLI_PATH, args);
    if (!input.isEmpty()) p.write(input);
    p.closeWriteChannel();
    if (!p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished();
        return {kCliTimedOut, p.readAllStandardOutput(), p.readAllStandardError()};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : kCliCrashed, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

}  // namespace meshwork::test
