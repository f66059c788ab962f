// The recompute rows of the Training dock's Memory group: the mode (training.recompute) and,
// for full recomputation, the layers of each model chunk recomputed
// (training.recompute_num_layers), and for selective recomputation the modules rerun
// (training.recompute_modules, Megatron-LM's --recompute-modules). A class of its own so that further recompute settings
// (a list of Megatron-LM modules, --recompute-modules) add their row here and nowhere else:
// an item in the modes table if it is a mode, a control built in the constructor, its state
// in sync() (enabled by its rule in layout_rules.h) and its edit through `apply`.
#pragma once

#include <QObject>

#include <functional>

#include "gui/document/layout_edits.h"

class QComboBox;
class QMenu;
class QToolButton;
class QFormLayout;
class QSpinBox;
class QWidget;

namespace meshwork::gui {

class RecomputeControls : public QObject {
    Q_OBJECT
public:
    using Apply = std::function<void(const ProposedEdit&)>;
    // Adds its rows to `form`; every change is proposed through `apply`, which reads the
    // current layout from the document.
    RecomputeControls(QFormLayout* form, QWidget* parent, std::function<const Layout&()> layout, Apply apply);
    void sync(const Layout& layout);

    // Items none, selective, full, selective-op; the item data is the layout's spelling.
    [[nodiscard]] QComboBox* mode_box() const { return mode_; }
    // Full recomputation: layers per chunk, 0 ("all") for every layer.
    [[nodiscard]] QSpinBox* layers_box() const { return layers_; }
    // Selective recomputation: the modules rerun (training.recompute_modules), one checkable
    // action per module in the button's menu; the action's data is Megatron's spelling.
    [[nodiscard]] QToolButton* modules_button() const { return modules_; }
    [[nodiscard]] QMenu* modules_menu() const { return modules_menu_; }

private:
    std::function<const Layout&()> layout_;
    Apply apply_;
    QComboBox* mode_ = nullptr;
    QSpinBox* layers_ = nullptr;
    QToolButton* modules_ = nullptr;
    QMenu* modules_menu_ = nullptr;
    bool syncing_ = false;
};

}  // namespace meshwork::gui
