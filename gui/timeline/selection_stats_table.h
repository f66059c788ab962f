// The statistics of a timeline selection per event name — count, total, mean, min and max
// duration — as Perfetto's and Nsight Systems' aggregation tables show them: sorted by total
// at first, any column sorts by value on a click, and Ctrl+C (or the context menu) copies the
// selected rows, or all of them, as tab-separated text with a header line.
#pragma once

#include <QTableWidget>

#include <vector>

#include "profiler/analysis/timeline_queries.h"

namespace meshwork::gui {

class SelectionStatsTable : public QTableWidget {
    Q_OBJECT
public:
    enum Column { Name, Count, Total, Mean, Min, Max, ColumnCount };
    explicit SelectionStatsTable(QWidget* parent = nullptr);
    void set_stats(const std::vector<profiler::NameTotals>& names);
    // The selected rows (all rows when none is selected) as TSV, durations in ns.
    [[nodiscard]] QString tsv(bool selected_only) const;
    void copy_to_clipboard(bool selected_only) const;

protected:
    void keyPressEvent(QKeyEvent* event) override;
};

}  // namespace meshwork::gui
