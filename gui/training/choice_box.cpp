#include "gui/training/choice_box.h"

#include <QStandardItemModel>

namespace meshwork::gui {

namespace {
constexpr int kTipRole = Qt::UserRole + 1;  // what the item models, kept while it is closed

QStandardItem* item_of(const QComboBox* box, int index) {
    auto* model = qobject_cast<QStandardItemModel*>(box->model());
    return model ? model->item(index) : nullptr;
}
}  // namespace

void add_choice(QComboBox* box, const QString& label, const QString& data, const QString& tip) {
    box->addItem(label, data);
    const int index = box->count() - 1;
    box->setItemData(index, tip, kTipRole);
    box->setItemData(index, tip, Qt::ToolTipRole);
}

void set_choice_allowed(QComboBox* box, int index, bool allowed, const QString& why) {
    auto* item = item_of(box, index);
    if (!item) return;
    item->setEnabled(allowed);
    item->setToolTip(allowed ? item->data(kTipRole).toString() : why);
}

bool choice_allowed(const QComboBox* box, int index) {
    const auto* item = item_of(box, index);
    return item && item->isEnabled();
}

void select_choice(QComboBox* box, const QString& data) { box->setCurrentIndex(box->findData(data)); }

bool has_other_choice(const QComboBox* box) {
    for (int i = 0; i < box->count(); ++i) {
        if (i != box->currentIndex() && choice_allowed(box, i)) return true;
    }
    return false;
}

void set_box_tip(QComboBox* box, const QString& tip) {
    box->setProperty("meshwork_box_tip", tip);
    box->setToolTip(tip);
}

void refresh_box(QComboBox* box) {
    const bool open = has_other_choice(box);
    box->setEnabled(open);
    QString tip = box->property("meshwork_box_tip").toString();
    if (!open) {
        for (int i = 0; i < box->count(); ++i) {
            if (i == box->currentIndex() || choice_allowed(box, i)) continue;
            tip += QString("\n%1: %2").arg(box->itemText(i), box->itemData(i, Qt::ToolTipRole).toString());
        }
    }
    box->setToolTip(tip);
}

}  // namespace meshwork::gui
