#include "gui/timeline/timeline_view.h"

#include <QCursor>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "gui/app/format.h"
#include "gui/app/theme.h"
#include "gui/timeline/time_ruler.h"
#include "gui/timeline/timeline_colours.h"

namespace meshwork::gui {

namespace {
constexpr double kMinNsPerPx = 0.01;      // deepest zoom: 100 px per ns
constexpr int kScrollUnits = 1'000'000;   // horizontal scroll bar resolution
constexpr double kZoomStep = 1.25;        // per wheel notch or key press
}  // namespace

TimelineView::TimelineView(QWidget* parent) : QAbstractScrollArea(parent) {
    viewport()->setMouseTracking(true);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    setFocusPolicy(Qt::StrongFocus);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    const QFontMetrics fm(font());
    lane_h_ = std::max(20, fm.height() + 8);
    ruler_h_ = fm.height() + 14;
    header_w_ = std::max(160, fm.horizontalAdvance("rank 0000  comm:tp  ") + 24);
    connect(horizontalScrollBar(), &QScrollBar::valueChanged, this, [this](int value) {
        if (syncing_scrollbars_ || !source_) return;
        const double span = extent_end() - extent_begin();
        t0_ = extent_begin() + span * value / kScrollUnits;
        fitted_ = false;
        changed_window();
    });
}

void TimelineView::set_source(std::shared_ptr<const TimelineSource> source) {
    source_ = std::move(source);
    origin_ns_.reset();  // both belong to the previous source
    extent_ns_.reset();
    items_key_ = {};
    labels_.clear();
    selected_event_.reset();
    selected_details_.reset();
    selected_range_.reset();
    lane_offset_px_ = 0;
    // A trace with step numbers gets a step row under the time axis.
    update_ruler_height();
    groups_.build(source_.get());
    current_group_ = groups_.grouped() ? 0 : -1;
    fit_all();
}

double TimelineView::track_width() const { return std::max(1, viewport()->width() - header_w_); }

double TimelineView::extent_begin() const {
    if (extent_ns_) return extent_ns_->first;
    return source_ ? static_cast<double>(source_->begin_ns()) : 0.0;
}

double TimelineView::extent_end() const {
    if (extent_ns_) return extent_ns_->second;
    return source_ ? static_cast<double>(source_->end_ns()) : 0.0;
}

double TimelineView::time_origin() const {
    if (origin_ns_) return *origin_ns_;
    return source_ ? static_cast<double>(source_->begin_ns()) : 0.0;
}

void TimelineView::set_time_origin(std::optional<double> origin_ns) {
    origin_ns_ = origin_ns;
    viewport()->update();
}

void TimelineView::set_time_extent(std::optional<std::pair<double, double>> extent_ns) {
    extent_ns_ = extent_ns;
    if (fitted_) fit_all();
    else changed_window();
}

std::pair<double, double> TimelineView::visible_window() const {
    return {t0_, t0_ + track_width() * ns_per_px_};
}

void TimelineView::set_visible_window(double t0, double t1) {
    if (t1 <= t0) return;
    fitted_ = false;
    t0_ = t0;
    ns_per_px_ = std::max(kMinNsPerPx, (t1 - t0) / track_width());
    changed_window();
}

void TimelineView::zoom(double factor, double anchor_x) {
    fitted_ = false;
    const double anchor_t = t_of(anchor_x);
    ns_per_px_ = std::max(kMinNsPerPx, ns_per_px_ / factor);
    t0_ = anchor_t - (anchor_x - header_w_) * ns_per_px_;
    changed_window();
}

void TimelineView::pan_pixels(double dx) {
    fitted_ = false;
    t0_ -= dx * ns_per_px_;
    changed_window();
}

void TimelineView::fit_all() {
    fitted_ = true;
    if (!has_events()) {
        t0_ = 0;
        ns_per_px_ = 1000;
    } else {
        const double span = extent_end() - extent_begin();
        // A small margin on both sides so that the first and last events are not clipped.
        ns_per_px_ = std::max(kMinNsPerPx, span * 1.02 / track_width());
        t0_ = extent_begin() - span * 0.01;
    }
    changed_window();
}

void TimelineView::clamp_window() {
    if (!has_events()) return;
    const double begin = extent_begin();
    const double end = extent_end();
    const double span = end - begin;
    const double max_npp = span * 1.1 / track_width();
    ns_per_px_ = std::clamp(ns_per_px_, kMinNsPerPx, std::max(kMinNsPerPx, max_npp));
    const double window = track_width() * ns_per_px_;
    t0_ = std::clamp(t0_, begin - window * 0.5, end - window * 0.5);
}

void TimelineView::sync_scrollbars() {
    syncing_scrollbars_ = true;
    auto* h = horizontalScrollBar();
    if (has_events()) {
        const double span = extent_end() - extent_begin();
        const double window = track_width() * ns_per_px_;
        const int page = static_cast<int>(std::clamp(window / span, 0.0, 1.0) * kScrollUnits);
        h->setPageStep(std::max(1, page));
        h->setSingleStep(std::max(1, page / 20));
        h->setRange(0, std::max(0, kScrollUnits - page));
        h->setValue(static_cast<int>((t0_ - extent_begin()) / span * kScrollUnits));
    } else {
        h->setRange(0, 0);
    }
    auto* v = verticalScrollBar();
    const int content = groups_.row_count() * lane_h_;
    const int visible = viewport()->height() - ruler_h_;
    v->setPageStep(std::max(1, visible));
    v->setSingleStep(lane_h_);
    v->setRange(0, std::max(0, content - visible));
    lane_offset_px_ = std::min(lane_offset_px_, v->maximum());
    v->setValue(lane_offset_px_);
    syncing_scrollbars_ = false;
}

void TimelineView::changed_window() {
    clamp_window();
    sync_scrollbars();
    viewport()->update();
    const auto [a, b] = visible_window();
    emit window_changed(a, b);
}

void TimelineView::scrollContentsBy(int, int) {
    if (syncing_scrollbars_) return;
    lane_offset_px_ = verticalScrollBar()->value();
    viewport()->update();
}

void TimelineView::resizeEvent(QResizeEvent* e) {
    QAbstractScrollArea::resizeEvent(e);
    if (fitted_) fit_all();
    else changed_window();
}

int TimelineView::row_at(double y) const {
    if (!source_ || y < ruler_h_) return -1;
    const int row = static_cast<int>((y - ruler_h_ + lane_offset_px_) / lane_h_);
    return row < groups_.row_count() ? row : -1;
}

const TimelineView::DrawnItem* TimelineView::item_at(QPointF pos) const {
    for (const auto& lane : drawn_) {
        for (const auto& d : lane) {
            // Thin items get a 2 px grace on each side, so they can be hit at all.
            if (d.rect.adjusted(-2, 0, 2, 0).contains(pos)) return &d;
        }
    }
    return nullptr;
}

void TimelineView::paintEvent(QPaintEvent*) {
    const QSize size = viewport()->size();
    prepare_lanes(size);  // the source's queries, before any painting
    QPainter p(viewport());
    paint_frame(p, size);
    emit frame_painted();
}

void TimelineView::render_frame(QPainter& p, QSize size) {
    prepare_lanes(size);
    paint_frame(p, size);
}

void TimelineView::prepare_lanes(QSize size) {
    if (!source_ || source_->lane_count() == 0) return;
    const double t1 = t0_ + (size.width() - header_w_) * ns_per_px_;
    const auto pixels = static_cast<std::size_t>(std::max(1, size.width() - header_w_));
    // Only the rows on screen are asked for: a 1,024-rank trace costs what its visible
    // rows cost, and a collapsed group one summary row.
    const int first_row = std::max(0, lane_offset_px_ / lane_h_);
    const int last_row = std::min(groups_.row_count() - 1, (lane_offset_px_ + size.height() - ruler_h_) / lane_h_);
    const auto q0 = static_cast<std::int64_t>(std::floor(t0_)), q1 = static_cast<std::int64_t>(std::ceil(t1));
    const ItemsKey key{source_.get(), q0, q1, pixels, first_row, last_row, groups_.generation()};
    if (key == items_key_) return;  // a repaint of the same window draws the same items
    items_key_ = key;
    lane_items_.resize(static_cast<std::size_t>(std::max(0, last_row - first_row + 1)));
    for (int row = first_row; row <= last_row; ++row) {
        const auto& r = groups_.rows()[static_cast<std::size_t>(row)];
        auto& items = lane_items_[static_cast<std::size_t>(row - first_row)];
        items.clear();
        if (r.kind == LaneRow::Kind::Lane) {
            source_->query(r.lane, q0, q1, pixels, items);
            ++source_queries_;
        } else if (r.kind == LaneRow::Kind::Summary) {
            // A few of the group's ranks drawn over each other: where any of them is busy.
            // Folded at twice the width of a lane's (a summary shows the shape, not the
            // kernels), which halves what the densest streams cost to read.
            for (int lane : groups_.summary_lanes(r.group)) {
                source_->query(lane, q0, q1, std::max<std::size_t>(1, pixels / 2), summary_scratch_);
                ++source_queries_;
                items.insert(items.end(), summary_scratch_.begin(), summary_scratch_.end());
            }
        }
    }
}

QString TimelineView::empty_message() {
    return tr("No trace open.\nOpen one with File → Open Trace… (Ctrl+Shift+O) or drop trace files on the "
              "window; Run Layout… (F5) records one.");
}

void TimelineView::paint_frame(QPainter& p, QSize size) {
    const auto& c = view_colours();
    p.fillRect(QRect(QPoint(0, 0), size), c.background);
    if (!source_ || source_->lane_count() == 0) {
        p.setPen(c.text_dim);
        p.drawText(QRect(QPoint(0, 0), size), Qt::AlignCenter | Qt::TextWordWrap, empty_message());
        drawn_.clear();
        last_frame_items_ = 0;
        return;
    }
    paint_lanes(p, size);
    paint_selection(p, size);
    paint_headers(p, size);
    paint_ruler(p, size);
}

void TimelineView::paint_lanes(QPainter& p, QSize size) {
    const auto& c = view_colours();
    // The lanes and items prepare_lanes() fetched for this frame.
    const int first_row = items_key_.first_row;
    const int last_row = items_key_.last_row;
    const auto visible = static_cast<std::size_t>(std::max(0, last_row - first_row + 1));
    drawn_.resize(visible);
    for (auto& d : drawn_) d.clear();
    last_frame_items_ = 0;
    const QFontMetrics fm(font());
    p.setClipRect(QRect(header_w_, ruler_h_, size.width() - header_w_, size.height() - ruler_h_));
    const auto& rows = groups_.rows();
    for (int row_index = first_row; row_index <= last_row; ++row_index) {
        const double y = ruler_h_ + row_index * lane_h_ - lane_offset_px_;
        const auto& row_info = rows[static_cast<std::size_t>(row_index)];
        if (row_info.kind == LaneRow::Kind::Header) {
            paint_group_header(p, row_info, y);
            continue;
        }
        const bool summary = row_info.kind == LaneRow::Kind::Summary;
        const int rank = summary ? 0 : source_->lane(row_info.lane).rank;
        const QColor& lane_colour = summary ? c.panel : rank % 2 ? c.panel_alt : c.background;
        p.fillRect(QRectF(header_w_, y, size.width() - header_w_, lane_h_), lane_colour);
        const auto& items = lane_items_[static_cast<std::size_t>(row_index - first_row)];
        auto& drawn = drawn_[static_cast<std::size_t>(row_index - first_row)];
        drawn.reserve(items.size());
        const int top = static_cast<int>(y) + 2, h = lane_h_ - 4;
        const QRgb lane_bg = lane_colour.rgb();
        // The items' band is composed as one row of pixels, copied to the band's height and
        // drawn as one image: tens of thousands of 2-px cells at full zoom-out cost a few
        // stores each instead of a fillRect call each (most of a frame's time before).
        QRgb* row = band_row(size.width() - header_w_, h);
        const int row_w = size.width() - header_w_;
        std::fill(row, row + row_w, lane_bg);
        auto fill_row = [row, row_w, this](int x0, int x1, QRgb colour) {
            const int a = std::clamp(x0 - header_w_, 0, row_w), b = std::clamp(x1 - header_w_, 0, row_w);
            std::fill(row + a, row + std::max(b, std::min(a + 1, row_w)), colour);
        };
        labels_to_draw_.clear();
        for (const auto& item : items) {
            // Whole pixels: no blurred seams between cells.
            const int x0 = static_cast<int>(std::max<double>(header_w_, std::floor(x_of(static_cast<double>(item.start_ns)))));
            const int x1 = static_cast<int>(std::min<double>(size.width(), std::ceil(x_of(static_cast<double>(item.end_ns)))));
            const QRect r(x0, top, std::max(1, x1 - x0), h);
            drawn.push_back({QRectF(r), item});
            if (item.count > 1) {
                // A folded run: the family colour, as strong as the run was busy, so that a
                // dense stretch reads as a density plot; its count when there is room.
                const double span = static_cast<double>(std::max<std::int64_t>(1, item.end_ns - item.start_ns));
                const int busy = static_cast<int>(256 * std::clamp(static_cast<double>(item.busy_ns) / span, 0.15, 1.0));
                const QRgb full = colours_.folded(item.kind).rgb();
                auto mix = [busy](int a, int b) { return a + (((b - a) * busy) >> 8); };
                const QRgb fill = qRgb(mix(qRed(lane_bg), qRed(full)), mix(qGreen(lane_bg), qGreen(full)),
                                       mix(qBlue(lane_bg), qBlue(full)));
                fill_row(x0, x1, fill);
                if (r.width() > 40) labels_to_draw_.push_back({r, &item, QColor(fill)});
                continue;
            }
            const QColor& fill = colours_.item(item.kind, item.layer);
            fill_row(x0, x1, fill.rgb());
            if (r.width() > 30) {
                labels_to_draw_.push_back({r, &item, fill});
            } else if (r.width() > 3) {
                fill_row(r.right(), r.right() + 1, fill.darker(140).rgb());
            }
        }
        for (int line = 1; line < h; ++line) std::copy(row, row + row_w, reinterpret_cast<QRgb*>(band_.scanLine(line)));
        p.drawImage(QPoint(header_w_, top), band_, QRect(0, 0, row_w, h));
        for (const auto& pending : labels_to_draw_) {
            if (pending.item->count > 1) {
                const QString label = QString::number(pending.item->count);
                if (fm.horizontalAdvance(label) + 8 < pending.rect.width()) {
                    p.setPen(text_colour_on(pending.fill));
                    p.drawText(pending.rect, Qt::AlignCenter, label);
                }
            } else {
                paint_label(p, pending.rect, pending.item->name_id, pending.fill);
            }
        }
        last_frame_items_ += items.size();
        // A firmer line between ranks than between the streams of one rank.
        const bool rank_ends = summary || row_index + 1 >= groups_.row_count() ||
                               rows[static_cast<std::size_t>(row_index + 1)].kind != LaneRow::Kind::Lane ||
                               source_->lane(rows[static_cast<std::size_t>(row_index + 1)].lane).rank != rank;
        p.fillRect(QRectF(header_w_, y + lane_h_ - 1, size.width() - header_w_, 1),
                   rank_ends ? c.border : c.panel);
    }
    p.setClipping(false);
}

QRgb* TimelineView::band_row(int width, int height) {
    if (band_.width() < width || band_.height() < height) {
        band_ = QImage(std::max(width, band_.width()), std::max(height, band_.height()), QImage::Format_RGB32);
    }
    return reinterpret_cast<QRgb*>(band_.scanLine(0));
}

void TimelineView::paint_label(QPainter& p, const QRect& r, std::uint32_t name_id, const QColor& fill) {
    // Names repeat (a few hundred kernels, millions of launches): lay each out once.
    auto it = labels_.find(name_id);
    if (it == labels_.end()) {
        Label label;
        label.text = QString::fromStdString(source_->name(name_id));
        label.width = QFontMetrics(font()).horizontalAdvance(label.text);
        label.static_text.setText(label.text);
        label.static_text.setTextFormat(Qt::PlainText);
        label.static_text.prepare(QTransform(), font());
        it = labels_.insert(name_id, label);
    }
    const int room = r.width() - 6;
    const int y = r.top() + (r.height() - QFontMetrics(font()).height()) / 2;
    p.setPen(text_colour_on(fill));
    if (it->width <= room) {
        p.drawStaticText(r.left() + 3, y, it->static_text);
    } else {
        const QString text = QFontMetrics(font()).elidedText(it->text, Qt::ElideRight, room);
        if (text.size() > 1) p.drawText(r.adjusted(3, 0, -3, 0), Qt::AlignLeft | Qt::AlignVCenter, text);
    }
}

void TimelineView::paint_selection(QPainter& p, QSize size) {
    const auto& c = view_colours();
    p.setClipRect(QRect(header_w_, ruler_h_, size.width() - header_w_, size.height() - ruler_h_));
    paint_step_lines(p, size);
    flags_.paint_lines(p, QRectF(header_w_, ruler_h_, size.width() - header_w_, size.height() - ruler_h_),
                       [this](double t) { return x_of(t); }, c.warning);
    if (selected_range_) {
        const double x0 = x_of(selected_range_->first), x1 = x_of(selected_range_->second);
        const double y0 = ruler_h_ + selected_lanes_.first * lane_h_ - lane_offset_px_;
        const double y1 = ruler_h_ + (selected_lanes_.second + 1) * lane_h_ - lane_offset_px_;
        QColor fill = c.accent;
        fill.setAlpha(40);
        p.fillRect(QRectF(x0, y0, x1 - x0, y1 - y0), fill);
        p.setPen(QPen(c.accent, 1, Qt::DashLine));
        // The outline only: the brush left by the lanes' painting would fill the box opaque
        // and hide the events it measures.
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRectF(x0, y0, x1 - x0, y1 - y0));
    }
    paint_flow(p);
    if (selected_details_ && groups_.row_of_lane(selected_details_->lane) >= 0) {
        const auto& e = selected_details_->event;
        const double y = ruler_h_ + groups_.row_of_lane(selected_details_->lane) * lane_h_ - lane_offset_px_;
        const double x0 = x_of(static_cast<double>(e.start_ns)), x1 = x_of(static_cast<double>(e.end_ns));
        p.setPen(QPen(current_theme() == Theme::Dark ? Qt::white : Qt::black, 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRectF(x0, y + 1, std::max(2.0, x1 - x0), lane_h_ - 2));
    }
    p.setClipping(false);
}

void TimelineView::paint_headers(QPainter& p, QSize size) {
    const auto& c = view_colours();
    p.fillRect(QRect(0, ruler_h_, header_w_, size.height() - ruler_h_), c.panel);
    const int first_row = std::max(0, lane_offset_px_ / lane_h_);
    const int last_row = std::min(groups_.row_count() - 1, (lane_offset_px_ + size.height() - ruler_h_) / lane_h_);
    p.setClipRect(QRect(0, ruler_h_, header_w_, size.height() - ruler_h_));
    QFont bold = font();
    bold.setBold(true);
    const auto& rows = groups_.rows();
    // Lanes of a group sit one step in from its header.
    const int indent = 10 + 10 * groups_.grouping().depth_count;
    for (int row = first_row; row <= last_row; ++row) {
        const auto& row_info = rows[static_cast<std::size_t>(row)];
        const double y = ruler_h_ + row * lane_h_ - lane_offset_px_;
        if (row_info.kind != LaneRow::Kind::Lane) {
            paint_group_header(p, row_info, y);
            continue;
        }
        const int lane = row_info.lane;
        const auto& info = source_->lane(lane);
        const bool first_of_rank = row == 0 || rows[static_cast<std::size_t>(row - 1)].kind != LaneRow::Kind::Lane ||
                                   source_->lane(rows[static_cast<std::size_t>(row - 1)].lane).rank != info.rank;
        QRectF r(indent, y, header_w_ - indent - 6, lane_h_);
        if (first_of_rank) {
            p.setFont(bold);
            p.setPen(c.text);
            const QString rank_label = tr("rank %1").arg(info.rank);
            p.drawText(r, Qt::AlignLeft | Qt::AlignVCenter, rank_label);
            // The lane's name takes the room the rank label leaves.
            r.setLeft(r.left() + QFontMetricsF(bold).horizontalAdvance(rank_label) + 6);
        }
        p.setFont(font());
        p.setPen(c.text_dim);
        // Imported lanes can have long names ("thread 4037 (python3.8)"): elide the end rather
        // than clip the start, so the kind and the number stay readable.
        const QString name = QFontMetricsF(font()).elidedText(QString::fromStdString(info.name), Qt::ElideRight, r.width());
        p.drawText(r, Qt::AlignRight | Qt::AlignVCenter, name);
        const bool rank_ends = row + 1 >= groups_.row_count() || rows[static_cast<std::size_t>(row + 1)].kind != LaneRow::Kind::Lane ||
                               source_->lane(rows[static_cast<std::size_t>(row + 1)].lane).rank != info.rank;
        if (rank_ends) p.fillRect(QRectF(0, y + lane_h_ - 1, header_w_, 1), c.border);
    }
    p.setClipping(false);
    p.fillRect(QRect(header_w_ - 1, ruler_h_, 1, size.height() - ruler_h_), c.border);
}

void TimelineView::paint_ruler(QPainter& p, QSize size) {
    const auto& c = view_colours();
    p.fillRect(QRect(0, 0, size.width(), ruler_h_), c.panel);
    p.fillRect(QRect(0, ruler_h_ - 1, size.width(), 1), c.border);
    paint_step_row(p, size);
    const int axis_h = ruler_h_ - step_row_h_;  // the time axis above the step row
    const QFontMetrics fm(font());
    const double step = ruler_step_ns(ns_per_px_, fm.horizontalAdvance("000.00 ms") + 24);
    const double origin = time_origin();
    const double t1 = t0_ + (size.width() - header_w_) * ns_per_px_;
    // Ticks are relative to the time origin, labelled in the unit of the step; before the
    // origin (a comparison's step start) they are negative.
    double t = origin + std::ceil((t0_ - origin) / step) * step;
    p.setPen(c.text_dim);
    for (; t <= t1; t += step) {
        const double x = x_of(t);
        p.fillRect(QRectF(x, axis_h - 8, 1, 7), c.text_dim);
        for (int minor = 1; minor < 5; ++minor) {
            const double mx = x_of(t + step * minor / 5);
            if (mx < size.width()) p.fillRect(QRectF(mx, axis_h - 4, 1, 3), c.border);
        }
        p.drawText(QRectF(x + 3, 2, step / ns_per_px_ - 6, axis_h - 10), Qt::AlignLeft | Qt::AlignVCenter,
                   ruler_label(t - origin, step));
    }
    flags_.paint_ruler(p, QRectF(header_w_, 0, size.width() - header_w_, axis_h), [this](double at) { return x_of(at); },
                       origin, c.warning, c.text);
    // Header corner: the window span.
    p.fillRect(QRect(0, 0, header_w_, ruler_h_ - 1), c.panel);
    p.setPen(c.text);
    p.drawText(QRect(10, 0, header_w_ - 16, ruler_h_), Qt::AlignLeft | Qt::AlignVCenter,
               tr("window %1").arg(format_duration_ns((size.width() - header_w_) * ns_per_px_)));
    p.fillRect(QRect(header_w_ - 1, 0, 1, ruler_h_), c.border);
}

void TimelineView::find_flow_partner() {
    // Once per selection and frame window: the lanes' items of this frame are what is searched.
    const std::int64_t event = selected_event_.value_or(-1);
    if (flow_checked_ && flow_event_ == event && flow_items_key_ == items_key_) return;
    flow_checked_ = true;
    flow_event_ = event;
    flow_items_key_ = items_key_;
    flow_partner_.reset();
    peer_flows_ = {};
    if (!selected_details_) return;
    const auto& selected = selected_details_->event;
    // Its launch or kernel (one correlation id, the same rank) and, for a communication event,
    // its partners on other ranks (peer_flows.h): each with its own budget of details() calls.
    const bool correlated = selected.correlation_id != 0;
    const bool communicates = selected.kind == EventKind::Communication;
    if (!correlated && !communicates) return;
    int correlation_lookups = 0, peer_lookups = 0;
    std::vector<TimelineEventDetails> candidates;
    const auto& rows = groups_.rows();
    for (std::size_t r = 0; r < drawn_.size(); ++r) {
        const auto row_index = static_cast<std::size_t>(items_key_.first_row) + r;
        if (row_index >= rows.size()) break;
        const auto& row = rows[row_index];
        if (row.kind != LaneRow::Kind::Lane || row.lane == selected_details_->lane) continue;
        const bool same_rank = source_->lane(row.lane).rank == selected.rank;
        if (same_rank && (!correlated || flow_partner_)) continue;
        if (!same_rank && !communicates) continue;
        for (const auto& d : drawn_[r]) {
            if (d.item.count != 1 || (selected_event_ && d.item.event == *selected_event_)) continue;
            if (same_rank) {
                if (++correlation_lookups > kMaxFlowLookups) break;
                auto other = source_->details(d.item.event);
                if (other.event.correlation_id == selected.correlation_id) {
                    flow_partner_ = std::move(other);
                    emit flow_found(*selected_details_, *flow_partner_);
                    break;
                }
            } else {
                if (d.item.kind != EventKind::Communication || !may_be_peer(selected, source_->name(d.item.name_id))) continue;
                if (++peer_lookups > kMaxFlowLookups) break;
                candidates.push_back(source_->details(d.item.event));
            }
        }
    }
    if (!candidates.empty()) {
        peer_flows_ = match_peers(*selected_details_, candidates, source_->mesh());
        if (peer_flows_.kind != PeerFlows::Kind::None) emit peers_found(*selected_details_, peer_flows_);
    }
}

void TimelineView::paint_flow(QPainter& p) {
    if (!selected_details_) return;
    find_flow_partner();
    const QColor colour = current_theme() == Theme::Dark ? QColor(255, 214, 102) : QColor(200, 90, 0);
    const auto y_of_row = [this](int row) { return ruler_h_ + row * lane_h_ - lane_offset_px_ + lane_h_ / 2.0; };
    p.save();
    p.setRenderHint(QPainter::Antialiasing);
    const auto arrow = [&p, &colour](QPointF a, QPointF b) {
        p.setPen(QPen(colour, 1.5));
        p.drawLine(a, b);
        const QPointF d = b - a;
        const double length = std::hypot(d.x(), d.y());
        if (length > 1) {
            const QPointF u = d / length, n(-u.y(), u.x());
            QPolygonF head({b, b - 7 * u + 3.5 * n, b - 7 * u - 3.5 * n});
            p.setBrush(colour);
            p.drawPolygon(head);
        }
    };
    const int row_a = groups_.row_of_lane(selected_details_->lane);
    if (flow_partner_ && row_a >= 0) {
        const int row_b = groups_.row_of_lane(flow_partner_->lane);
        if (row_b >= 0) {
            // From the earlier (the launch) to the later (the kernel it launched).
            const TraceEvent* from = &selected_details_->event;
            const TraceEvent* to = &flow_partner_->event;
            int from_row = row_a, to_row = row_b;
            if (to->start_ns < from->start_ns) {
                std::swap(from, to);
                std::swap(from_row, to_row);
            }
            arrow(QPointF(x_of(static_cast<double>(from->start_ns)), y_of_row(from_row)),
                  QPointF(x_of(static_cast<double>(to->start_ns)), y_of_row(to_row)));
        }
    }
    if (peer_flows_.kind == PeerFlows::Kind::PointToPoint && row_a >= 0) {
        // From the send's start (the data leaves) to the receive's end (it has arrived).
        const auto& partner = peer_flows_.partners.front();
        const int row_b = groups_.row_of_lane(partner.lane);
        if (row_b >= 0) {
            const bool sending = peer_flows_.selected_sends;
            const TraceEvent& send = sending ? selected_details_->event : partner.event;
            const TraceEvent& recv = sending ? partner.event : selected_details_->event;
            arrow(QPointF(x_of(static_cast<double>(send.start_ns)), y_of_row(sending ? row_a : row_b)),
                  QPointF(x_of(static_cast<double>(recv.end_ns)), y_of_row(sending ? row_b : row_a)));
        }
    } else if (peer_flows_.kind == PeerFlows::Kind::Collective && row_a >= 0) {
        // The ranks of one call: a line from the selected call to each rank's, dashed, and a
        // ring on the rank that entered last (the one the others waited for).
        const QPointF a(x_of(static_cast<double>(selected_details_->event.start_ns)), y_of_row(row_a));
        p.setPen(QPen(colour, 1.5, Qt::DashLine));
        p.setBrush(Qt::NoBrush);
        for (const auto& partner : peer_flows_.partners) {
            const int row_b = groups_.row_of_lane(partner.lane);
            if (row_b < 0) continue;
            const QPointF b(x_of(static_cast<double>(partner.event.start_ns)), y_of_row(row_b));
            p.drawLine(a, b);
            if (partner.event.rank == peer_flows_.last_rank) p.drawEllipse(b, 5, 5);
        }
        if (selected_details_->event.rank == peer_flows_.last_rank) p.drawEllipse(a, 5, 5);
    }
    p.restore();
}

void TimelineView::paint_step_row(QPainter& p, QSize size) {
    if (step_row_h_ == 0 || !source_) return;
    const auto& c = view_colours();
    const int top = ruler_h_ - step_row_h_;
    const double left = header_w_, right = size.width();
    const QFontMetrics fm(font());
    p.save();
    p.setClipRect(QRectF(left, top, right - left, step_row_h_));
    const auto& steps = source_->steps();
    const auto [a, b] = visible_window();
    // The first step that ends after the window's start (steps are in time order).
    auto it = std::partition_point(steps.begin(), steps.end(),
                                   [a = a](const TimelineStep& st) { return static_cast<double>(st.end_ns) <= a; });
    for (; it != steps.end() && static_cast<double>(it->start_ns) < b; ++it) {
        const double x0 = std::max(left, x_of(static_cast<double>(it->start_ns)));
        const double x1 = std::min(right, x_of(static_cast<double>(it->end_ns)));
        QColor band = c.accent;
        band.setAlpha(it->step % 2 ? 45 : 90);
        const QRectF r(x0, top + 1, std::max(1.0, x1 - x0), step_row_h_ - 3);
        p.fillRect(r, band);
        p.fillRect(QRectF(x_of(static_cast<double>(it->start_ns)), top, 2, step_row_h_), c.accent);  // the tick
        const QString label = tr("step %1").arg(it->step);
        if (r.width() > fm.horizontalAdvance(label) + 8) {
            p.setPen(c.text);
            p.drawText(r.adjusted(4, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter, label);
        }
    }
    p.restore();
    // The row's name in the header column.
    p.setPen(c.text_dim);
    p.drawText(QRectF(10, top, header_w_ - 16, step_row_h_), Qt::AlignLeft | Qt::AlignVCenter, tr("steps"));
}

void TimelineView::paint_step_lines(QPainter& p, QSize size) {
    if (step_row_h_ == 0 || !source_) return;
    // A faint line across the lanes at each step's start, from the tick on the ruler.
    QColor line = view_colours().accent;
    line.setAlpha(70);
    const auto [a, b] = visible_window();
    for (const auto& st : source_->steps()) {
        const auto t = static_cast<double>(st.start_ns);
        if (t < a || t > b) continue;
        p.fillRect(QRectF(x_of(t), ruler_h_, 1, size.height() - ruler_h_), line);
    }
}

QString TimelineView::item_tooltip(const DrawnItem& d) const {
    const auto& it = d.item;
    if (it.count > 1) {
        return tr("<b>%1 events</b> folded (too narrow to draw apart)<br>busy %2 of %5<br>%3 – %4<br>"
                  "click to zoom into them")
            .arg(it.count).arg(format_duration_ns(static_cast<double>(it.busy_ns)))
            .arg(format_duration_ns(static_cast<double>(it.start_ns) - time_origin()))
            .arg(format_duration_ns(static_cast<double>(it.end_ns) - time_origin()))
            .arg(format_duration_ns(static_cast<double>(it.end_ns - it.start_ns)));
    }
    const auto det = source_->details(it.event);
    const auto& e = det.event;
    QString html = tr("<b>%1</b><br>%2 · %3<br>start %4 · duration <b>%5</b>")
                       .arg(QString::fromStdString(e.name).toHtmlEscaped(),
                            QString::fromStdString(to_string(e.kind)),
                            tr("rank %1 %2").arg(e.rank).arg(QString::fromStdString(source_->lane(det.lane).name)),
                            format_duration_ns(static_cast<double>(e.start_ns) - time_origin()),
                            format_duration_ns(static_cast<double>(e.end_ns - e.start_ns)));
    if (e.bytes > 0) html += tr("<br>%1").arg(format_bytes(static_cast<double>(e.bytes)));
    if (e.flops > 0) html += tr("<br>%1 FLOP").arg(format_count(e.flops));
    QStringList where;
    if (e.step >= 0) where << tr("step %1").arg(e.step);
    if (e.micro_batch >= 0) where << tr("micro-batch %1").arg(e.micro_batch);
    if (e.layer >= 0) where << tr("layer %1").arg(e.layer);
    if (!where.isEmpty()) html += "<br>" + where.join(" · ");
    return html;
}

bool TimelineView::viewportEvent(QEvent* e) {
    if (e->type() == QEvent::ToolTip && source_) {
        auto* help = static_cast<QHelpEvent*>(e);
        if (const auto* d = item_at(help->pos())) {
            QToolTip::showText(help->globalPos(), item_tooltip(*d), viewport(), d->rect.toRect());
        } else {
            QToolTip::hideText();
        }
        return true;
    }
    return QAbstractScrollArea::viewportEvent(e);
}

void TimelineView::wheelEvent(QWheelEvent* e) {
    const QPointF pos = e->position();
    const QPoint delta = e->angleDelta();
    if ((e->modifiers() & Qt::ShiftModifier) || pos.x() < header_w_) {
        verticalScrollBar()->setValue(verticalScrollBar()->value() - (delta.y() ? delta.y() : delta.x()) / 120 * lane_h_ * 3);
    } else if (delta.x() != 0 && std::abs(delta.x()) > std::abs(delta.y())) {
        pan_pixels(delta.x() / 2.0);
    } else if (delta.y() != 0) {
        zoom(std::pow(kZoomStep, delta.y() / 120.0), pos.x());
    }
    e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton) return;
    press_pos_ = e->pos();
    press_t0_ = t0_;
    dragging_ = true;
    box_selecting_ = (e->modifiers() & Qt::ShiftModifier) && e->pos().x() >= header_w_;
    if (box_selecting_) viewport()->setCursor(Qt::IBeamCursor);
    else viewport()->setCursor(Qt::ClosedHandCursor);
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
    if (!dragging_ || !source_) return;
    if (box_selecting_) {
        const double a = t_of(std::min(press_pos_.x(), e->pos().x()));
        const double b = t_of(std::max(press_pos_.x(), e->pos().x()));
        int l0 = row_at(std::min(press_pos_.y(), e->pos().y()));
        int l1 = row_at(std::max(press_pos_.y(), e->pos().y()));
        if (l0 < 0) l0 = 0;
        if (l1 < 0) l1 = groups_.row_count() - 1;
        selected_range_ = {a, b};
        selected_lanes_ = {l0, l1};
        viewport()->update();
        return;
    }
    fitted_ = false;
    t0_ = press_t0_ - (e->pos().x() - press_pos_.x()) * ns_per_px_;
    const int dy = e->pos().y() - press_pos_.y();
    if (std::abs(dy) > lane_h_) {
        verticalScrollBar()->setValue(verticalScrollBar()->value() - dy);
        press_pos_.setY(e->pos().y());
    }
    changed_window();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton || !dragging_) return;
    dragging_ = false;
    viewport()->unsetCursor();
    const bool click = (e->pos() - press_pos_).manhattanLength() < 4;
    if (box_selecting_) {
        box_selecting_ = false;
        if (!click && selected_range_) {
            emit range_selected(selected_lanes_.first, selected_lanes_.second, selected_range_->first,
                                selected_range_->second);
            return;
        }
        selected_range_.reset();
    }
    if (!click) return;
    if (const int row = row_at(e->pos().y()); row >= 0) {
        // A group's header row toggles it; a summary row's name expands it.
        const auto& r = groups_.rows()[static_cast<std::size_t>(row)];
        if (r.kind == LaneRow::Kind::Header || (r.kind == LaneRow::Kind::Summary && e->pos().x() < header_w_)) {
            set_current_group(r.group);
            toggle_group(r.group);
            return;
        }
    }
    const auto* d = item_at(e->pos());
    if (d && d->item.count == 1) {
        selected_event_ = d->item.event;
        selected_details_ = source_->details(d->item.event);
        emit event_selected(*selected_details_);
    } else if (d) {
        // Clicking a folded run zooms into it: the natural next step in a dense region.
        set_visible_window(static_cast<double>(d->item.start_ns), static_cast<double>(d->item.end_ns));
    } else {
        selected_event_.reset();
        selected_details_.reset();
        selected_range_.reset();
        emit selection_cleared();
    }
    viewport()->update();
}

