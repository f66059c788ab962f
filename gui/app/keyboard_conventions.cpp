#include "gui/app/keyboard_conventions.h"

#include <QAbstractItemView>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QContextMenuEvent>
#include <QKeyEvent>
#include <QKeySequence>

namespace meshwork::gui {

namespace {

bool in_spin_box(const QObject* o) {
    for (; o != nullptr; o = o->parent()) {
        if (qobject_cast<const QAbstractSpinBox*>(o) != nullptr) return true;
        if (o->isWidgetType() && static_cast<const QWidget*>(o)->isWindow()) return false;
    }
    return false;
}

// Where a keyboard context menu opens: at the current item of a list or table, else at the
// middle of the widget.
QPoint keyboard_menu_pos(QWidget* w) {
    if (auto* view = qobject_cast<QAbstractItemView*>(w)) {
        const QRect item = view->visualRect(view->currentIndex());
        if (item.isValid()) return view->viewport()->mapTo(w, item.center());
    }
    return w->rect().center();
}

class KeyboardConventions : public QObject {
  public:
    explicit KeyboardConventions(QWidget* window) : QObject(window), window_(window) {}

    bool eventFilter(QObject* watched, QEvent* event) override {
        auto* widget = qobject_cast<QWidget*>(watched);
        if (widget == nullptr || widget->window() != window_) return false;
        if (event->type() == QEvent::ShortcutOverride) {
            const auto* key = static_cast<QKeyEvent*>(event);
            // Not accepted: the window's Undo / Redo shortcuts take the key.
            const QKeySequence pressed(key->keyCombination());
            const bool undo_or_redo = key->matches(QKeySequence::Undo) || key->matches(QKeySequence::Redo) ||
                                      pressed == QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z) ||
                                      pressed == QKeySequence(Qt::CTRL | Qt::Key_Y);
            if (undo_or_redo && in_spin_box(watched)) return true;
        } else if (event->type() == QEvent::KeyPress) {
            const auto* key = static_cast<QKeyEvent*>(event);
            if (key->key() == Qt::Key_F10 && key->modifiers() == Qt::ShiftModifier) {
                // The item views' viewport receives mouse menus; the view itself the keyboard's.
                QWidget* target = widget;
                const QPoint pos = keyboard_menu_pos(target);
                QContextMenuEvent menu(QContextMenuEvent::Keyboard, pos, target->mapToGlobal(pos));
                QCoreApplication::sendEvent(target, &menu);
                return true;
            }
        }
        return false;
    }

  private:
    QWidget* window_;
};

}  // namespace

void install_keyboard_conventions(QWidget* window) {
    qApp->installEventFilter(new KeyboardConventions(window));
}

}  // namespace meshwork::gui
