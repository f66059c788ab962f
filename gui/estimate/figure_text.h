// The Estimate dock's numbers as text, one rule for all (gui/app/format.h): three
// significant figures; a change in the unit and decimals of the value beside it ("3.20 s",
// "+0.15 s" rather than "+150 ms"); the durations of one layout (step time, exposed
// communication) in the step time's unit, so that they compare by eye; fractions as
// percentages with one decimal and their changes in percentage points.
#pragma once

#include <QString>

#include <optional>
#include <vector>

#include "gui/app/format.h"
#include "gui/estimate/layout_assessment.h"

namespace meshwork::gui {

// The scale of `f` among `figures` (the one assessment it belongs to).
[[nodiscard]] NumberScale figure_scale(const Figure& f, const std::vector<Figure>& figures);
[[nodiscard]] QString figure_text(const Figure& f, const NumberScale& scale);
// "+0.15 s", "−1.2 pt"; empty when nothing changed; "+<0.01 s" when the change is smaller than
// the value's last decimal.
[[nodiscard]] QString change_text(const Figure& f, double before, const NumberScale& scale);

}  // namespace meshwork::gui
