// An item delegate whose row height is that of its text wrapped at the column's width.
// QTreeView asks a delegate for a row's height without telling it the column's width, so a
// wrapped cell keeps one line's height and the rest of the text is cut (the Estimate's
// Problem column, issue 30). This delegate reads the width from the view's header.
#pragma once

#include <QStyledItemDelegate>

class QTreeView;

namespace meshwork::gui {

class WrappingDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    // Installs itself on `view` and re-lays the rows whenever a column's width changes.
    explicit WrappingDelegate(QTreeView* view);

    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;

private:
    QTreeView* view_;
};

}  // namespace meshwork::gui
