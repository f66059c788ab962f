// The device mesh of the open layout, drawn as tiles grouped by the mesh axes (see
// mesh_geometry.h). Blocks dropped on a stage column move its boundary; experts dropped on
// a tile go to that tile's EP rank. A refused drop shows its reason where it was dropped.
#pragma once

#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

class QMenu;

#include <optional>

#include "gui/document/layout_edits.h"
#include "gui/mesh/mesh_geometry.h"

namespace meshwork::gui {

class LayoutDocument;

// Memory use of one pipeline stage (its busiest rank), from the cost model when present.
struct StageMemoryUse {
    double used_bytes = 0;
    double capacity_bytes = 0;
};

class MeshCanvas : public QWidget {
    Q_OBJECT
public:
    explicit MeshCanvas(LayoutDocument* document, QWidget* parent = nullptr);
    [[nodiscard]] QSize sizeHint() const override { return {960, 600}; }

    // One entry per stage, or empty when no memory estimate exists (no bars are drawn).
    void set_stage_memory(std::vector<StageMemoryUse> memory);

    // For tests and tools: where a drop on `stage` or on the tile of `rank` lands.
    [[nodiscard]] QPoint stage_drop_point(int stage) const;
    [[nodiscard]] QPoint tile_center(int rank) const;
    [[nodiscard]] const MeshGeometry& geometry() const { return geometry_; }
    // The stage the keyboard works on (←/→ move it; Shift+←/→ move a block across its
    // boundaries, as a drag would; the context menu offers the same moves).
    [[nodiscard]] int current_stage() const;
    void set_current_stage(int stage);
    // The edit that moves the block on a boundary of `stage` to the neighbour in `direction`
    // (-1: its first block to the stage before; +1: its last block to the stage after).
    [[nodiscard]] ProposedEdit move_boundary_block(int stage, int direction) const;
    // The EP rank the keyboard works on in an MoE layout (↑/↓ move it, its tiles outlined;
    // Shift+↑ moves its first expert to the EP rank before, Shift+↓ its last to the one after,
    // as a drop of that expert on a tile would).
    [[nodiscard]] int current_ep_rank() const;
    void set_current_ep_rank(int ep_rank);
    [[nodiscard]] ProposedEdit move_edge_expert(int ep_rank, int direction) const;
    // The context menu's entries (right click, Shift+F10): the keyboard's moves of the current
    // stage's blocks and EP rank's experts, each closed with its reason when refused.
    void fill_context_menu(QMenu& menu);
    // The reason of the latest refused drop (empty after an accepted one).
    [[nodiscard]] QString last_refusal() const { return refusal_text_; }

signals:
    void edit_refused(const QString& reason);
    void edit_done(const QString& description);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    bool event(QEvent* event) override;  // tooltips
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dragLeaveEvent(QDragLeaveEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;

private:
    void relayout();
    void paint_stage(QPainter& p, const StageColumn& column);
    void paint_tile(QPainter& p, const RankTile& tile);
    void paint_legend(QPainter& p);
    void paint_refusal(QPainter& p);
    void show_refusal(QPoint pos, const QString& reason);
    QString tile_tooltip(const RankTile& tile) const;
    void apply_keyboard_edit(const ProposedEdit& edit);

    LayoutDocument* document_;
    MeshGeometry geometry_;
    std::vector<double> stage_flops_share_;  // fraction of forward FLOPs per stage
    std::vector<StageMemoryUse> stage_memory_;
    std::vector<std::vector<int>> ep_experts_;
    // Drag feedback: the stage column or EP rank under the cursor.
    int drop_stage_ = -1;
    int drop_ep_rank_ = -1;
    QPoint refusal_pos_;
    QString refusal_text_;
    QTimer refusal_timer_;
    int current_stage_ = 0;
    int current_ep_rank_ = 0;
};

}  // namespace meshwork::gui
