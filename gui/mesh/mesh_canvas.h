// Draws the device mesh of a layout: pipeline stages as columns, the TP group of each
// stage inside a column, DP replicas stacked; each tile shows its rank and groups.
#pragma once

#include <QWidget>

#include "layout/layout.h"

namespace meshwork::gui {

class MeshCanvas : public QWidget {
    Q_OBJECT
public:
    explicit MeshCanvas(QWidget* parent = nullptr);
    void set_layout(const Layout& layout);
    [[nodiscard]] QSize sizeHint() const override { return {900, 600}; }

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;  // tooltips

private:
    // Screen rectangle of each drawn rank, filled by paintEvent for hit testing.
    struct Tile {
        QRectF rect;
        int rank;
    };
    Layout layout_;
    bool has_layout_ = false;
    std::vector<Tile> tiles_;
    int hidden_replicas_ = 0;
};

}  // namespace meshwork::gui
