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
class QTreeWidget;

namespace meshwork::gui {

class ComparePanel;
struct ComparisonData;
class SelectionStatsTable;
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
    // The statistics per name of the range selected (hidden without one).
    [[nodiscard]] SelectionStatsTable* selection_stats() const { return stats_; }
    // Selects the next event whose name contains `text`; false when there is none.
    bool find_next(const QString& text);
    // Lists every event whose name contains `text` below the view (the first
    // kMaxMatchesListed, headed by the count of all); choosing one selects it and moves the
    // view to it. Returns the count. Enter in the find bar lists, then goes to the next.
    int list_matches(const QString& text);
    [[nodiscard]] QTreeWidget* matches_list() const { return matches_; }
    static constexpr std::size_t kMaxMatchesListed = 1000;

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
    SelectionStatsTable* stats_ = nullptr;
    QTreeWidget* matches_ = nullptr;
    QString listed_;  // the text whose matches are listed
    QString title_;
    double find_from_ns_ = -1;
};

}  // namespace meshwork::gui
