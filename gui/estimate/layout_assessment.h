// What the estimate panel shows about a layout, computed by core alone so that it can run
// on a worker thread: validation, the model's size and work, the step's shape and, for a
// valid layout, the cost model's estimate (core/cost) with memory per pipeline stage.
#pragma once

#include <QMetaType>

#include <vector>

#include "gui/estimate/stage_memory.h"
#include "core/layout/layout.h"
#include "core/layout/layout_validate.h"

namespace meshwork::gui {

// One figure with a name, a value in its unit and how to print it.
struct Figure {
    enum class Unit { Count, Bytes, Seconds, Fraction, Plain };
    QString key;    // stable, used to pair figures of two assessments
    QString label;
    double value = 0;
    Unit unit = Unit::Plain;
};

struct LayoutAssessment {
    std::uint64_t generation = 0;  // which request this answers
    ValidationResult validation;
    std::vector<Figure> figures;   // layout facts (model size, batch shape)
    bool estimate_available = false;
    // Peak memory and HBM capacity per pipeline stage (empty without an estimate).
    std::vector<std::pair<double, double>> stage_memory_bytes;
    // The same peaks split by kind, for the memory chart.
    std::vector<StageMemoryBreakdown> stage_memory;
    QString estimate_note;         // why there is no estimate
    double elapsed_ms = 0;
};

LayoutAssessment assess_layout(const Layout& layout, const std::string& file);

}  // namespace meshwork::gui

Q_DECLARE_METATYPE(meshwork::gui::LayoutAssessment)