void TimelineView::update_ruler_height() {
    const QFontMetrics fm(font());
    step_row_h_ = steps_shown_ && source_ && !source_->steps().empty() ? fm.height() + 4 : 0;
    ruler_h_ = fm.height() + 14 + step_row_h_;
}

void TimelineView::set_steps_shown(bool shown) {
    steps_shown_ = shown;
    update_ruler_height();
    after_rows_changed();
    viewport()->update();
}

void TimelineView::select_range(double t0_ns, double t1_ns) {
    if (!source_ || groups_.row_count() == 0 || t1_ns <= t0_ns) return;
    selected_range_ = {t0_ns, t1_ns};
    selected_lanes_ = {0, groups_.row_count() - 1};
    viewport()->update();
    emit range_selected(selected_lanes_.first, selected_lanes_.second, t0_ns, t1_ns);
}

void TimelineView::select_event(std::int64_t event) {
    if (!source_) return;
    selected_event_ = event;
    selected_details_ = source_->details(event);
    const auto& ev = selected_details_->event;
    const auto [a, b] = visible_window();
    const double dur = static_cast<double>(ev.end_ns - ev.start_ns);
    // Keep the zoom when the event is visible and wide enough, else frame it.
    if (static_cast<double>(ev.start_ns) < a || static_cast<double>(ev.end_ns) > b || dur / ns_per_px_ < 4) {
        const double pad = std::max(dur * 4, 1000.0);
        set_visible_window(static_cast<double>(ev.start_ns) - pad, static_cast<double>(ev.end_ns) + pad);
    }
    // An event inside a collapsed group opens the group.
    const int row = groups_.reveal_lane(selected_details_->lane);
    after_rows_changed();
    const int lane_top = std::max(0, row) * lane_h_;
    auto* v = verticalScrollBar();
    if (lane_top < v->value() || lane_top + lane_h_ > v->value() + viewport()->height() - ruler_h_) {
        v->setValue(lane_top - (viewport()->height() - ruler_h_) / 2);
    }
    emit event_selected(*selected_details_);
    viewport()->update();
}

