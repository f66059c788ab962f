// The estimate dock's memory chart: one stacked column per pipeline stage (weights,
// gradients, optimizer state, activations, buffers, reserved) against a dashed line at the
// GPU's capacity; a column that does not fit is outlined in the error colour. Painted by
// hand rather than with Qt Charts: a capacity line across a stacked category chart and
// per-column overflow marks are not something QStackedBarSeries draws, and the chart must
// repaint within the estimate's latency budget.
#pragma once

#include <QWidget>

#include <vector>

#include "gui/estimate/stage_memory.h"

namespace meshwork::gui {

class MemoryChart : public QWidget {
    Q_OBJECT
public:
    explicit MemoryChart(QWidget* parent = nullptr);
    void set_stages(std::vector<StageMemoryBreakdown> stages);
    [[nodiscard]] const std::vector<StageMemoryBreakdown>& stages() const { return stages_; }
    // The stage whose column is under `pos`, or -1 (tooltips, tests).
    [[nodiscard]] int stage_at(QPoint pos) const;
    [[nodiscard]] QSize sizeHint() const override { return {320, 190}; }
    [[nodiscard]] QSize minimumSizeHint() const override { return {200, 130}; }

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    [[nodiscard]] QRectF plot_rect() const;
    [[nodiscard]] QRectF column_rect(int index) const;
    [[nodiscard]] double axis_max_bytes() const;

    std::vector<StageMemoryBreakdown> stages_;
};

QColor memory_kind_colour(int kind);

}  // namespace meshwork::gui
