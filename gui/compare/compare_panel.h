// Predicted beside measured: two timelines one above the other on one time axis (zoom or
// pan either, the other follows; each measured from its own step start), and below them
// the comparison table and the statistics of each trace.
#pragma once

#include <QWidget>

#include <memory>

#include "gui/compare/comparison_data.h"

class QLabel;
class QSpinBox;
class QToolButton;
class QTabWidget;

namespace meshwork::gui {

class AxisLink;
class ComparisonTable;
class MemoryTable;
class MemoryTimelineChart;
class StatsTable;
class TimelineView;

class ComparePanel : public QWidget {
    Q_OBJECT
public:
    explicit ComparePanel(QWidget* parent = nullptr);
    void set_data(std::shared_ptr<const ComparisonData> data);
    [[nodiscard]] const ComparisonData* data() const { return data_.get(); }

    [[nodiscard]] TimelineView* predicted_view() const { return predicted_view_; }
    [[nodiscard]] TimelineView* measured_view() const { return measured_view_; }
    [[nodiscard]] ComparisonTable* comparison_table() const { return table_; }
    [[nodiscard]] MemoryTable* memory_table() const { return memory_; }
    [[nodiscard]] MemoryTimelineChart* memory_timeline() const { return memory_timeline_; }
    // Raises the tab of that name below the timelines: "table", "memory", "memory-timeline",
    // "predicted-stats", "measured-stats"; false for another name.
    bool show_tab(const QString& name);
    [[nodiscard]] QToolButton* calibrate_button() const { return calibrate_; }
    [[nodiscard]] QSpinBox* warmup_box() const { return warmup_; }
    [[nodiscard]] QString summary_text() const;

  signals:
    // The user asked to swap the roles of the two traces (the comparison is recomputed).
    void swap_requested(const QString& predicted_path, const QString& measured_path, int warmup_steps);
    // The user asked to calibrate the cluster on the measured trace and re-predict the
    // layout that ran (ComparisonLoader::calibrate).
    void calibrate_requested(const QString& predicted_path, const QString& measured_path, int warmup_steps);
    // The user changed how many first steps are warm-up: the comparison is recomputed.
    void warmup_changed(const QString& predicted_path, const QString& measured_path, int warmup_steps);
    void close_requested();

private:
    QWidget* make_side(const QString& role, QLabel*& title, TimelineView*& view);
    void describe(QLabel* title, const QString& role, const ComparedTrace& side);

    std::shared_ptr<const ComparisonData> data_;
    TimelineView* predicted_view_ = nullptr;
    TimelineView* measured_view_ = nullptr;
    QLabel* predicted_title_ = nullptr;
    QLabel* measured_title_ = nullptr;
    QLabel* summary_ = nullptr;
    QToolButton* calibrate_ = nullptr;
    QSpinBox* warmup_ = nullptr;
    AxisLink* link_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    ComparisonTable* table_ = nullptr;
    MemoryTable* memory_ = nullptr;
    MemoryTimelineChart* memory_timeline_ = nullptr;
    StatsTable* predicted_stats_ = nullptr;
    StatsTable* measured_stats_ = nullptr;
};

}  // namespace meshwork::gui