void TimelineView::toggle_flag(double t_ns) {
    flags_.toggle(t_ns, 4 * ns_per_px_);
    viewport()->update();
}

void TimelineView::clear_flags() {
    flags_.clear();
    viewport()->update();
}

void TimelineView::keyPressEvent(QKeyEvent* e) {
    const double centre = header_w_ + track_width() / 2;
    const double pan = track_width() / 8;
    switch (e->key()) {
        case Qt::Key_W: case Qt::Key_Plus: case Qt::Key_Equal: zoom(kZoomStep, centre); break;
        case Qt::Key_S: case Qt::Key_Minus: zoom(1 / kZoomStep, centre); break;
        case Qt::Key_A: case Qt::Key_Left: pan_pixels(pan); break;
        case Qt::Key_D: case Qt::Key_Right: pan_pixels(-pan); break;
        case Qt::Key_Up:
        case Qt::Key_Down: {
            const int dir = e->key() == Qt::Key_Up ? -1 : 1;
            if ((e->modifiers() & Qt::ControlModifier) && groups_.grouped()) {
                // The previous or next group header among the rows shown.
                const int from = current_group_ >= 0 ? groups_.row_of_group(current_group_) : first_visible_row();
                for (int row = from + dir; row >= 0 && row < groups_.row_count(); row += dir) {
                    const auto& r = groups_.rows()[static_cast<std::size_t>(row)];
                    if (r.kind == LaneRow::Kind::Header) {
                        set_current_group(r.group);
                        break;
                    }
                }
            } else {
                verticalScrollBar()->setValue(verticalScrollBar()->value() + dir * lane_h_);
            }
            break;
        }
        case Qt::Key_Home: case Qt::Key_0: fit_all(); break;
        case Qt::Key_F:
            if (selected_range_) set_visible_window(selected_range_->first, selected_range_->second);
            else if (selected_details_)
                set_visible_window(static_cast<double>(selected_details_->event.start_ns),
                                   static_cast<double>(selected_details_->event.end_ns));
            break;
        case Qt::Key_Space: case Qt::Key_Return: case Qt::Key_Enter:
            if (current_group_ < 0) {
                QAbstractScrollArea::keyPressEvent(e);
                return;
            }
            toggle_group(current_group_);
            break;
        case Qt::Key_BracketLeft: set_group_collapsed(current_group_, true); break;
        case Qt::Key_BracketRight: set_group_collapsed(current_group_, false); break;
        case Qt::Key_BraceLeft: set_all_groups_collapsed(true); break;
        case Qt::Key_BraceRight: set_all_groups_collapsed(false); break;
        case Qt::Key_Backspace: groups_back(); break;
        case Qt::Key_M: {
            if (e->modifiers() & Qt::ShiftModifier) {
                clear_flags();
                break;
            }
            // At the cursor when it is over the lanes, else at the middle of the window.
            const QPoint at = viewport()->mapFromGlobal(QCursor::pos());
            const bool over_track = viewport()->rect().contains(at) && at.x() >= header_w_;
            toggle_flag(t_of(over_track ? at.x() : centre));
            break;
        }
        case Qt::Key_Escape:
            selected_event_.reset();
            selected_details_.reset();
            selected_range_.reset();
            emit selection_cleared();
            viewport()->update();
            break;
        default: QAbstractScrollArea::keyPressEvent(e); return;
    }
    e->accept();
}

