// The Ranks tab: the trace's name and the metric selector above the rank overview, and the
// progress of the rank × step computation while it runs.
#pragma once

#include <QWidget>

#include <memory>

#include "gui/ranks/rank_overview.h"

class QComboBox;
class QLabel;
class QProgressBar;

namespace meshwork::gui {

class RankOverviewPanel : public QWidget {
    Q_OBJECT
public:
    explicit RankOverviewPanel(QWidget* parent = nullptr);
    [[nodiscard]] RankOverview* overview() const { return overview_; }
    void set_data(std::shared_ptr<const RankOverviewData> overview);
    void set_metric(RankMetric metric);
    // While the matrix is computed: `what` and a bar (indeterminate while total is 0).
    void show_progress(const QString& what, qint64 done, qint64 total);
    void show_error(const QString& message);

signals:
    void ranks_requested(const QList<int>& ranks, int step);

private:
    void update_summary();

    RankOverview* overview_ = nullptr;
    QComboBox* metric_ = nullptr;
    QLabel* title_ = nullptr;
    QLabel* summary_ = nullptr;
    QProgressBar* progress_ = nullptr;
};

}  // namespace meshwork::gui
