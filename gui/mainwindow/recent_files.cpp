#include "gui/mainwindow/recent_files.h"

#include <QDir>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>

#include <utility>

namespace meshwork::gui {

RecentFiles::RecentFiles(QMenu* menu, QString settings_key, QString empty_text, QObject* parent)
    : QObject(parent), menu_(menu), key_(std::move(settings_key)), empty_text_(std::move(empty_text)) {
    rebuild();
}

QStringList RecentFiles::paths() const { return QSettings().value(key_).toStringList(); }

void RecentFiles::add(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QStringList list = paths();
    list.removeAll(absolute);
    list.prepend(absolute);
    while (list.size() > kMax) list.removeLast();
    QSettings().setValue(key_, list);
    rebuild();
}

void RecentFiles::rebuild() {
    menu_->clear();
    const QStringList list = paths();
    int n = 0;
    for (const QString& path : list) {
        ++n;
        const QString label = QString("&%1  %2").arg(n % 10).arg(QDir::toNativeSeparators(path));
        menu_->addAction(label, this, [this, path] { emit open_requested(path); });
    }
    if (list.isEmpty()) {
        menu_->addAction(empty_text_)->setEnabled(false);
        return;
    }
    menu_->addSeparator();
    menu_->addAction(tr("Clear List"), this, [this] {
        QSettings().remove(key_);
        rebuild();
    });
}

}  // namespace meshwork::gui