void TimelineView::after_rows_changed() {
    if (current_group_ >= static_cast<int>(groups_.grouping().groups.size())) current_group_ = -1;
    sync_scrollbars();
    viewport()->update();
}

void TimelineView::toggle_group(int group) {
    if (group < 0) return;
    set_group_collapsed(group, !groups_.collapsed(group));
}

void TimelineView::set_group_collapsed(int group, bool collapsed) {
    if (group < 0 || group >= static_cast<int>(groups_.grouping().groups.size())) return;
    // Rows above the group's header do not change: the header stays where it was on screen.
    groups_.set_collapsed(group, collapsed);
    after_rows_changed();
}

void TimelineView::set_all_groups_collapsed(bool collapsed) {
    if (!groups_.grouped()) return;
    // Keep the current group's header in view, the anchor a reader was looking at.
    groups_.remember();
    groups_.set_all_collapsed(collapsed);
    after_rows_changed();
    if (current_group_ >= 0) set_current_group(current_group_);
}

bool TimelineView::show_ranks(const std::vector<int>& ranks) {
    if (!source_) return false;
    if (groups_.grouped()) {
        groups_.remember();
        if (!groups_.show_only_ranks(ranks)) {
            groups_.back();  // nothing changed: nothing to step back from
            return false;
        }
    }
    after_rows_changed();
    // The first row of the first of `ranks` in display order, with its group header above.
    int first = -1;
    for (int row = 0; row < groups_.row_count() && first < 0; ++row) {
        const auto& r = groups_.rows()[static_cast<std::size_t>(row)];
        if (r.kind != LaneRow::Kind::Lane) continue;
        const int rank = source_->lane(r.lane).rank;
        if (std::find(ranks.begin(), ranks.end(), rank) != ranks.end()) first = row;
    }
    if (first < 0) return false;
    // Its group's headers on top when the rank's lanes still fit below them.
    int top = first;
    if (const int group = groups_.rows()[static_cast<std::size_t>(first)].group; group >= 0) {
        top = groups_.row_of_group(group);
        while (top > 0 && groups_.rows()[static_cast<std::size_t>(top - 1)].kind == LaneRow::Kind::Header) --top;
        const int visible_rows = std::max(1, (viewport()->height() - ruler_h_) / lane_h_);
        if (first - top > visible_rows - 6) top = first;
    }
    scroll_to_row(top);
    if (const auto& r = groups_.rows()[static_cast<std::size_t>(first)]; r.group >= 0) current_group_ = r.group;
    viewport()->update();
    return true;
}

