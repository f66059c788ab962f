// The recompute rows of the Training dock's Memory group: the mode (training.recompute) and,
// for full recomputation, the layers of each model chunk recomputed
// (training.recompute_num_layers). A class of its own so that further recompute settings
// (a list of Megatron-LM modules, --recompute-modules) add their row here and nowhere else:
// an item in the modes table if it is a mode, a control built in the constructor, its state
// in sync() (enabled by its rule in layout_rules.h) and its edit through `apply`.
#pragma once

#include <QObject>

#include <functional>

#include "gui/document/layout_edits.h"

class QComboBox;
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

private:
    std::function<const Layout&()> layout_;
    Apply apply_;
    QComboBox* mode_ = nullptr;
    QSpinBox* layers_ = nullptr;
    bool syncing_ = false;
};

}  // namespace meshwork::gui
