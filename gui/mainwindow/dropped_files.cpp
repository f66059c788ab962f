// Layouts and traces among files handed to the window (dropped_files.h).
#include "gui/mainwindow/dropped_files.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

namespace meshwork::gui {

DroppedFile classify_dropped_file(const QString& path) {
    const QFileInfo info(path);
    if (!info.isFile() || info.size() > kLayoutMaxBytes) return DroppedFile::Trace;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return DroppedFile::Trace;
    const QByteArray bytes = file.readAll();
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &error);
    // Not JSON at all (gzip, SQLite, a broken file): the trace opener reads or refuses it.
    if (error.error != QJsonParseError::NoError) {
        // A layout with a syntax error is still a layout (its reader names the line); a
        // file that does not start like JSON is not.
        const QByteArray head = bytes.left(64).trimmed();
        return head.startsWith('{') && info.suffix().compare("json", Qt::CaseInsensitive) == 0 &&
                       !bytes.contains("\"traceEvents\"")
                   ? DroppedFile::Layout
                   : DroppedFile::Trace;
    }
    if (!doc.isObject() || doc.object().contains("traceEvents")) return DroppedFile::Trace;
    return DroppedFile::Layout;
}

DroppedFiles sort_dropped_files(const QStringList& paths) {
    DroppedFiles out;
    for (const QString& path : paths) {
        (classify_dropped_file(path) == DroppedFile::Layout ? out.layouts : out.traces) << path;
    }
    return out;
}

}  // namespace meshwork::gui
