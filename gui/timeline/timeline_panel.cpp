#include "gui/timeline/timeline_panel.h"

#include <QAction>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QStackedWidget>
#include <QTextBrowser>
#include <QToolButton>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "core/trace/collective.h"
#include "gui/app/format.h"
#include "gui/app/theme.h"
#include "gui/compare/compare_panel.h"
#include "gui/timeline/selection_stats_table.h"
#include "gui/timeline/time_ruler.h"
#include "gui/timeline/timeline_view.h"

namespace meshwork::gui {

TimelinePanel::TimelinePanel(QWidget* parent) : QWidget(parent) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    pages_ = new QStackedWidget(this);
    outer->addWidget(pages_);
    auto* single = new QWidget(pages_);
    compare_ = new ComparePanel(pages_);
    pages_->addWidget(single);
    pages_->addWidget(compare_);
    connect(compare_, &ComparePanel::close_requested, this, &TimelinePanel::close_comparison);

    auto* layout = new QVBoxLayout(single);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(8, 4, 8, 4);
    find_ = new QLineEdit(single);
    find_->setPlaceholderText(tr("Find event by name (Ctrl+F, Enter / F3 for the next)"));
    find_->setClearButtonEnabled(true);
    find_->setMinimumWidth(280);
    find_->setMaximumWidth(420);
    auto* fit = new QToolButton(single);
    fit->setText(tr("Whole trace"));
    fit->setToolTip(tr("Show the whole trace (Home)"));
    info_ = new QLabel(single);
    // The trace's name can be long: the label takes the room left and never widens the window.
    info_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    info_->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    bar->addWidget(find_);
    bar->addWidget(fit);
    bar->addWidget(info_, 1);
    layout->addLayout(bar);

    auto* split = new QSplitter(Qt::Vertical, single);
    view_ = new TimelineView(split);
    // Below the view: the event's details or the range's totals, and for a range the
    // statistics per event name.
    auto* below = new QWidget(split);
    auto* below_layout = new QVBoxLayout(below);
    below_layout->setContentsMargins(0, 0, 0, 0);
    below_layout->setSpacing(0);
    details_ = new QTextBrowser(below);
    details_->setPlaceholderText(tr("Click an event for its details; Shift+drag for the statistics of a range."));
    stats_ = new SelectionStatsTable(below);
    stats_->hide();
    // The find bar's matches, all of them (up to kMaxMatchesListed) with their count.
    matches_ = new QTreeWidget(below);
    matches_->setColumnCount(4);
    matches_->setHeaderLabels({tr("Start"), tr("Name"), tr("Lane"), tr("Duration")});
    matches_->setRootIsDecorated(false);
    matches_->setUniformRowHeights(true);
    matches_->header()->setSectionResizeMode(1, QHeaderView::Stretch);
    matches_->header()->setStretchLastSection(false);
    matches_->hide();
    below_layout->addWidget(details_, 1);
    below_layout->addWidget(stats_, 3);
    below_layout->addWidget(matches_, 3);
    split->addWidget(view_);
    split->addWidget(below);
    split->setStretchFactor(0, 5);
    split->setStretchFactor(1, 1);
    split->setSizes({600, 120});
    layout->addWidget(split, 1);

