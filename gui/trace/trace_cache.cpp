#include "gui/trace/trace_cache.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QStandardPaths>

namespace meshwork::gui {

namespace {
QString safe_name(QString text) {
    text.replace(QRegularExpression("[^A-Za-z0-9._-]"), "_");
    return text.left(120);
}
}  // namespace

QString trace_cache_dir(const QString& sub) {
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::CacheLocation) + "/traces/" + sub;
    return QDir().mkpath(dir) ? dir : QString();
}

QString import_cache_path(const QString& input) {
    const QFileInfo info(input);
    const QString key_text = info.absoluteFilePath() + '\n' + QString::number(info.size()) + '\n' +
                             QString::number(info.lastModified().toMSecsSinceEpoch());
    const QString key = QString::fromLatin1(
        QCryptographicHash::hash(key_text.toUtf8(), QCryptographicHash::Sha1).toHex().left(10));
    const QString dir = trace_cache_dir("imports");
    return dir.isEmpty() ? QString() : dir + '/' + safe_name(info.fileName()) + '-' + key + ".sqlite";
}

QString import_cache_path(const QStringList& inputs) {
    if (inputs.size() == 1) return import_cache_path(inputs.front());
    QString key_text;
    for (const QString& input : inputs) {
        const QFileInfo info(input);
        key_text += info.absoluteFilePath() + '\n' + QString::number(info.size()) + '\n' +
                    QString::number(info.lastModified().toMSecsSinceEpoch()) + '\n';
    }
    const QString key = QString::fromLatin1(
        QCryptographicHash::hash(key_text.toUtf8(), QCryptographicHash::Sha1).toHex().left(10));
    const QString dir = trace_cache_dir("imports");
    return dir.isEmpty() ? QString()
                         : dir + '/' + safe_name(QFileInfo(inputs.front()).completeBaseName()) +
                               QString("-%1-ranks-").arg(inputs.size()) + key + ".sqlite";
}

QString remote_cache_path(const QString& host, const QString& remote_path) {
    const QString dir = trace_cache_dir("remote/" + safe_name(host));
    if (dir.isEmpty()) return {};
    // The whole path, not only its file name: rank0/trace.sqlite and rank1/trace.sqlite
    // on one host are different traces.
    QString name = remote_path;
    while (name.startsWith('/')) name.remove(0, 1);
    return dir + '/' + safe_name(name);
}

}  // namespace meshwork::gui