bool TimelineView::groups_back() {
    if (!groups_.back()) return false;
    after_rows_changed();
    if (current_group_ >= 0) set_current_group(current_group_);
    return true;
}

void TimelineView::set_current_group(int group) {
    current_group_ = group;
    const int row = groups_.row_of_group(group);
    const int visible_rows = std::max(1, (viewport()->height() - ruler_h_) / lane_h_);
    if (row >= 0 && (row < first_visible_row() || row >= first_visible_row() + visible_rows - 1)) {
        scroll_to_row(std::max(0, row - visible_rows / 3));
    }
    viewport()->update();
}

void TimelineView::scroll_to_row(int row) { verticalScrollBar()->setValue(row * lane_h_); }

TimelineRangeStats TimelineView::range_stats(int row_first, int row_last, double t0_ns, double t1_ns, int* lanes) const {
    TimelineRangeStats total;
    if (!source_) return total;
    const auto of_rows = groups_.lanes_of_rows(row_first, row_last);
    if (lanes) *lanes = static_cast<int>(of_rows.size());
    // The source adds up runs of consecutive lanes; grouped rows are runs in most meshes.
    std::unordered_map<std::string, std::size_t> name_index;
    for (std::size_t i = 0; i < of_rows.size();) {
        std::size_t j = i;
        while (j + 1 < of_rows.size() && of_rows[j + 1] == of_rows[j] + 1) ++j;
        const auto part = source_->range_stats(of_rows[i], of_rows[j], static_cast<std::int64_t>(t0_ns),
                                               static_cast<std::int64_t>(t1_ns));
        total.events += part.events;
        for (int k = 0; k < 6; ++k) total.busy_ns[k] += part.busy_ns[k];
        for (const auto& n : part.names) {
            auto [it, inserted] = name_index.try_emplace(n.name, total.names.size());
            if (inserted) {
                total.names.push_back(n);
                continue;
            }
            auto& into = total.names[it->second];
            into.count += n.count;
            into.total_ns += n.total_ns;
            into.min_ns = std::min(into.min_ns, n.min_ns);
            into.max_ns = std::max(into.max_ns, n.max_ns);
        }
        i = j + 1;
    }
    return total;
}

