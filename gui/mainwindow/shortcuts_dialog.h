// Help → Keyboard Shortcuts: every shortcut of the window in a scrolling list, sized to the
// screen it opens on (a message box grew to the height of its text, past a 720-px screen).
#pragma once

class QDialog;
class QWidget;

namespace meshwork::gui {

// Opens the dialog (non-modal, deleted on close) and returns it.
QDialog* open_shortcuts_dialog(QWidget* parent);

}  // namespace meshwork::gui