    auto* find_action = new QAction(this);
    find_action->setShortcuts({QKeySequence::Find});
    find_action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    addAction(find_action);
    connect(find_action, &QAction::triggered, this, [this] {
        find_->setFocus();
        find_->selectAll();
    });
    auto* next_action = new QAction(this);
    next_action->setShortcuts({QKeySequence::FindNext});
    next_action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    addAction(next_action);
    connect(next_action, &QAction::triggered, this, [this] { find_next(find_->text()); });
    connect(find_, &QLineEdit::returnPressed, this, [this] {
        if (find_->text() != listed_) list_matches(find_->text());
        find_next(find_->text());
    });
    connect(find_, &QLineEdit::textChanged, this, [this] { find_from_ns_ = -1; });
    connect(matches_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
        if (!item) return;
        const auto event = item->data(0, Qt::UserRole).toLongLong();
        find_from_ns_ = item->data(1, Qt::UserRole).toDouble();
        view_->select_event(event);
    });
    connect(fit, &QToolButton::clicked, view_, &TimelineView::fit_all);
    // After the paint, so that the count of items drawn is that of the frame on screen.
    connect(view_, &TimelineView::frame_painted, this, &TimelinePanel::update_info);
    connect(view_, &TimelineView::event_selected, this, &TimelinePanel::show_event);
    connect(view_, &TimelineView::range_selected, this, &TimelinePanel::show_range);
    connect(view_, &TimelineView::flow_found, this, [this](const TimelineEventDetails& from, const TimelineEventDetails& to) {
        const auto* source = view_->source();
        const bool launches = to.event.start_ns >= from.event.start_ns;
        const auto& other = to.event;
        details_->append(tr("<span style='color:%1'>%2 <b>%3</b> on %4 (%5 %6 · correlation %7)</span>")
                             .arg(view_colours().text_dim.name(), launches ? tr("flow →") : tr("flow ←"),
                                  QString::fromStdString(other.name).toHtmlEscaped(),
                                  QString::fromStdString(source->lane(to.lane).name).toHtmlEscaped(),
                                  launches ? tr("starts") : tr("started"),
                                  format_duration_ns(std::abs(static_cast<double>(other.start_ns - from.event.start_ns))) +
                                      (launches ? tr(" later") : tr(" before")))
                             .arg(from.event.correlation_id));
    });
    connect(view_, &TimelineView::peers_found, this, [this](const TimelineEventDetails& from, const PeerFlows& flows) {
        const auto* source = view_->source();
        const QString dim = view_colours().text_dim.name();
        auto where = [source](const TimelineEventDetails& d) {
            return tr("rank %1 · %2").arg(d.event.rank).arg(QString::fromStdString(source->lane(d.lane).name).toHtmlEscaped());
        };
        if (flows.kind == PeerFlows::Kind::PointToPoint) {
            const auto& peer = flows.partners.front();
            details_->append(tr("<span style='color:%1'>%2 <b>%3</b> on <b>%4</b> (ends %5 %6)</span>")
                                 .arg(dim, flows.selected_sends ? tr("sent to →") : tr("received from ←"),
                                      QString::fromStdString(peer.event.name).toHtmlEscaped(), where(peer),
                                      format_duration_ns(std::abs(static_cast<double>(peer.event.end_ns - from.event.end_ns))),
                                      peer.event.end_ns >= from.event.end_ns ? tr("later") : tr("before")));
            return;
        }
        QStringList ranks{QString::number(from.event.rank)};
        for (const auto& peer : flows.partners) ranks << QString::number(peer.event.rank);
        details_->append(tr("<span style='color:%1'>the same call on %2 ranks (%3); last to enter: <b>rank %4</b>, "
                            "%5 after the first</span>")
                             .arg(dim)
                             .arg(ranks.size())
                             .arg(ranks.join(", "))
                             .arg(flows.last_rank)
                             .arg(format_duration_ns(static_cast<double>(flows.last_after_first_ns))));
    });
    connect(view_, &TimelineView::selection_cleared, this, [this] {
        details_->clear();
        stats_->hide();
        matches_->hide();
        listed_.clear();
        details_->setMaximumHeight(QWIDGETSIZE_MAX);
    });
}

void TimelinePanel::set_source(std::shared_ptr<const TimelineSource> source, const QString& title) {
    title_ = title;
    close_comparison();
    find_from_ns_ = -1;
    // What the panel said about the previous trace (an event, a range's statistics, the
    // matches of a search) does not hold for this one.
    details_->clear();
    details_->setMaximumHeight(QWIDGETSIZE_MAX);
    stats_->hide();
    matches_->hide();
    listed_.clear();
    view_->set_source(std::move(source));
    update_info();
}

void TimelinePanel::show_comparison(std::shared_ptr<const ComparisonData> comparison) {
    compare_->set_data(std::move(comparison));
    pages_->setCurrentWidget(compare_);
}

void TimelinePanel::close_comparison() { pages_->setCurrentIndex(0); }

bool TimelinePanel::comparing() const { return pages_->currentWidget() == compare_; }

bool TimelinePanel::find_next(const QString& text) {
    const auto* source = view_->source();
    if (!source || text.isEmpty()) return false;
    const auto from = static_cast<std::int64_t>(find_from_ns_ < 0 ? static_cast<double>(source->begin_ns()) - 1 : find_from_ns_);
    std::int64_t event = source->find_next(text.toStdString(), from);
    if (event < 0 && find_from_ns_ >= 0) event = source->find_next(text.toStdString(), source->begin_ns() - 1);  // wrap
    if (event < 0) {
        details_->setHtml(tr("<i>No event named like “%1”.</i>").arg(text.toHtmlEscaped()));
        return false;
    }
    find_from_ns_ = static_cast<double>(source->details(event).event.start_ns);
    view_->select_event(event);
    return true;
}

int TimelinePanel::list_matches(const QString& text) {
    const auto* source = view_->source();
    matches_->clear();
    listed_ = text;
    if (!source || text.isEmpty()) {
        matches_->hide();
        return 0;
    }
    const auto found = source->find_all(text.toStdString(), kMaxMatchesListed);
    for (const std::int64_t id : found.events) {
        const auto d = source->details(id);
        const auto& e = d.event;
        auto* item = new QTreeWidgetItem(
            matches_, {ruler_label(static_cast<double>(e.start_ns - source->begin_ns()), 1.0), QString::fromStdString(e.name),
                       tr("rank %1 · %2").arg(e.rank).arg(QString::fromStdString(source->lane(d.lane).name)),
                       format_duration_ns(static_cast<double>(e.end_ns - e.start_ns))});
        item->setData(0, Qt::UserRole, QVariant::fromValue<qlonglong>(id));
        item->setData(1, Qt::UserRole, static_cast<double>(e.start_ns));
        item->setTextAlignment(3, Qt::AlignRight | Qt::AlignVCenter);
    }
    matches_->setHeaderLabels({found.total > static_cast<std::int64_t>(found.events.size())
                                   ? tr("Start (first %1 of %2 matches)").arg(found.events.size()).arg(found.total)
                                   : tr("Start (%n match(es))", "", static_cast<int>(found.total)),
                               tr("Name"), tr("Lane"), tr("Duration")});
    matches_->header()->resizeSections(QHeaderView::ResizeToContents);
    matches_->setVisible(found.total > 0);
    return static_cast<int>(found.total);
}

