#include "gui/compare/memory_table.h"

#include <QHeaderView>
#include <QPainter>
#include <QStyledItemDelegate>

#include <algorithm>
#include <cmath>

#include "core/trace/memory_kind.h"
#include "gui/app/format.h"
#include "gui/app/theme.h"

namespace meshwork::gui {

namespace {

// As the time table (comparison_table.cpp): up to 10 % agreement, up to 25 % worth a look.
QColor error_colour(double error) {
    const auto& c = view_colours();
    const double e = std::fabs(error);
    return e <= 0.10 ? c.ok : e <= 0.25 ? c.warning : c.error;
}

// Roles of the Peak column's bar: the row's peak and the largest peak of the table.
constexpr int kBarRole = Qt::UserRole + 1;
constexpr int kBarScaleRole = Qt::UserRole + 2;
constexpr int kBarMeasuredRole = Qt::UserRole + 3;

// The Peak cell: a bar of the row's peak on the table's scale behind the text, so that
// predicted and measured peaks of a rank read against each other at a glance.
class PeakBarDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter* p, const QStyleOptionViewItem& option, const QModelIndex& index) const override {
        const double value = index.data(kBarRole).toDouble();
        const double scale = index.data(kBarScaleRole).toDouble();
        if (value > 0 && scale > 0) {
            const auto& c = view_colours();
            QRect bar = option.rect.adjusted(2, 3, -2, -3);
            bar.setWidth(static_cast<int>(std::lround(bar.width() * std::min(1.0, value / scale))));
            QColor fill = index.data(kBarMeasuredRole).toBool() ? c.text_dim : c.accent;
            fill.setAlpha(90);
            p->fillRect(bar, fill);
        }
        QStyledItemDelegate::paint(p, option, index);
    }
};

void set_bytes(QTreeWidgetItem* item, int column, std::int64_t bytes) {
    item->setText(column, format_bytes(static_cast<double>(bytes)));
    item->setData(column, Qt::UserRole, static_cast<qlonglong>(bytes));
    item->setTextAlignment(column, Qt::AlignRight | Qt::AlignVCenter);
}

}  // namespace

MemoryTable::MemoryTable(QWidget* parent) : QTreeWidget(parent) {
    setColumnCount(kColumns);
    setHeaderLabels({tr("Rank"), tr("Weights"), tr("Gradients"), tr("Optimizer"), tr("Activations"), tr("Buffers"),
                     tr("Other"), tr("Reserve / cache"), tr("Peak"), tr("Error")});
    headerItem()->setToolTip(Other, tr("Measured: what was live at the peak in categories that are not the "
                                       "cost model's kinds (from a real stack: see docs/profiler.md)"));
    headerItem()->setToolTip(Reserve, tr("Predicted: the cluster's memory reserve (fixed bytes + fragmentation "
                                         "share). Measured: reserved beyond allocated at the peaks (the "
                                         "allocator's cache)"));
    headerItem()->setToolTip(Peak, tr("Predicted: the sum of the row. Measured: the reserved peak, else the "
                                      "allocated peak"));
    setRootIsDecorated(true);
    setUniformRowHeights(true);
    setAlternatingRowColors(true);
    setSelectionMode(QAbstractItemView::ExtendedSelection);
    header()->setStretchLastSection(false);
    header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    header()->setSectionResizeMode(Peak, QHeaderView::Stretch);
    setItemDelegateForColumn(Peak, new PeakBarDelegate(this));
}

void MemoryTable::set_note(const QString& note) {
    clear();
    auto* item = new QTreeWidgetItem(this);
    item->setText(Rank, note);
    item->setFirstColumnSpanned(true);
    item->setForeground(Rank, view_colours().text_dim);
}

void MemoryTable::set_comparison(const profiler::MemoryComparison& comparison) {
    const bool any = std::any_of(comparison.ranks.begin(), comparison.ranks.end(), [](const auto& r) { return r.measured; });
    if (!comparison.has_memory || !any) {
        set_note(tr("Memory not compared: %1").arg(QString::fromStdString(comparison.note)));
        return;
    }
    clear();
    std::int64_t scale = 0;
    for (const auto& r : comparison.ranks) scale = std::max({scale, r.predicted.peak, r.measured_peak_bytes});
    const auto& c = view_colours();
    QFont bold = font();
    bold.setBold(true);
    for (const auto& r : comparison.ranks) {
        auto* predicted = new QTreeWidgetItem(this);
        predicted->setText(Rank, tr("Rank %1 · stage %2 · predicted").arg(r.rank).arg(r.stage));
        predicted->setData(Rank, Qt::UserRole, r.rank);
        set_bytes(predicted, Weights, r.predicted.weights);
        set_bytes(predicted, Gradients, r.predicted.gradients);
        set_bytes(predicted, Optimizer, r.predicted.optimizer);
        set_bytes(predicted, Activations, r.predicted.activations);
        set_bytes(predicted, Buffers, r.predicted.buffers);
        set_bytes(predicted, Reserve, r.predicted.reserve);
        set_bytes(predicted, Peak, r.predicted.peak);
        predicted->setData(Peak, kBarRole, static_cast<double>(r.predicted.peak));
        predicted->setData(Peak, kBarScaleRole, static_cast<double>(scale));
        predicted->setFont(Peak, bold);
        if (!r.measured) {
            predicted->setText(Error, tr("not measured"));
            predicted->setForeground(Error, c.text_dim);
            continue;
        }
        predicted->setText(Error, QString("%1%2 %").arg(r.error >= 0 ? "+" : "\u2212").arg(std::fabs(100 * r.error), 0, 'f', 1));
        predicted->setData(Error, Qt::UserRole, r.error);
        predicted->setTextAlignment(Error, Qt::AlignRight | Qt::AlignVCenter);
        predicted->setForeground(Error, error_colour(r.error));

        auto* measured = new QTreeWidgetItem(predicted);
        measured->setText(Rank, r.device >= 0 ? tr("measured (device %1)").arg(r.device) : tr("measured (host)"));
        // The categories that are the cost model's kinds go in their columns, the rest in Other.
        std::int64_t other = 0;
        QStringList other_names;
        for (const auto& [category, bytes] : r.at_peak_by_category) {
            if (const auto kind = memory_kind_of_name(category)) {
                set_bytes(measured, Weights + static_cast<int>(*kind), bytes);
            } else {
                other += bytes;
                other_names << QString("%1 %2").arg(QString::fromStdString(category), format_bytes(static_cast<double>(bytes)));
            }
        }
        if (other > 0) {
            set_bytes(measured, Other, other);
            measured->setToolTip(Other, other_names.join("\n"));
        }
        set_bytes(measured, Reserve, std::max<std::int64_t>(0, r.measured_peak_bytes - r.allocated_peak_bytes));
        set_bytes(measured, Peak, r.measured_peak_bytes);
        measured->setData(Peak, kBarRole, static_cast<double>(r.measured_peak_bytes));
        measured->setData(Peak, kBarScaleRole, static_cast<double>(scale));
        measured->setData(Peak, kBarMeasuredRole, true);
        measured->setToolTip(Peak, tr("allocated peak %1, reserved peak %2")
                                       .arg(format_bytes(static_cast<double>(r.allocated_peak_bytes)),
                                            format_bytes(static_cast<double>(r.reserved_peak_bytes))));
    }
    expandAll();
}

}  // namespace meshwork::gui
