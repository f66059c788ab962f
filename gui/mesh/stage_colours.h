// One colour per pipeline stage, shared by the canvas, the model tree and the timeline so
// that a stage looks the same everywhere. Tableau-10 hues: distinct on dark and light.
#pragma once

#include <QColor>

namespace meshwork::gui {

QColor stage_colour(int stage);

}  // namespace meshwork::gui