void TimelinePanel::show_event(const TimelineEventDetails& d) {
    stats_->hide();
    details_->setMaximumHeight(matches_->isVisible() ? 4 * details_->fontMetrics().lineSpacing() + 12 : QWIDGETSIZE_MAX);
    const auto* source = view_->source();
    const auto& e = d.event;
    QString html = tr("<b>%1</b> &nbsp; %2 on rank %3, %4<br>")
                       .arg(QString::fromStdString(e.name).toHtmlEscaped(), QString::fromStdString(to_string(e.kind)))
                       .arg(e.rank).arg(QString::fromStdString(source->lane(d.lane).name));
    html += tr("start %1 · end %2 · duration <b>%3</b>")
                .arg(ruler_label(static_cast<double>(e.start_ns - source->begin_ns()), 1.0),
                     ruler_label(static_cast<double>(e.end_ns - source->begin_ns()), 1.0),
                     format_duration_ns(static_cast<double>(e.end_ns - e.start_ns)));
    if (e.bytes > 0) {
        const double seconds = static_cast<double>(e.end_ns - e.start_ns) / 1e9;
        html += tr(" · %1").arg(format_bytes(static_cast<double>(e.bytes)));
        // A receive's span starts when it is posted and holds the wait for its sender: bytes
        // over that span would count waiting as transfer, so no rate is shown for it.
        if (e.collective == Collective::Recv) html += tr(" (its span includes waiting for the sender: no transfer rate)");
        else if (seconds > 0) html += tr(" (%1/s)").arg(format_bytes(static_cast<double>(e.bytes) / seconds));
    }
    if (e.flops > 0) html += tr(" · %1 FLOP").arg(format_count(e.flops));
    QStringList where;
    if (e.step >= 0) where << tr("step %1").arg(e.step);
    if (e.micro_batch >= 0) where << tr("micro-batch %1").arg(e.micro_batch);
    if (e.layer >= 0) where << tr("layer %1").arg(e.layer);
    if (!where.isEmpty()) html += "<br>" + where.join(" · ");
    details_->setHtml(html);
}

void TimelinePanel::show_range(int lane_first, int lane_last, double t0, double t1) {
    const auto* source = view_->source();
    // Rows of the view: a collapsed group counts all of its lanes.
    int lanes = 0;
    const auto stats = view_->range_stats(lane_first, lane_last, t0, t1, &lanes);
    const double span = t1 - t0;
    QString html = tr("<b>Range %1 – %2</b> (%3) over %n lane(s): ", "", lanes)
                       .arg(format_duration_ns(t0 - static_cast<double>(source->begin_ns())),
                            format_duration_ns(t1 - static_cast<double>(source->begin_ns())),
                            format_duration_ns(span));
    html += tr("%1 events<br>").arg(format_count(static_cast<double>(stats.events)));
    const EventKind kinds[] = {EventKind::Compute, EventKind::Communication, EventKind::Memcpy,
                               EventKind::Memset, EventKind::Marker, EventKind::Idle};
    QStringList parts;
    for (EventKind k : kinds) {
        const auto busy = static_cast<double>(stats.busy_ns[static_cast<int>(k)]);
        if (busy <= 0) continue;
        // Busy time per lane as a share of the range: how occupied those streams were (clipped
        // to the range; the table below counts whole events).
        parts << tr("%1 %2 (%3 % of lane time)")
                     .arg(QString::fromStdString(to_string(k)), format_duration_ns(busy))
                     .arg(100.0 * busy / (span * std::max(1, lanes)), 0, 'f', 1);
    }
    html += parts.join(" · ");
    if (!stats.names.empty()) html += tr("<br><i>Busy times within the range; the table: whole events that overlap it</i>");
    details_->setHtml(html);
    matches_->hide();
    listed_.clear();
    // The totals take a few lines; the table per name the rest.
    details_->setMaximumHeight(5 * details_->fontMetrics().lineSpacing() + 12);
    stats_->set_stats(stats.names);
    stats_->setVisible(!stats.names.empty());
}

void TimelinePanel::update_info() {
    const auto* source = view_->source();
    if (!source) {
        info_->clear();
        return;
    }
    const QString text = tr("%1 · %2 events · %3 lanes · %4 items drawn")
                             .arg(title_, format_count(static_cast<double>(source->event_count())))
                             .arg(source->lane_count())
                             .arg(view_->last_frame_items());
    if (info_->toolTip() != text) info_->setToolTip(text);
    info_->setText(info_->fontMetrics().elidedText(text, Qt::ElideLeft, std::max(0, info_->width())));
    // Called after every frame: restyle only when the theme changed.
    const QString style = QString("color: %1").arg(view_colours().text_dim.name());
    if (info_->styleSheet() != style) info_->setStyleSheet(style);
}

}  // namespace meshwork::gui
