#include "gui/compare/compare_panel.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <cmath>

#include "gui/app/format.h"
#include "gui/app/theme.h"
#include "gui/compare/axis_link.h"
#include "gui/compare/comparison_table.h"
#include "gui/compare/memory_table.h"
#include "gui/compare/memory_timeline_chart.h"
#include "gui/compare/stats_table.h"
#include "gui/timeline/timeline_view.h"

namespace meshwork::gui {

ComparePanel::ComparePanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(8, 4, 8, 4);
    summary_ = new QLabel(this);
    summary_->setTextFormat(Qt::RichText);
    // The summary and the calibration note have a line of their own above the buttons and
    // wrap there: a long line must never make the window wider than the screen.
    summary_->setWordWrap(true);
    summary_->setContentsMargins(8, 4, 8, 0);
    auto* fit = new QToolButton(this);
    fit->setText(tr("Whole traces"));
    fit->setToolTip(tr("Show both traces whole (Home in either timeline)"));
    calibrate_ = new QToolButton(this);
    calibrate_->setText(tr("Calibrate && Re-predict"));
    calibrate_->setToolTip(
        tr("Fit the cluster's efficiencies and link latency to the measured trace, simulate "
           "the layout that ran again on the calibrated cluster and compare anew "
           "(meshwork-cli calibrate, simulate, compare)"));
    // Steps left out of both traces' per-step figures, as meshwork-cli's --warmup-steps.
    auto* warmup_label = new QLabel(tr("Warm-up steps"), this);
    warmup_ = new QSpinBox(this);
    warmup_->setRange(0, 100000);
    warmup_->setValue(profiler::kDefaultWarmupSteps);
    warmup_->setToolTip(tr("The first steps of each trace left out of its per-step figures (allocations, "
                           "first-touch page faults, a host still settling); one step is always kept "
                           "(meshwork-cli compare --warmup-steps)"));
    warmup_label->setBuddy(warmup_);
    auto* swap = new QToolButton(this);
    swap->setText(tr("Swap"));
    swap->setToolTip(tr("Swap which trace is the prediction and which the measurement"));
    auto* close = new QToolButton(this);
    close->setText(tr("Close Comparison"));
    close->setToolTip(tr("Back to the single timeline"));
    bar->addStretch(1);
    bar->addWidget(fit);
    bar->addWidget(warmup_label);
    bar->addWidget(warmup_);
    bar->addWidget(calibrate_);
    bar->addWidget(swap);
    bar->addWidget(close);
    layout->addWidget(summary_);
    layout->addLayout(bar);

    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(make_side(tr("predicted"), predicted_title_, predicted_view_));
    split->addWidget(make_side(tr("measured"), measured_title_, measured_view_));
    tabs_ = new QTabWidget(split);
    tabs_->setDocumentMode(true);
    table_ = new ComparisonTable(tabs_);
    predicted_stats_ = new StatsTable(tabs_);
    measured_stats_ = new StatsTable(tabs_);
    memory_ = new MemoryTable(tabs_);
    tabs_->addTab(table_, tr("Predicted vs measured"));
    memory_timeline_ = new MemoryTimelineChart(tabs_);
    tabs_->addTab(memory_, tr("Memory"));
    tabs_->addTab(memory_timeline_, tr("Memory timeline"));
    tabs_->addTab(predicted_stats_, tr("Stats: predicted"));
    tabs_->addTab(measured_stats_, tr("Stats: measured"));
    split->addWidget(tabs_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 3);
    split->setStretchFactor(2, 2);
    split->setSizes({330, 330, 260});
    layout->addWidget(split, 1);

    link_ = new AxisLink(predicted_view_, measured_view_, this);
    connect(fit, &QToolButton::clicked, predicted_view_, &TimelineView::fit_all);
    connect(close, &QToolButton::clicked, this, &ComparePanel::close_requested);
    connect(calibrate_, &QToolButton::clicked, this, [this] {
        if (data_) emit calibrate_requested(data_->predicted.path, data_->measured.path, warmup_->value());
    });
    connect(swap, &QToolButton::clicked, this, [this] {
        if (data_) emit swap_requested(data_->measured.path, data_->predicted.path, warmup_->value());
    });
    // Recomputed when the value settles (Enter, focus out, arrows), not on every digit typed.
    warmup_->setKeyboardTracking(false);
    connect(warmup_, &QSpinBox::valueChanged, this, [this](int steps) {
        if (data_ && steps != data_->warmup_steps) emit warmup_changed(data_->predicted.path, data_->measured.path, steps);
    });
}

