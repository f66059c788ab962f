// Spin boxes for the mesh axes and a chooser for the rank order. Each change is an undoable
// edit that keeps the world size (dp follows); a refused change snaps back and says why.
#pragma once

#include <QWidget>

#include <map>
#include <string>

class QComboBox;
class QLabel;
class QSpinBox;

namespace meshwork::gui {

class LayoutDocument;

class AxisEditor : public QWidget {
    Q_OBJECT
public:
    explicit AxisEditor(LayoutDocument* document, QWidget* parent = nullptr);
    [[nodiscard]] QSpinBox* spin_box(const std::string& axis) const;
    [[nodiscard]] QString last_refusal() const;

private:
    void sync_from_document();
    void axis_changed(const std::string& axis, int value);
    void order_changed(const QString& order);
    void show_refusal(const QString& text);

    LayoutDocument* document_;
    std::map<std::string, QSpinBox*> spins_;
    QLabel* dp_ = nullptr;
    QLabel* world_ = nullptr;
    QComboBox* order_ = nullptr;
    QLabel* message_ = nullptr;
    bool syncing_ = false;
};

}  // namespace meshwork::gui
