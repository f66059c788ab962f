// The workbench window: model palette, mesh canvas and the layout summary as docks.
#pragma once

#include <QMainWindow>

#include "layout/layout.h"

class QLabel;
class QTextBrowser;

namespace meshwork::gui {

class MeshCanvas;
class ModelTree;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    // Loads a layout file; errors are shown to the user and returned as false.
    bool open_layout(const QString& path);
    void set_layout(const Layout& layout, const QString& path);

private:
    void build_menus();
    void refresh_summary();

    Layout layout_;
    QString layout_path_;
    MeshCanvas* canvas_ = nullptr;
    ModelTree* model_tree_ = nullptr;
    QTextBrowser* summary_ = nullptr;
    QLabel* status_ = nullptr;
};

}  // namespace meshwork::gui
