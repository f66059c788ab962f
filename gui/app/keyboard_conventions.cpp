#include "gui/app/keyboard_conventions.h"

#include <QAbstractItemView>
#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QApplication>
#include <QContextMenuEvent>
#include <QDockWidget>
#include <QFocusEvent>
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

// A dock tabbed behind another still counts as visible to Qt: Tab and the mnemonics reach its
// widgets. Focus that a key moved there brings the dock to the front, so no key ever changes
// what cannot be seen. Focus moved for other reasons (a view hidden, a window activated) leaves
// the docks as the user arranged them.
void raise_hidden_dock_of(QWidget* focused) {
    for (QWidget* w = focused->parentWidget(); w != nullptr; w = w->parentWidget()) {
        if (auto* dock = qobject_cast<QDockWidget*>(w)) {
            if (dock->widget() != nullptr && dock->widget()->visibleRegion().isEmpty()) dock->raise();
            return;
        }
    }
}

// The value widget (spin box, combo box) a wheel event over `o` would change, or null.
QWidget* value_widget_of(QObject* o) {
    for (; o != nullptr; o = o->parent()) {
        if (qobject_cast<QAbstractSpinBox*>(o) != nullptr || qobject_cast<QComboBox*>(o) != nullptr)
            return static_cast<QWidget*>(o);
        if (o->isWidgetType() && static_cast<QWidget*>(o)->isWindow()) return nullptr;
    }
    return nullptr;
}

class KeyboardConventions : public QObject {
  public:
    explicit KeyboardConventions(QWidget* window) : QObject(window), window_(window) {}

    bool eventFilter(QObject* watched, QEvent* event) override {
        auto* widget = qobject_cast<QWidget*>(watched);
        if (widget == nullptr) return false;
        if (event->type() == QEvent::Polish && (qobject_cast<QAbstractSpinBox*>(watched) != nullptr ||
                                                 qobject_cast<QComboBox*>(watched) != nullptr)) {
            // In every window of the application: Qt gives a spin box the focus when the wheel
            // merely passes over it (WheelFocus), before any filter sees the wheel; here only a
            // click or Tab focuses one.
            if ((widget->focusPolicy() & Qt::WheelFocus) == Qt::WheelFocus) widget->setFocusPolicy(Qt::StrongFocus);
            return false;
        }
        if (widget->window() != window_) return false;
        if (event->type() == QEvent::Wheel) {
            // The wheel over a spin box or chooser that does not have the focus scrolls the
            // panel it sits in, as the wheel does everywhere else there: scrolling the
            // Training dock past the global batch must not change the batch. With the focus
            // (clicked or tabbed into), the wheel steps its value as usual.
            QWidget* value = value_widget_of(watched);
            if (value == nullptr || value->hasFocus()) return false;
            for (QWidget* w = value->parentWidget(); w != nullptr && !w->isWindow(); w = w->parentWidget()) {
                if (auto* area = qobject_cast<QAbstractScrollArea*>(w)) {
                    QCoreApplication::sendEvent(area->viewport(), event);
                    break;
                }
            }
            return true;
        }
        if (event->type() == QEvent::FocusIn) {
            const Qt::FocusReason reason = static_cast<QFocusEvent*>(event)->reason();
            if (reason == Qt::TabFocusReason || reason == Qt::BacktabFocusReason ||
                reason == Qt::ShortcutFocusReason)
                raise_hidden_dock_of(widget);
        } else if (event->type() == QEvent::ShortcutOverride) {
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
