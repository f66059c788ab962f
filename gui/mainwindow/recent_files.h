// An "Open Recent" list, newest first, kept in QSettings under a key of its own (layouts
// under "files/recent", traces under "files/recent_traces").
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

class QMenu;

namespace meshwork::gui {

class RecentFiles : public QObject {
    Q_OBJECT
public:
    RecentFiles(QMenu* menu, QString settings_key, QString empty_text, QObject* parent = nullptr);
    void add(const QString& path);
    [[nodiscard]] QStringList paths() const;

signals:
    void open_requested(const QString& path);

private:
    void rebuild();
    QMenu* menu_;
    QString key_;
    QString empty_text_;
    static constexpr int kMax = 10;
};

}  // namespace meshwork::gui
