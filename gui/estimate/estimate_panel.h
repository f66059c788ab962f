// The estimate dock: whether the layout is valid (and why not), its figures with the
// change since the previous layout, and the cost model's estimate once that exists.
// Recomputed on every change on a worker thread (AssessmentRunner).
#pragma once

#include <QWidget>

#include <optional>

#include "gui/estimate/layout_assessment.h"

class QLabel;
class QTreeWidget;

namespace meshwork::gui {

class AssessmentRunner;
class LayoutDocument;
class MemoryChart;

class EstimatePanel : public QWidget {
    Q_OBJECT
public:
    explicit EstimatePanel(LayoutDocument* document, QWidget* parent = nullptr);
    [[nodiscard]] AssessmentRunner* runner() const { return runner_; }
    [[nodiscard]] const std::optional<LayoutAssessment>& current() const { return current_; }
    [[nodiscard]] MemoryChart* memory_chart() const { return memory_chart_; }
    // The header: valid / valid but does not fit / invalid (verdict_text).
    [[nodiscard]] QLabel* state_label() const { return state_; }
    [[nodiscard]] QTreeWidget* issues_table() const { return issues_; }

signals:
    void assessed(double latency_ms);  // from the edit to the shown result

private:
    void show_assessment(const LayoutAssessment& a);

    LayoutDocument* document_;
    AssessmentRunner* runner_;
    QLabel* state_ = nullptr;
    QTreeWidget* figures_ = nullptr;
    QTreeWidget* issues_ = nullptr;
    QLabel* note_ = nullptr;
    MemoryChart* memory_chart_ = nullptr;
    QLabel* timing_ = nullptr;
    std::optional<LayoutAssessment> current_;
    std::optional<LayoutAssessment> previous_;
    qint64 requested_at_ns_ = 0;
    bool reset_pending_ = false;
};

}  // namespace meshwork::gui
