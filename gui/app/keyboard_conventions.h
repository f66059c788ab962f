// Keyboard conventions the whole window keeps, whichever widget has focus (one event filter
// on the application, owned by the window that installs it):
// - Undo and redo (Ctrl+Z; Ctrl+Shift+Z and Ctrl+Y, the window's redo keys) in a spin box undo the layout's last edit,
//   as everywhere else in the window. A spin box's line edit would otherwise claim the keys
//   for its own text history, which its edits (committed to the layout at once) never use.
// - Focus moved by a key (Tab, Shift+Tab, a mnemonic) into a dock tabbed behind another raises
//   that dock; focus moved otherwise (a view hidden, a click elsewhere) raises nothing.
// - The mouse wheel over a spin box or chooser without the focus scrolls the panel around it
//   instead of changing the value (scrolling a dock never edits the layout); with the focus it
//   steps the value.
// - Shift+F10 opens the focused widget's context menu, as the Menu key does (the convention
//   of Windows and GNOME; Qt delivers only the Menu key as a keyboard context-menu event).
#pragma once

class QWidget;

namespace meshwork::gui {

void install_keyboard_conventions(QWidget* window);

}  // namespace meshwork::gui
