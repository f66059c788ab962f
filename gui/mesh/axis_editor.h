// Spin boxes for the mesh axes, a chooser for the rank order, sequence parallelism and the
// tiled TP communication overlap (parallel.tp_comm_overlap) and the data-parallel overlaps.
// Each change is an undoable edit (axis edits keep the world size: dp follows); a refused
// change snaps back and says why. The training settings are the Training dock's
// (gui/training/training_editor.h).
#pragma once

#include <QWidget>

#include <map>
#include <string>

class QCheckBox;
class QComboBox;
class QLabel;
class QSpinBox;

namespace meshwork::gui {

class LayoutDocument;
struct ProposedEdit;

class AxisEditor : public QWidget {
    Q_OBJECT
public:
    explicit AxisEditor(LayoutDocument* document, QWidget* parent = nullptr);
    [[nodiscard]] QSpinBox* spin_box(const std::string& axis) const;
    [[nodiscard]] QString last_refusal() const;
    [[nodiscard]] QCheckBox* sequence_parallel_box() const { return sp_; }
    // Items none, pipe, ring; the item data is the layout's spelling.
    [[nodiscard]] QComboBox* tp_overlap_box() const { return tp_overlap_; }
    [[nodiscard]] QCheckBox* dp_overlap_box() const { return dp_overlap_; }
    // MoE token dispatch: the dispatcher and, for flex, its library in one chooser (item data
    // "allgather", "alltoall", "flex:deepep", "flex:hybridep"); the all-to-all overlap.
    [[nodiscard]] QComboBox* moe_dispatch_box() const { return moe_dispatch_; }
    [[nodiscard]] QCheckBox* moe_a2a_overlap_box() const { return moe_a2a_overlap_; }

private:
    void sync_from_document();
    void axis_changed(const std::string& axis, int value);
    void order_changed(const QString& order);
    void sequence_parallel_changed(bool on);
    void tp_overlap_changed(int index);
    void dp_overlap_changed(bool on);
    void moe_dispatch_changed(int index);
    void moe_a2a_overlap_changed(bool on);
    // Applies `edit`, showing `what` refused and snapping back when validation refuses it.
    void apply_edit(const ProposedEdit& edit, const QString& what);
    void show_refusal(const QString& text);

    LayoutDocument* document_;
    std::map<std::string, QSpinBox*> spins_;
    QLabel* dp_ = nullptr;
    QLabel* world_ = nullptr;
    QComboBox* order_ = nullptr;
    QCheckBox* sp_ = nullptr;
    QComboBox* tp_overlap_ = nullptr;
    QCheckBox* dp_overlap_ = nullptr;
    QComboBox* moe_dispatch_ = nullptr;
    QCheckBox* moe_a2a_overlap_ = nullptr;
    QLabel* message_ = nullptr;
    bool syncing_ = false;
};

}  // namespace meshwork::gui