void TimelineView::paint_group_header(QPainter& p, const LaneRow& row, double y) {
    const auto& c = view_colours();
    const auto& group = groups_.grouping().groups[static_cast<std::size_t>(row.group)];
    const QRectF band(0, y, viewport()->width(), lane_h_);
    if (row.kind == LaneRow::Kind::Summary) {
        // The lane area is drawn by paint_lanes; here the name column only.
        const QRectF r(22 + 10 * row.depth, y, header_w_ - 28 - 10 * row.depth, lane_h_);
        p.setPen(c.text_dim);
        p.drawText(r, Qt::AlignLeft | Qt::AlignVCenter,
                   tr("%1 ranks · %2 lanes").arg(groups_.rank_count(row.group)).arg(groups_.lane_count(row.group)));
        p.fillRect(QRectF(0, y + lane_h_ - 1, band.width(), 1), c.border);
        return;
    }
    const bool current = row.group == current_group_;
    QColor fill = c.panel;
    if (current && hasFocus()) fill = c.accent.darker(current_theme() == Theme::Dark ? 250 : 110);
    p.fillRect(band, fill);
    p.fillRect(QRectF(0, y, band.width(), 1), c.border);
    const double x = 8 + 10 * row.depth;
    // A triangle: pointing right when collapsed, down when open.
    const double cy = y + lane_h_ / 2.0;
    QPolygonF tri;
    if (groups_.collapsed(row.group)) tri << QPointF(x, cy - 4) << QPointF(x + 7, cy) << QPointF(x, cy + 4);
    else tri << QPointF(x - 1, cy - 3) << QPointF(x + 7, cy - 3) << QPointF(x + 3, cy + 3);
    p.setPen(Qt::NoPen);
    p.setBrush(c.text);
    p.setRenderHint(QPainter::Antialiasing, true);
    p.drawPolygon(tri);
    p.setRenderHint(QPainter::Antialiasing, false);
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(c.text);
    const auto ranks = groups_.grouping().ranks_of(group);
    const auto [lo, hi] = std::minmax_element(ranks.begin(), ranks.end());
    const QString label = group.axis == Axis::Pp ? tr("pipeline stage %1").arg(group.coordinate)
                                                 : tr("dp replica %1").arg(group.coordinate);
    p.drawText(QRectF(x + 12, y, header_w_ - x - 14, lane_h_), Qt::AlignLeft | Qt::AlignVCenter, label);
    p.setFont(font());
    p.setPen(c.text_dim);
    // In the lane area: the ranks it holds, where the eye lands after the name.
    QString text = tr("ranks %1 – %2").arg(*lo).arg(*hi);
    if (groups_.collapsed(row.group)) {
        QStringList drawn;
        for (int lane : groups_.summary_lanes(row.group)) drawn << QString::number(source_->lane(lane).rank);
        text += (drawn.size() == 1 ? tr("  ·  collapsed; the row below draws the compute of rank %1")
                                   : tr("  ·  collapsed; the row below draws the compute of ranks %1"))
                    .arg(drawn.join(tr(" and ")));
    }
    p.drawText(QRectF(header_w_ + 8, y, band.width() - header_w_ - 16, lane_h_), Qt::AlignLeft | Qt::AlignVCenter, text);
}

}  // namespace meshwork::gui
