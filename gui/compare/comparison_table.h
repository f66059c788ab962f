// The `meshwork-cli compare` table: per time category, predicted and measured seconds and
// the relative error, for all ranks and then per pipeline stage. Errors are coloured by
// size; categories the comparison does not check are dimmed. Each cell also holds its raw
// value (seconds, or the error as a fraction) under Qt::UserRole.
#pragma once

#include <QTreeWidget>

#include "profiler/analysis/trace_compare.h"

namespace meshwork::gui {

class ComparisonTable : public QTreeWidget {
    Q_OBJECT
public:
    enum Column { Category = 0, Predicted, Measured, Error };

    explicit ComparisonTable(QWidget* parent = nullptr);
    // `stages_from_layout`: stage rows are pipeline stages; otherwise ranks.
    void set_comparison(const profiler::TraceComparison& comparison, bool stages_from_layout);

private:
    void add_rows(QTreeWidgetItem* parent, const std::vector<profiler::CategoryError>& rows);
};

}  // namespace meshwork::gui
