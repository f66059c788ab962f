#include "gui/app/wrapping_delegate.h"

#include <QApplication>
#include <QHeaderView>
#include <QStyle>
#include <QTreeView>

#include <algorithm>

namespace meshwork::gui {

WrappingDelegate::WrappingDelegate(QTreeView* view) : QStyledItemDelegate(view), view_(view) {
    view->setItemDelegate(this);
    view->setWordWrap(true);
    view->setTextElideMode(Qt::ElideNone);
    view->setUniformRowHeights(false);
    connect(view->header(), &QHeaderView::sectionResized, view, [view] { view->doItemsLayout(); });
}

QSize WrappingDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    QSize hint = QStyledItemDelegate::sizeHint(option, index);
    const QString text = index.data(Qt::DisplayRole).toString();
    if (text.isEmpty()) return hint;
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QStyle* style = opt.widget ? opt.widget->style() : QApplication::style();
    // The text's room: the section, less the style's margins on both sides (and the tree's
    // indentation in the first column).
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, &opt, opt.widget) + 1;
    int width = view_->header()->sectionSize(index.column()) - 2 * margin;
    if (index.column() == 0 && view_->rootIsDecorated()) width -= view_->indentation();
    if (width <= 0) return hint;
    const QRect wrapped = opt.fontMetrics.boundingRect(QRect(0, 0, width, 1 << 20),
                                                       Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop, text);
    const int vertical_margin = std::max(0, hint.height() - opt.fontMetrics.height());
    hint.setHeight(std::max(hint.height(), wrapped.height() + vertical_margin));
    return hint;
}

}  // namespace meshwork::gui
