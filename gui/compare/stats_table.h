// The `meshwork-cli stats` view of one trace: per rank the span, compute, communication,
// copies, idle and exposed communication, the compute/communication overlap and the
// pipeline bubble; below, the kernels that took the most time.
#pragma once

#include <QTreeWidget>

#include "profiler/analysis/trace_stats.h"

namespace meshwork::gui {

class StatsTable : public QTreeWidget {
    Q_OBJECT
public:
    explicit StatsTable(QWidget* parent = nullptr);
    void set_stats(const profiler::TraceStats& stats);
};

}  // namespace meshwork::gui
