#include "gui/timeline/selection_stats_table.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QKeyEvent>

#include <set>

#include "gui/app/format.h"

namespace meshwork::gui {

namespace {
// Sorts by the number under Qt::UserRole, not by the text ("9 ms" after "10 µs").
class ValueItem : public QTableWidgetItem {
public:
    ValueItem(const QString& text, double value) : QTableWidgetItem(text) {
        setData(Qt::UserRole, value);
        setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    bool operator<(const QTableWidgetItem& other) const override {
        return data(Qt::UserRole).toDouble() < other.data(Qt::UserRole).toDouble();
    }
};
}  // namespace

SelectionStatsTable::SelectionStatsTable(QWidget* parent) : QTableWidget(parent) {
    setColumnCount(ColumnCount);
    setHorizontalHeaderLabels({tr("Name"), tr("Count"), tr("Total"), tr("Mean"), tr("Min"), tr("Max")});
    // The table counts every event that overlaps the selection with its whole duration, as
    // Perfetto's and Nsight Systems' aggregation tables do; the busy times above the table
    // are clipped to the range. Each header says so, since the two totals can differ.
    const QString whole = tr("Events that overlap the selection, each with its whole duration (not clipped to "
                             "the range, unlike the busy times above)");
    horizontalHeaderItem(Count)->setToolTip(whole);
    for (int c = Total; c < ColumnCount; ++c) horizontalHeaderItem(c)->setToolTip(whole);
    horizontalHeader()->setSectionResizeMode(Name, QHeaderView::Stretch);
    for (int c = Count; c < ColumnCount; ++c) horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    verticalHeader()->hide();
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setSelectionMode(QAbstractItemView::ExtendedSelection);
    setSortingEnabled(true);
    setWordWrap(false);
    setContextMenuPolicy(Qt::ActionsContextMenu);
    auto* copy_selected = new QAction(tr("Copy Selected Rows"), this);
    connect(copy_selected, &QAction::triggered, this, [this] { copy_to_clipboard(true); });
    auto* copy_all = new QAction(tr("Copy Table"), this);
    connect(copy_all, &QAction::triggered, this, [this] { copy_to_clipboard(false); });
    addActions({copy_selected, copy_all});
}

void SelectionStatsTable::set_stats(const std::vector<profiler::NameTotals>& names) {
    setSortingEnabled(false);
    clearContents();
    setRowCount(static_cast<int>(names.size()));
    int row = 0;
    for (const auto& n : names) {
        auto* name = new QTableWidgetItem(QString::fromStdString(n.name));
        name->setToolTip(name->text());
        setItem(row, Name, name);
        setItem(row, Count, new ValueItem(format_count(static_cast<double>(n.count)), static_cast<double>(n.count)));
        const double mean = n.count > 0 ? static_cast<double>(n.total_ns) / static_cast<double>(n.count) : 0.0;
        const std::pair<Column, double> durations[] = {{Total, static_cast<double>(n.total_ns)},
                                                       {Mean, mean},
                                                       {Min, static_cast<double>(n.min_ns)},
                                                       {Max, static_cast<double>(n.max_ns)}};
        for (const auto& [column, ns] : durations) setItem(row, column, new ValueItem(format_duration_ns(ns), ns));
        ++row;
    }
    setSortingEnabled(true);
    sortItems(Total, Qt::DescendingOrder);  // where the time went, first
}

QString SelectionStatsTable::tsv(bool selected_only) const {
    std::set<int> rows;
    if (selected_only) {
        for (const auto& index : selectionModel()->selectedRows()) rows.insert(index.row());
    }
    if (rows.empty()) {
        for (int r = 0; r < rowCount(); ++r) rows.insert(r);
    }
    QString text = "name\tcount\ttotal_ns\tmean_ns\tmin_ns\tmax_ns\n";
    for (const int r : rows) {
        QStringList fields{item(r, Name)->text()};
        for (int c = Count; c < ColumnCount; ++c) {
            fields << QString::number(item(r, c)->data(Qt::UserRole).toDouble(), 'f', c == Mean ? 1 : 0);
        }
        text += fields.join('\t') + '\n';
    }
    return text;
}

void SelectionStatsTable::copy_to_clipboard(bool selected_only) const {
    QApplication::clipboard()->setText(tsv(selected_only));
}

void SelectionStatsTable::keyPressEvent(QKeyEvent* event) {
    if (event->matches(QKeySequence::Copy)) {
        copy_to_clipboard(true);
        return;
    }
    QTableWidget::keyPressEvent(event);
}

}  // namespace meshwork::gui
