// The rank overview: a heatmap of ranks × steps, one row per rank grouped by mesh coordinates
// (pipeline stage, then data-parallel replica; labels on the left), one column per step,
// coloured by step time or exposed communication (HeatScale; legend on the right).
// Thousands of ranks fit the height: below two pixels a rank, a pixel row shows the slowest
// of the ranks it covers (and a click opens that one).
// Mouse: hover for a cell's figures, click a cell for that rank's lanes at that step, click
// a group label for the group's lanes. Keyboard: arrows, Page Up/Down, Home/End (first/last
// step), Ctrl+Home/End (first/last rank) move the current cell; Enter opens its rank at its
// step, Shift+Enter its replica (innermost group).
#pragma once

#include <QAbstractScrollArea>
#include <QImage>
#include <QList>

#include <memory>
#include <optional>

#include "gui/ranks/heat_scale.h"
#include "gui/ranks/rank_overview_data.h"

namespace meshwork::gui {

class RankOverview : public QAbstractScrollArea {
    Q_OBJECT
public:
    explicit RankOverview(QWidget* parent = nullptr);
    void set_data(std::shared_ptr<const RankOverviewData> overview);
    [[nodiscard]] const RankOverviewData* data() const { return data_.get(); }
    void set_metric(RankMetric metric);
    [[nodiscard]] RankMetric metric() const { return metric_; }
    [[nodiscard]] const HeatScale& scale() const { return scale_; }

    struct Cell {
        int row = 0;         // of data()->grouping.ranks
        int step_index = 0;  // of data()->matrix.steps
        bool operator==(const Cell&) const = default;
    };
    [[nodiscard]] std::optional<Cell> current() const { return current_; }
    void set_current(Cell cell);  // clamped; scrolls it into view
    // Geometry in viewport coordinates (tests, tooltips).
    [[nodiscard]] QRect cell_rect(Cell cell) const;
    [[nodiscard]] std::optional<Cell> cell_at(QPoint pos) const;
    [[nodiscard]] QRect group_rect(int group) const;
    [[nodiscard]] int group_at(QPoint pos) const;  // -1 when none
    // Paints one frame into `painter` at `size`, as paintEvent does (benchmarks).
    void render_frame(QPainter& painter, QSize size);

signals:
    // The ranks whose lanes to show; `step` the step to show them at, or -1 for all.
    void ranks_requested(const QList<int>& ranks, int step);
    void current_changed();

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool viewportEvent(QEvent* event) override;  // tooltips
    void scrollContentsBy(int dx, int dy) override;
    void changeEvent(QEvent* event) override;  // a theme change recolours the absent cells

private:
    [[nodiscard]] int rows() const;
    [[nodiscard]] int steps() const;
    [[nodiscard]] int left_width() const;
    // Cell sizes for the current viewport: cells fill the width up to a square-ish maximum;
    // rows shrink to 2 px before the view scrolls.
    [[nodiscard]] double cell_width() const;
    [[nodiscard]] int row_height() const;
    // Rows fold when each rank cannot have two pixels: then a pixel row shows the slowest
    // of the ranks it covers, and the overview fits the height without scrolling.
    [[nodiscard]] bool folded() const;
    [[nodiscard]] double row_px() const;
    [[nodiscard]] int rows_room() const;
    [[nodiscard]] int y_of_row(int row) const;
    [[nodiscard]] int row_at_y(int y) const;
    [[nodiscard]] std::pair<int, int> rows_of_pixel(int y) const;  // [first, last)
    [[nodiscard]] int slowest_row(int first, int last, int step_index) const;
    void update_layout();
    void rebuild_image();
    void open_cell(Cell cell, bool whole_group);
    [[nodiscard]] QString cell_tooltip(Cell cell) const;
    [[nodiscard]] QString group_tooltip(int group) const;
    void paint_cells(QPainter& p, QSize size);
    void paint_groups(QPainter& p, QSize size);
    void paint_steps(QPainter& p, QSize size);
    void paint_legend(QPainter& p, QSize size);

    std::shared_ptr<const RankOverviewData> data_;
    RankMetric metric_ = RankMetric::StepTime;
    HeatScale scale_;
    QImage cells_;  // steps wide; a pixel per rank, or per screen row when folded; scaled when painted
    bool image_folded_ = false;
    int image_rows_room_ = 0;
    std::optional<Cell> current_;
    int offset_px_ = 0;  // vertical scroll
    int header_h_ = 24;
    int group_w_ = 56;
    int rank_w_ = 72;
    int legend_w_ = 112;
};

}  // namespace meshwork::gui
