#include "gui/trace/remote_fetch.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>

#include "profiler/remote/ssh_command.h"

namespace meshwork::gui {

bool parse_remote_spec(const QString& text, RemoteSpec& out, QString& error) {
    const QString t = text.trimmed();
    // An IPv6 host is bracketed ("[::1]:path"): the separating colon follows the bracket.
    const int colon = t.startsWith('[') ? t.indexOf("]:") + 1 : t.indexOf(':');
    if (colon <= 0) {
        error = QObject::tr("“%1” is not host:path (for example node01:/scratch/run/rank0.sqlite)").arg(t);
        return false;
    }
    out.host = t.left(colon);
    out.path = t.mid(colon + 1);
    if (out.path.isEmpty()) {
        error = QObject::tr("“%1” names no file after the colon").arg(t);
        return false;
    }
    // The checks ssh_serve_command makes: no option, no shell syntax, no control character.
    if (const auto why = profiler::remote::ssh_host_problem(out.host.toStdString()); !why.empty()) {
        error = QObject::tr("“%1” is not a host name: %2").arg(out.host, QString::fromStdString(why));
        return false;
    }
    if (const auto why = profiler::remote::remote_word_problem(out.path.toStdString(), "the remote path");
        !why.empty()) {
        error = QString::fromStdString(why);
        return false;
    }
    return true;
}

RemoteFetch::RemoteFetch(QObject* parent) : QObject(parent) {
    poll_.setInterval(200);
    connect(&poll_, &QTimer::timeout, this, [this] { emit progress(QFileInfo(partial_path_).size()); });
}

RemoteFetch::~RemoteFetch() {
    if (process_) {
        process_->disconnect(this);
        process_->kill();
        process_->waitForFinished(2000);
        remove_partial();
    }
}

bool RemoteFetch::start(const RemoteSpec& remote, const QString& local_path) {
    if (process_) return false;
    remote_text_ = remote.host + ':' + remote.path;
    local_path_ = local_path;
    partial_path_ = local_path + ".part";
    cancelling_ = false;
    const QString scp = QStandardPaths::findExecutable("scp");
    if (scp.isEmpty()) {
        emit failed(tr("scp was not found on PATH; install an OpenSSH client (Debian: openssh-client) to "
                       "open remote traces."));
        return true;
    }
    QDir().mkpath(QFileInfo(local_path).absolutePath());
    QFile::remove(partial_path_);
    process_ = new QProcess(this);
    process_->setProgram(scp);
    // -B: batch mode, never prompt; -p: keep the modification time; "--" ends the options
    // so that neither argument can be read as one.
    process_->setArguments({"-B", "-p", "-o", "ConnectTimeout=20", "--", remote_text_, partial_path_});
    process_->setStandardInputFile(QProcess::nullDevice());
    connect(process_, &QProcess::finished, this, &RemoteFetch::done);
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e != QProcess::FailedToStart || !process_) return;
        const QString why = process_->errorString();
        process_->deleteLater();
        process_ = nullptr;
        poll_.stop();
        emit failed(tr("Cannot start scp: %1").arg(why));
    });
    poll_.start();
    process_->start();
    return true;
}

void RemoteFetch::cancel() {
    if (!process_) return;
    cancelling_ = true;
    process_->kill();  // done() follows with a crash exit
}

void RemoteFetch::remove_partial() { QFile::remove(partial_path_); }

void RemoteFetch::done(int exit_code, QProcess::ExitStatus status) {
    poll_.stop();
    const QString err = QString::fromLocal8Bit(process_->readAllStandardError()).trimmed();
    process_->deleteLater();
    process_ = nullptr;
    if (cancelling_) {
        remove_partial();
        emit cancelled();
        return;
    }
    if (status != QProcess::NormalExit || exit_code != 0) {
        remove_partial();
        emit failed(tr("scp %1 failed (%2):\n%3")
                        .arg(remote_text_,
                             status == QProcess::NormalExit ? tr("exit code %1").arg(exit_code) : tr("crashed"),
                             err.isEmpty() ? tr("(no message from scp)") : err));
        return;
    }
    if (!QFileInfo::exists(partial_path_)) {
        emit failed(tr("scp %1 reported success but wrote no file").arg(remote_text_));
        return;
    }
    QFile::remove(local_path_);
    if (!QFile::rename(partial_path_, local_path_)) {
        remove_partial();
        emit failed(tr("Cannot move the fetched trace to %1").arg(local_path_));
        return;
    }
    emit finished(local_path_);
}

}  // namespace meshwork::gui
