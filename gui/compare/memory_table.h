// Predicted memory beside measured, per rank (`meshwork-cli compare`'s memory part,
// profiler/analysis/memory_compare.h): a row per rank with the cost model's predicted kinds
// (weights, gradients, optimizer, activations, buffers), its reserve and peak, and the
// error of that peak against the measured one; under it the measured row, with what was
// live at the measured peak in the same columns where the trace names the kinds (a Meshwork
// run --profile), the rest as "other", and the allocator's cache as the reserve. A bar in
// the Peak column draws predicted against measured on one scale. Each cell holds its raw
// value (bytes, or the error as a fraction) under Qt::UserRole.
#pragma once

#include <QTreeWidget>

#include "profiler/analysis/memory_compare.h"

namespace meshwork::gui {

class MemoryTable : public QTreeWidget {
    Q_OBJECT
public:
    enum Column { Rank = 0, Weights, Gradients, Optimizer, Activations, Buffers, Other, Reserve, Peak, Error };
    static constexpr int kColumns = 10;

    explicit MemoryTable(QWidget* parent = nullptr);
    void set_comparison(const profiler::MemoryComparison& comparison);
    // Shown instead of the rows when there is nothing to compare (no layout, no memory).
    void set_note(const QString& note);
};

}  // namespace meshwork::gui
