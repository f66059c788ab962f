#include "gui/ranks/rank_overview_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QVBoxLayout>

#include <algorithm>

#include "gui/app/format.h"
#include "gui/app/theme.h"

namespace meshwork::gui {

RankOverviewPanel::RankOverviewPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(8, 4, 8, 4);
    title_ = new QLabel(tr("Ranks × steps"), this);
    QFont bold = title_->font();
    bold.setBold(true);
    title_->setFont(bold);
    auto* colour_by = new QLabel(tr("&Colour by"), this);
    metric_ = new QComboBox(this);
    metric_->addItem(tr("Step time"), static_cast<int>(RankMetric::StepTime));
    metric_->addItem(tr("Exposed communication"), static_cast<int>(RankMetric::ExposedComm));
    metric_->setToolTip(tr("Step time: first device event to last of the step on that rank.\n"
                           "Exposed communication: communication not hidden under compute."));
    colour_by->setBuddy(metric_);
    summary_ = new QLabel(this);
    progress_ = new QProgressBar(this);
    progress_->setMaximumWidth(180);
    progress_->setMaximumHeight(14);
    progress_->setTextVisible(false);
    progress_->hide();
    bar->addWidget(title_);
    bar->addSpacing(16);
    bar->addWidget(colour_by);
    bar->addWidget(metric_);
    bar->addSpacing(16);
    bar->addWidget(progress_);
    bar->addStretch(1);
    bar->addWidget(summary_);
    layout->addLayout(bar);
    overview_ = new RankOverview(this);
    layout->addWidget(overview_, 1);
    connect(metric_, &QComboBox::currentIndexChanged, this, [this] {
        overview_->set_metric(static_cast<RankMetric>(metric_->currentData().toInt()));
    });
    connect(overview_, &RankOverview::ranks_requested, this, &RankOverviewPanel::ranks_requested);
}

void RankOverviewPanel::set_metric(RankMetric metric) {
    metric_->setCurrentIndex(std::max(0, metric_->findData(static_cast<int>(metric))));
}

void RankOverviewPanel::set_data(std::shared_ptr<const RankOverviewData> overview) {
    progress_->hide();
    overview_->set_data(std::move(overview));
    update_summary();
}

void RankOverviewPanel::show_progress(const QString& what, qint64 done, qint64 total) {
    progress_->show();
    progress_->setRange(0, static_cast<int>(std::clamp<qint64>(total, 0, 1 << 30)));
    if (total > 0) progress_->setValue(static_cast<int>(std::min(done, total)));
    summary_->setText(what);
}

void RankOverviewPanel::show_error(const QString& message) {
    progress_->hide();
    summary_->setText(tr("<span style='color:%1'>%2</span>").arg(view_colours().error.name(), message.toHtmlEscaped()));
}

void RankOverviewPanel::update_summary() {
    const auto* shown = overview_->data();
    if (!shown) {
        summary_->clear();
        return;
    }
    title_->setText(shown->title);
    const auto& g = shown->grouping;
    QString grouping = g.by_mesh                        ? tr("grouped by pipeline stage, then data-parallel replica")
                       : shown->layout_error.isEmpty() ? tr("in rank order (the trace carries no layout)")
                                                       : tr("in rank order (its layout: %1)").arg(shown->layout_error);
    summary_->setText(tr("%1 ranks · %2 steps · %3").arg(g.ranks.size()).arg(shown->matrix.steps.size()).arg(grouping));
}

}  // namespace meshwork::gui
