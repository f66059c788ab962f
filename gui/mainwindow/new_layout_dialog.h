// File → New: a model preset, a cluster preset and a world size; the layout is built by
// core (build_layout, the same path as the CLI flags) and then edited on the canvas.
#pragma once

#include <QDialog>

#include "core/layout/layout.h"

class QComboBox;
class QLabel;
class QSpinBox;

namespace meshwork::gui {

class NewLayoutDialog : public QDialog {
    Q_OBJECT
public:
    explicit NewLayoutDialog(QWidget* parent = nullptr);
    [[nodiscard]] const Layout& layout() const { return layout_; }
    void accept() override;

private:
    QComboBox* model_ = nullptr;
    QComboBox* cluster_ = nullptr;
    QSpinBox* gpus_ = nullptr;
    QSpinBox* tp_ = nullptr;
    QSpinBox* pp_ = nullptr;
    QSpinBox* gbs_ = nullptr;
    QSpinBox* seq_ = nullptr;
    QLabel* error_ = nullptr;
    Layout layout_;
};

}  // namespace meshwork::gui
