#include "gui/estimate/estimate_panel.h"

#include "gui/app/wrapping_delegate.h"

#include "gui/document/issue_words.h"

#include <QElapsedTimer>
#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "gui/app/format.h"
#include "gui/app/theme.h"
#include "gui/document/layout_document.h"
#include "gui/estimate/assessment_runner.h"
#include "gui/estimate/figure_text.h"
#include "gui/estimate/memory_chart.h"

namespace meshwork::gui {

namespace {
qint64 now_ns() {
    static QElapsedTimer clock = [] { QElapsedTimer t; t.start(); return t; }();
    return clock.nsecsElapsed();
}

}  // namespace

EstimatePanel::EstimatePanel(LayoutDocument* document, QWidget* parent)
    : QWidget(parent), document_(document), runner_(new AssessmentRunner(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 8, 8, 8);
    layout->setSpacing(6);
    state_ = new QLabel(this);
    QFont big = state_->font();
    big.setPointSizeF(big.pointSizeF() * 1.15);
    big.setBold(true);
    state_->setFont(big);
    state_->setWordWrap(true);  // "does not fit: stage 2 over HBM by …" never widens the dock
    layout->addWidget(state_);

    figures_ = new QTreeWidget(this);
    figures_->setRootIsDecorated(false);
    figures_->setColumnCount(3);
    figures_->setHeaderLabels({tr("Figure"), tr("Value"), tr("Change")});
    figures_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    figures_->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    figures_->header()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
    figures_->header()->setStretchLastSection(false);
    figures_->setSelectionMode(QAbstractItemView::NoSelection);
    figures_->setFocusPolicy(Qt::NoFocus);
    figures_->setUniformRowHeights(true);
    layout->addWidget(figures_, 3);

    note_ = new QLabel(this);
    note_->setWordWrap(true);
    layout->addWidget(note_);

    memory_chart_ = new MemoryChart(this);
    layout->addWidget(memory_chart_, 2);

    issues_ = new QTreeWidget(this);
    issues_->setRootIsDecorated(false);
    issues_->setColumnCount(2);
    // What an issue is about in words ("Stage 2, 0 layers"); its field path in the tooltip.
    issues_->setHeaderLabels({tr("About"), tr("Problem")});
    issues_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    // The problem takes the rest of the width and wraps there rather than being cut.
    issues_->header()->setSectionResizeMode(1, QHeaderView::Stretch);
    issues_->header()->setStretchLastSection(true);
    // Each row as tall as its problem wrapped at the column's width, again on every resize.
    new WrappingDelegate(issues_);
    layout->addWidget(issues_, 2);

    timing_ = new QLabel(this);
    layout->addWidget(timing_);

    connect(runner_, &AssessmentRunner::ready, this, &EstimatePanel::show_assessment);
    connect(document_, &LayoutDocument::reset_done, this, [this] { reset_pending_ = true; });
    connect(document_, &LayoutDocument::changed, this, [this] {
        if (!document_->has_layout()) return;
        requested_at_ns_ = now_ns();
        runner_->request(document_->layout(), document_->path());
    });
}

void EstimatePanel::show_assessment(const LayoutAssessment& a) {
    const auto& c = view_colours();
    // After New/Open there is no "previous layout" worth comparing with.
    if (reset_pending_) {
        previous_.reset();
        reset_pending_ = false;
    } else {
        previous_ = current_;
    }
    current_ = a;
    // Valid and fits are different things: a valid layout over HBM is not shown as green.
    const Verdict verdict = verdict_of(a);
    state_->setText(verdict_text(a));
    state_->setStyleSheet(QString("color: %1").arg(
        (verdict == Verdict::Valid ? c.ok : c.error).name()));

    figures_->clear();
    for (const auto& f : a.figures) {
        const NumberScale scale = figure_scale(f, a.figures);
        QString change;
        if (previous_) {
            for (const auto& p : previous_->figures) {
                if (p.key == f.key) change = change_text(f, p.value, scale);
            }
        }
        auto* item = new QTreeWidgetItem(figures_, {f.label, figure_text(f, scale), change});
        item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
        item->setTextAlignment(2, Qt::AlignRight | Qt::AlignVCenter);
        if (!change.isEmpty()) item->setForeground(2, c.accent);
    }
    if (!a.estimate_available) {
        for (const QString& label : {tr("Step time"), tr("Tokens/s"), tr("MFU"), tr("Pipeline bubble"),
                                     tr("Exposed communication"), tr("Peak memory per GPU")}) {
            auto* item = new QTreeWidgetItem(figures_, {label, QString::fromUtf8("—"), {}});
            item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
            item->setForeground(0, c.text_dim);
            item->setForeground(1, c.text_dim);
        }
        note_->setText(tr("Estimates unavailable. %1").arg(a.estimate_note));
        note_->setStyleSheet(QString("color: %1").arg(c.text_dim.name()));
    }
    if (a.estimate_available && !a.estimate_note.isEmpty()) {
        note_->setText(a.estimate_note);
        note_->setStyleSheet(QString("color: %1").arg(c.error.name()));
    }
    note_->setVisible(!a.estimate_available || !a.estimate_note.isEmpty());
    memory_chart_->set_stages(a.stage_memory);

    issues_->clear();
    for (const auto& e : a.validation.errors) {
        auto* item = new QTreeWidgetItem(issues_, {issue_subject(e.field, document_->layout()), QString::fromStdString(e.message)});
        item->setToolTip(0, tr("Layout field %1").arg(QString::fromStdString(e.field)));
        item->setForeground(0, c.error);
        item->setToolTip(1, QString::fromStdString(e.message));
    }
    for (const auto& w : a.validation.warnings) {
        auto* item = new QTreeWidgetItem(issues_, {issue_subject(w.field, document_->layout()), QString::fromStdString(w.message)});
        item->setToolTip(0, tr("Layout field %1").arg(QString::fromStdString(w.field)));
        item->setForeground(0, c.warning);
        item->setToolTip(1, QString::fromStdString(w.message));
    }
    issues_->setVisible(issues_->topLevelItemCount() > 0);

    const double latency_ms = static_cast<double>(now_ns() - requested_at_ns_) / 1e6;
    timing_->setText(tr("Assessed in %1 ms (%2 ms after the edit)")
                         .arg(a.elapsed_ms, 0, 'f', 2).arg(latency_ms, 0, 'f', 1));
    timing_->setStyleSheet(QString("color: %1").arg(c.text_dim.name()));
    emit assessed(latency_ms);
}

}  // namespace meshwork::gui
