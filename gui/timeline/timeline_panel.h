// The timeline tab: a find bar, the timeline view, and a details pane that shows the
// selected event or the statistics of a selected time range. While two traces are being
// compared it shows the comparison view (predicted beside measured) instead.
#pragma once

#include <QWidget>

#include <memory>

#include "gui/timeline/timeline_source.h"

class QLabel;
class QStackedWidget;
class QLineEdit;
class QTextBrowser;

namespace meshwork::gui {

class ComparePanel;
struct ComparisonData;
class TimelineView;

class TimelinePanel : public QWidget {
    Q_OBJECT
public:
    explicit TimelinePanel(QWidget* parent = nullptr);
    // Shows one trace (and leaves a comparison).
    void set_source(std::shared_ptr<const TimelineSource> source, const QString& title);
    [[nodiscard]] TimelineView* view() const { return view_; }
    void show_comparison(std::shared_ptr<const ComparisonData> comparison);
    void close_comparison();
    [[nodiscard]] bool comparing() const;
    [[nodiscard]] ComparePanel* comparison() const { return compare_; }
    // Selects the next event whose name contains `text`; false when there is none.
    bool find_next(const QString& text);

private:
    void show_event(const TimelineEventDetails& d);
    void show_range(int lane_first, int lane_last, double t0, double t1);
    void update_info();

    QStackedWidget* pages_ = nullptr;
    ComparePanel* compare_ = nullptr;
    TimelineView* view_ = nullptr;
    QLineEdit* find_ = nullptr;
    QLabel* info_ = nullptr;
    QTextBrowser* details_ = nullptr;
    QString title_;
    double find_from_ns_ = -1;
};

}  // namespace meshwork::gui