QWidget* ComparePanel::make_side(const QString& role, QLabel*& title, TimelineView*& view) {
    auto* side = new QWidget(this);
    auto* v = new QVBoxLayout(side);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(0);
    title = new QLabel(side);
    title->setTextFormat(Qt::RichText);
    title->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // a long file name is cut, not widening
    title->setContentsMargins(10, 3, 10, 3);
    title->setText(role);
    view = new TimelineView(side);
    // Both always show a vertical scroll bar so that their track widths, and with them the
    // time under any x, are the same whatever the number of lanes.
    view->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
    v->addWidget(title);
    v->addWidget(view, 1);
    return side;
}

void ComparePanel::describe(QLabel* title, const QString& role, const ComparedTrace& side) {
    const auto& c = view_colours();
    const auto* t = side.timeline.get();
    title->setText(tr("<b>%1</b> &nbsp; %2 &nbsp;<span style='color:%3'>%4 · %5 events · %6 lanes · "
                      "0 at its %7</span>")
                       .arg(role, QFileInfo(side.path).fileName().toHtmlEscaped(), c.text_dim.name(),
                            side.source_name.isEmpty() ? tr("unknown source") : side.source_name.toHtmlEscaped(),
                            format_count(static_cast<double>(t->event_count())))
                       .arg(t->lane_count())
                       .arg(side.origin_label));
    title->setToolTip(side.path);
    title->setStyleSheet(QString("background: %1").arg(c.panel.name()));
}

void ComparePanel::set_data(std::shared_ptr<const ComparisonData> data) {
    data_ = std::move(data);
    if (!data_) return;
    predicted_view_->set_source(data_->predicted.timeline);
    measured_view_->set_source(data_->measured.timeline);
    predicted_view_->set_time_origin(data_->predicted.origin_ns);
    measured_view_->set_time_origin(data_->measured.origin_ns);
    link_->reset();
    {
        const QSignalBlocker quiet(warmup_);
        warmup_->setValue(data_->warmup_steps);
    }
    // The titles say what each trace is: a measured run on top (two measured runs, or a
    // Swap) is the reference the other is compared with, not a prediction.
    describe(predicted_title_, data_->predicted.simulated ? tr("Predicted") : tr("Reference (measured)"),
             data_->predicted);
    describe(measured_title_, data_->measured.simulated ? tr("Compared (simulated)") : tr("Measured"),
             data_->measured);
    table_->set_comparison(data_->comparison, data_->stages_from_layout);
    memory_->set_comparison(data_->memory);
    memory_timeline_->set_data(data_->memory_series, data_->memory);
    predicted_stats_->set_stats(data_->predicted.stats);
    measured_stats_->set_stats(data_->measured.stats);

    const auto& step = data_->comparison.categories.front();  // "step" comes first
    summary_->setText(
        tr("<b>Predicted beside measured</b> &nbsp; step %1 predicted, %2 measured (%3%4 %) · "
           "max |error| %5 %")
            .arg(format_duration_ns(step.predicted_s * 1e9),
                 format_duration_ns(step.measured_s * 1e9), step.error >= 0 ? "+" : "\u2212")
            .arg(std::fabs(100 * step.error), 0, 'f', 1)
            .arg(100 * data_->comparison.max_abs_error, 0, 'f', 1) +
        (data_->calibration_note.isEmpty()
             ? QString()
             : QString("<br><span style='color:%1'>%2</span>")
                   .arg(view_colours().text_dim.name(), data_->calibration_note.toHtmlEscaped())));
    summary_->setToolTip(
        data_->calibrated_cluster_path.isEmpty()
            ? QString()
            : tr("Calibrated cluster written to %1").arg(data_->calibrated_cluster_path));
}

bool ComparePanel::show_tab(const QString& name) {
    QWidget* page = name == "table"            ? static_cast<QWidget*>(table_)
                    : name == "memory"         ? static_cast<QWidget*>(memory_)
                    : name == "memory-timeline" ? static_cast<QWidget*>(memory_timeline_)
                    : name == "predicted-stats" ? static_cast<QWidget*>(predicted_stats_)
                    : name == "measured-stats"  ? static_cast<QWidget*>(measured_stats_)
                                                : nullptr;
    if (!page) return false;
    tabs_->setCurrentWidget(page);
    return true;
}

QString ComparePanel::summary_text() const { return summary_->text(); }

}  // namespace meshwork::gui
