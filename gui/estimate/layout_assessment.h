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
    // Valid is not the same as fits: a valid layout whose busiest stage needs more than the
    // GPU's memory (the cost model's Estimate::fits) cannot run.
    bool fits = true;
    double overflow_bytes = 0;  // the most any stage is over HBM
    int worst_stage = -1;
    double elapsed_ms = 0;
};

LayoutAssessment assess_layout(const Layout& layout, const std::string& file);

// What the header and the status bar say of a layout: valid, valid but does not fit (by how
// much), or invalid, with the colour it is shown in.
enum class Verdict { Valid, DoesNotFit, Invalid };
[[nodiscard]] Verdict verdict_of(const LayoutAssessment& a);
// "Valid layout · fits", "Valid layout · does not fit: stage 2 over HBM by 22.0 GiB",
// "Invalid layout · 2 errors"; `warnings` appends the count of warnings.
[[nodiscard]] QString verdict_text(const LayoutAssessment& a, bool warnings = true);

}  // namespace meshwork::gui

Q_DECLARE_METATYPE(meshwork::gui::LayoutAssessment)
