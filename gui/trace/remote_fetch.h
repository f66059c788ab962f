// Fetches `host:path` (cluster runs) into a local file with the system's scp, in batch mode
// (keys or an agent; never a password prompt, which would hang without a terminal). scp runs
// as a QProcess with an argument list, no shell. Progress is the size of the partial file;
// the result appears at the destination only once scp succeeded.
#pragma once

#include <QObject>
#include <QProcess>
#include <QTimer>

namespace meshwork::gui {

struct RemoteSpec {
    QString host;  // "node01", "me@node01", "[fe80::1]"
    QString path;  // as the remote side understands it
};

// Splits "host:path"; false with `error` set when it is not one (no colon, an empty host
// or path, a host that starts with '-' and would read as an option).
bool parse_remote_spec(const QString& text, RemoteSpec& out, QString& error);

class RemoteFetch : public QObject {
    Q_OBJECT
public:
    explicit RemoteFetch(QObject* parent = nullptr);
    ~RemoteFetch() override;  // kills a running scp

    // False (nothing started) while a fetch runs. Failures, including a missing scp,
    // arrive through failed().
    bool start(const RemoteSpec& remote, const QString& local_path);
    void cancel();
    [[nodiscard]] bool running() const { return process_ != nullptr; }

signals:
    void progress(qint64 bytes_received);
    void finished(const QString& local_path);
    void failed(const QString& message);
    void cancelled();

private:
    void done(int exit_code, QProcess::ExitStatus status);
    void remove_partial();

    QProcess* process_ = nullptr;
    QTimer poll_;
    QString remote_text_;
    QString local_path_;
    QString partial_path_;
    bool cancelling_ = false;
};

}  // namespace meshwork::gui
