#include "gui/app/theme.h"

#include <QApplication>
#include <QPalette>
#include <QSettings>
#include <QStyle>
#include <QStyleFactory>

namespace meshwork::gui {

namespace {
Theme g_theme = Theme::Dark;

QPalette dark_palette() {
    QPalette p;
    const QColor window(0x25, 0x27, 0x2b), base(0x1c, 0x1e, 0x21), text(0xdc, 0xdf, 0xe4);
    const QColor button(0x2f, 0x32, 0x37), highlight(0x3d, 0x7e, 0xd6);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x23, 0x25, 0x29));
    p.setColor(QPalette::ToolTipBase, QColor(0x32, 0x35, 0x3b));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0x80, 0x85, 0x8d));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, button);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
    p.setColor(QPalette::Light, QColor(0x3a, 0x3d, 0x43));
    p.setColor(QPalette::Midlight, QColor(0x33, 0x36, 0x3b));
    p.setColor(QPalette::Mid, QColor(0x45, 0x49, 0x50));
    p.setColor(QPalette::Dark, QColor(0x16, 0x17, 0x1a));
    p.setColor(QPalette::Shadow, QColor(0x0c, 0x0c, 0x0e));
    p.setColor(QPalette::Highlight, highlight);
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x6a, 0xa8, 0xf0));
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText}) {
        p.setColor(QPalette::Disabled, role, QColor(0x6e, 0x73, 0x7a));
    }
    return p;
}

QPalette light_palette() {
    QPalette p = QStyleFactory::create("Fusion")->standardPalette();
    p.setColor(QPalette::Window, QColor(0xf3, 0xf4, 0xf6));
    p.setColor(QPalette::Base, Qt::white);
    p.setColor(QPalette::AlternateBase, QColor(0xf6, 0xf7, 0xf9));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x6f, 0xc9));
    p.setColor(QPalette::Mid, QColor(0xc4, 0xc8, 0xce));
    return p;
}
}  // namespace

Theme theme_from_string(const QString& text) {
    return text.compare("light", Qt::CaseInsensitive) == 0 ? Theme::Light : Theme::Dark;
}

QString to_string(Theme theme) { return theme == Theme::Light ? "light" : "dark"; }

void apply_theme(Theme theme) {
    g_theme = theme;
    QApplication::setStyle(QStyleFactory::create("Fusion"));
    QApplication::setPalette(theme == Theme::Dark ? dark_palette() : light_palette());
}

Theme current_theme() { return g_theme; }

Theme saved_theme() { return theme_from_string(QSettings().value("ui/theme", "dark").toString()); }

void save_theme(Theme theme) { QSettings().setValue("ui/theme", to_string(theme)); }

const ViewColours& view_colours() {
    static const ViewColours dark{QColor(0x1c, 0x1e, 0x21), QColor(0x26, 0x29, 0x2e),
                                  QColor(0x21, 0x23, 0x27), QColor(0x3b, 0x3f, 0x46),
                                  QColor(0xdc, 0xdf, 0xe4), QColor(0x90, 0x96, 0x9f),
                                  QColor(0x4d, 0x9d, 0xff), QColor(0xef, 0x53, 0x50),
                                  QColor(0xff, 0xa7, 0x26), QColor(0x66, 0xbb, 0x6a)};
    static const ViewColours light{QColor(0xff, 0xff, 0xff), QColor(0xf1, 0xf3, 0xf6),
                                   QColor(0xf8, 0xf9, 0xfb), QColor(0xcc, 0xd1, 0xd8),
                                   QColor(0x1f, 0x23, 0x28), QColor(0x5f, 0x66, 0x70),
                                   QColor(0x1f, 0x6f, 0xd6), QColor(0xc6, 0x28, 0x28),
                                   QColor(0xe6, 0x51, 0x00), QColor(0x2e, 0x7d, 0x32)};
    return g_theme == Theme::Dark ? dark : light;
}

}  // namespace meshwork::gui
