#include "gui/compare/comparison_table.h"

#include <QHeaderView>

#include <cmath>

#include "gui/app/format.h"
#include "gui/app/theme.h"

namespace meshwork::gui {

namespace {

// |error| up to 10 % reads as agreement, up to 25 % as worth a look (the CLI's checks are
// usually run with --max-error 0.1 to 0.2).
QColor error_colour(double error) {
    const auto& c = view_colours();
    const double e = std::fabs(error);
    return e <= 0.10 ? c.ok : e <= 0.25 ? c.warning : c.error;
}

QString category_title(const std::string& category) {
    if (category == "exposed_communication") return QObject::tr("exposed communication");
    return QString::fromStdString(category);
}

}  // namespace

ComparisonTable::ComparisonTable(QWidget* parent) : QTreeWidget(parent) {
    setColumnCount(4);
    setHeaderLabels({tr("Category"), tr("Predicted"), tr("Measured"), tr("Error")});
    setRootIsDecorated(true);
    setUniformRowHeights(true);
    setAlternatingRowColors(true);
    setSelectionMode(QAbstractItemView::ExtendedSelection);
    header()->setStretchLastSection(false);
    header()->setSectionResizeMode(Category, QHeaderView::Stretch);
    for (int c : {Predicted, Measured, Error}) header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
}

void ComparisonTable::add_rows(QTreeWidgetItem* parent, const std::vector<profiler::CategoryError>& rows) {
    const auto& c = view_colours();
    for (const auto& row : rows) {
        auto* item = new QTreeWidgetItem(parent);
        item->setText(Category, category_title(row.category));
        item->setText(Predicted, format_duration_ns(row.predicted_s * 1e9));
        item->setText(Measured, format_duration_ns(row.measured_s * 1e9));
        item->setText(Error, QString("%1%2 %").arg(row.error >= 0 ? "+" : "\u2212")
                                 .arg(std::fabs(100 * row.error), 0, 'f', 1));
        item->setData(Predicted, Qt::UserRole, row.predicted_s);
        item->setData(Measured, Qt::UserRole, row.measured_s);
        item->setData(Error, Qt::UserRole, row.error);
        for (int col : {Predicted, Measured, Error}) item->setTextAlignment(col, Qt::AlignRight | Qt::AlignVCenter);
        if (row.checked) {
            item->setForeground(Error, error_colour(row.error));
        } else {
            for (int col = 0; col < 4; ++col) item->setForeground(col, c.text_dim);
            item->setToolTip(Category, tr("Shown, not checked: `compare --max-error` checks step, compute and "
                                          "communication"));
        }
    }
}

void ComparisonTable::set_comparison(const profiler::TraceComparison& comparison, bool stages_from_layout) {
    clear();
    auto* all = new QTreeWidgetItem(this);
    all->setText(Category, tr("All ranks (mean per rank)"));
    all->setText(Error, tr("max |error| %1 %").arg(100 * comparison.max_abs_error, 0, 'f', 1));
    all->setTextAlignment(Error, Qt::AlignRight | Qt::AlignVCenter);
    all->setData(Error, Qt::UserRole, comparison.max_abs_error);
    QFont bold = font();
    bold.setBold(true);
    for (int col = 0; col < 4; ++col) all->setFont(col, bold);
    add_rows(all, comparison.categories);
    for (const auto& s : comparison.stages) {
        auto* stage = new QTreeWidgetItem(this);
        stage->setText(Category, (stages_from_layout ? tr("Stage %1") : tr("Rank %1")).arg(s.stage) +
                                     tr("  (%1 predicted, %2 measured rank(s))").arg(s.predicted_ranks).arg(s.measured_ranks));
        stage->setData(Category, Qt::UserRole, s.stage);
        add_rows(stage, s.categories);
    }
    expandAll();
}

}  // namespace meshwork::gui
