#include "gui/mainwindow/shortcuts_dialog.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QGuiApplication>
#include <QScreen>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>

namespace meshwork::gui {

namespace {
QString shortcuts_html() {
    return QObject::tr(
        "<table cellpadding=3>"
        "<tr><td><b>Ctrl+N / Ctrl+O / Ctrl+S</b></td><td>new, open, save layout</td></tr>"
        "<tr><td><b>Ctrl+Shift+S</b></td><td>save as</td></tr>"
        "<tr><td><b>Ctrl+Z / Ctrl+Shift+Z or Ctrl+Y</b></td><td>undo, redo (also with the keyboard in a spin box)</td></tr>"
        "<tr><td><b>Ctrl+Shift+O</b></td><td>open a trace: Meshwork, Kineto JSON (.gz) or nsys SQLite; several files: the ranks of one job</td></tr>"
        "<tr><td><b>Ctrl+Shift+C</b></td><td>open a trace for comparison (predicted beside measured)</td></tr>"
        "<tr><td><b>Ctrl+Shift+I / Ctrl+Shift+P</b></td><td>import an Nsight Systems / PyTorch trace</td></tr>"
        "<tr><td><b>Ctrl+Shift+R</b></td><td>open a remote trace (host:path: served through ssh, or copied with scp)</td></tr>"
        "<tr><td><b>Ctrl+Shift+F</b></td><td>search layouts</td></tr>"
        "<tr><td><b>F5, Ctrl+R</b></td><td>run the layout (CPU or GPUs)</td></tr>"
        "<tr><td><b>Ctrl+E</b></td><td>export for production jobs</td></tr>"
        "<tr><td><b>Ctrl+1 / Ctrl+2 / Ctrl+3</b></td><td>mesh, timeline, ranks</td></tr>"
        "<tr><td><b>Ctrl+Shift+L</b></td><td>dark / light theme</td></tr>"
        "<tr><td><b>Ctrl+Shift+T</b></td><td>the Training dock (batch, ZeRO, recompute, precision, ...), its first setting focused</td></tr>"
        "<tr><td><b>Alt+underlined letter, Tab</b></td><td>a setting of the Training or another dock; the next one</td></tr>"
        "<tr><td colspan=2><br><b>Mesh</b></td></tr>"
        "<tr><td><b>← / →, Home / End</b></td><td>the pipeline stage to edit (Tab to the canvas first)</td></tr>"
        "<tr><td><b>Shift+← / Shift+→</b></td><td>move the stage's first block to the stage before / its last to the stage after</td></tr>"
        "<tr><td><b>Shift+F10, right click</b></td><td>the same moves in a menu</td></tr>"
        "<tr><td colspan=2><br><b>Timeline</b></td></tr>"
        "<tr><td><b>Wheel, W / S, + / −</b></td><td>zoom around the cursor</td></tr>"
        "<tr><td><b>Drag, A / D, ← / →</b></td><td>pan</td></tr>"
        "<tr><td><b>Shift+drag</b></td><td>select a time range: its statistics per event name (Ctrl+C copies them)</td></tr>"
        "<tr><td><b>Click</b></td><td>select an event: its details</td></tr>"
        "<tr><td><b>Home / F</b></td><td>whole trace / zoom to selection</td></tr>"
        "<tr><td><b>M / Shift+M</b></td><td>set (or remove) a timestamp flag at the cursor / clear the flags; neighbouring flags show the time between them</td></tr>"
        "<tr><td><b>Ctrl+F, Enter, F3</b></td><td>find an event by name: every match listed, next match</td></tr>"
        "<tr><td><b>Ctrl+G</b></td><td>go to a step or a micro-batch (3.1)</td></tr>"
        "<tr><td><b>Click a group header, Space</b></td><td>collapse or expand a pipeline stage or dp replica (Ctrl+↑/↓ between groups)</td></tr>"
        "<tr><td><b>[ / ] , { / }</b></td><td>collapse / expand the group, every group</td></tr>"
        "<tr><td><b>Backspace</b></td><td>groups as they were before (after { } or ranks opened from Ranks)</td></tr>"
        "<tr><td colspan=2><br><b>Ranks</b></td></tr>"
        "<tr><td><b>Click, Enter</b></td><td>a rank's lanes at that step (Shift: its replica's)</td></tr>"
        "<tr><td><b>Arrows, Page Up/Down, Home/End</b></td><td>move between cells</td></tr>"
        "</table>");
}
}  // namespace

QDialog* open_shortcuts_dialog(QWidget* parent) {
    auto* dialog = new QDialog(parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(QObject::tr("Keyboard shortcuts"));
    auto* layout = new QVBoxLayout(dialog);
    auto* text = new QTextBrowser(dialog);
    text->setObjectName("shortcuts_text");
    text->setHtml(shortcuts_html());
    layout->addWidget(text, 1);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    layout->addWidget(buttons);
    // At most 80 % of the screen's height (the list scrolls), and never more than it needs.
    const QScreen* screen = parent && parent->screen() ? parent->screen() : QGuiApplication::primaryScreen();
    const int available = screen ? screen->availableGeometry().height() : 720;
    dialog->resize(700, std::min(640, available * 4 / 5));
    dialog->show();
    return dialog;
}

}  // namespace meshwork::gui
