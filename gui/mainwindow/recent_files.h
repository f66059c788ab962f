// The "Open Recent" list, newest first, kept in QSettings under "files/recent".
#pragma once

#include <QObject>
#include <QStringList>

class QMenu;

namespace meshwork::gui {

class RecentFiles : public QObject {
    Q_OBJECT
public:
    RecentFiles(QMenu* menu, QObject* parent = nullptr);
    void add(const QString& path);
    [[nodiscard]] QStringList paths() const;

signals:
    void open_requested(const QString& path);

private:
    void rebuild();
    QMenu* menu_;
    static constexpr int kMax = 10;
};

}  // namespace meshwork::gui
