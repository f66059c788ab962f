// Dark and light palettes on the Fusion style. The choice is kept in QSettings ("ui/theme").
#pragma once

#include <QColor>
#include <QString>

class QApplication;

namespace meshwork::gui {

enum class Theme { Dark, Light };

Theme theme_from_string(const QString& text);  // "light" -> Light, anything else -> Dark
QString to_string(Theme theme);
void apply_theme(Theme theme);
Theme current_theme();
Theme saved_theme();
void save_theme(Theme theme);

// Colours the custom-painted views share, chosen per theme so that text stays readable.
struct ViewColours {
    QColor background;
    QColor panel;        // group boxes, lane headers
    QColor panel_alt;    // alternating lanes
    QColor border;
    QColor text;
    QColor text_dim;
    QColor accent;       // selection, drop target
    QColor error;
    QColor warning;
    QColor ok;
};
const ViewColours& view_colours();

}  // namespace meshwork::gui
