// The measured memory over time beside the predicted peak, per rank: each rank's allocated
// bytes (solid) and reserved bytes (thin) from the measured trace's memory events
// (profiler/analysis/memory_series.h), and a dashed line at that rank's predicted peak
// (profiler/analysis/memory_compare.h) in the same colour, on one time axis from the first
// memory event; so a rank that crosses its prediction shows where in the step it does.
#pragma once

#include <QWidget>

#include <vector>

#include "profiler/analysis/memory_compare.h"
#include "profiler/analysis/memory_series.h"

namespace meshwork::gui {

class MemoryTimelineChart : public QWidget {
    Q_OBJECT
public:
    // Ranks drawn at most (the first ones); the chart says how many it left out.
    static constexpr int kMaxRanksDrawn = 16;

    explicit MemoryTimelineChart(QWidget* parent = nullptr);
    void set_data(std::vector<profiler::MemorySeries> series, const profiler::MemoryComparison& comparison);
    [[nodiscard]] int ranks_drawn() const;
    [[nodiscard]] QSize sizeHint() const override { return {640, 240}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::vector<profiler::MemorySeries> series_;  // one per rank drawn (its device compared)
    std::vector<std::int64_t> predicted_peak_;    // per series; 0 when the rank has none
    int ranks_total_ = 0;
    QString note_;
};

}  // namespace meshwork::gui
