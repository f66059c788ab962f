#include "gui/compare/stats_table.h"

#include <QHeaderView>

#include "gui/app/format.h"

namespace meshwork::gui {

namespace {
QString seconds(double s) { return format_duration_ns(s * 1e9); }
QString percent(double fraction) { return QString("%1 %").arg(100 * fraction, 0, 'f', 1); }
}  // namespace

StatsTable::StatsTable(QWidget* parent) : QTreeWidget(parent) {
    setHeaderLabels({tr("Rank / kernel"), tr("Span"), tr("Compute"), tr("Communication"), tr("Copies"), tr("Idle"),
                     tr("Exposed comm."), tr("Overlap"), tr("Bubble"), tr("Events")});
    setUniformRowHeights(true);
    setAlternatingRowColors(true);
    header()->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int c = 1; c < columnCount(); ++c) header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    header()->setStretchLastSection(false);
}

void StatsTable::set_stats(const profiler::TraceStats& stats) {
    clear();
    auto* ranks = new QTreeWidgetItem(this, {tr("Ranks")});
    for (const auto& r : stats.ranks) {
        auto* it = new QTreeWidgetItem(ranks, {tr("rank %1").arg(r.rank), seconds(r.span_s), seconds(r.compute_s),
                                               seconds(r.comm_s), seconds(r.memcpy_s), seconds(r.idle_s),
                                               seconds(r.exposed_comm_s), percent(r.overlap_fraction),
                                               percent(r.bubble_fraction), format_count(static_cast<double>(r.events))});
        for (int c = 1; c < columnCount(); ++c) it->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
    }
    if (!stats.kernels.empty()) {
        // Kernel rows reuse the columns: total time under Span, count under Events.
        auto* kernels = new QTreeWidgetItem(this, {tr("Top kernels (total time, mean, max)")});
        for (const auto& k : stats.kernels) {
            auto* it = new QTreeWidgetItem(kernels);
            it->setText(0, QString::fromStdString(k.name));
            it->setToolTip(0, QString::fromStdString(k.name));
            it->setText(1, seconds(k.total_s));
            it->setText(2, tr("mean %1").arg(seconds(k.mean_s)));
            it->setText(3, tr("max %1").arg(seconds(k.max_s)));
            it->setText(9, format_count(static_cast<double>(k.count)));
            for (int c = 1; c < columnCount(); ++c) it->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
        }
    }
    expandAll();
}

}  // namespace meshwork::gui
