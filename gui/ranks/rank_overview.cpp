#include "gui/ranks/rank_overview.h"

#include <QFontMetrics>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "gui/app/format.h"
#include "gui/app/theme.h"

namespace meshwork::gui {

namespace {
constexpr double kMaxCellWidth = 96;
constexpr int kMaxRowHeight = 22;
constexpr int kMinRowHeight = 2;
constexpr int kMargin = 8;

QString seconds_text(double s) { return format_duration_ns(s * 1e9); }
}  // namespace

RankOverview::RankOverview(QWidget* parent) : QAbstractScrollArea(parent) {
    viewport()->setMouseTracking(true);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    setFocusPolicy(Qt::StrongFocus);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setAccessibleName(tr("Rank overview"));
    const QFontMetrics fm(font());
    header_h_ = fm.height() + 12;
    group_w_ = fm.horizontalAdvance("pp 000") + 14;
    rank_w_ = fm.horizontalAdvance("rank 00000") + 12;
    legend_w_ = fm.horizontalAdvance("000.00 ms") + 44;
}

void RankOverview::set_data(std::shared_ptr<const RankOverviewData> overview) {
    data_ = std::move(overview);
    current_.reset();
    offset_px_ = 0;
    if (rows() > 0 && steps() > 0) current_ = Cell{0, 0};
    set_metric(metric_);
}

void RankOverview::set_metric(RankMetric metric) {
    metric_ = metric;
    scale_ = data_ ? HeatScale::over(data_->matrix, metric_) : HeatScale{};
    rebuild_image();
    update_layout();
    viewport()->update();
}

int RankOverview::rows() const { return data_ ? static_cast<int>(data_->grouping.ranks.size()) : 0; }
int RankOverview::steps() const { return data_ ? static_cast<int>(data_->matrix.steps.size()) : 0; }

int RankOverview::left_width() const {
    const int depth = data_ ? data_->grouping.depth_count : 0;
    return kMargin + depth * group_w_ + rank_w_;
}

double RankOverview::cell_width() const {
    const double room = viewport()->width() - left_width() - legend_w_;
    return steps() > 0 ? std::clamp(room / steps(), 1.0, kMaxCellWidth) : 0.0;
}

int RankOverview::rows_room() const { return std::max(1, viewport()->height() - header_h_ - kMargin); }

bool RankOverview::folded() const { return rows() * kMinRowHeight > rows_room(); }

double RankOverview::row_px() const {
    if (rows() == 0) return kMaxRowHeight;
    // Whole pixels while every rank gets two or more; below that the rows fold (fit the
    // height exactly, several ranks a pixel row).
    if (folded()) return static_cast<double>(rows_room()) / rows();
    return std::min(kMaxRowHeight, rows_room() / rows());
}

int RankOverview::row_height() const { return std::max(1, static_cast<int>(row_px())); }

int RankOverview::y_of_row(int row) const {
    return header_h_ + static_cast<int>(std::floor(row * row_px())) - offset_px_;
}

int RankOverview::row_at_y(int y) const {
    return std::clamp(static_cast<int>(std::floor((y - header_h_ + offset_px_) / row_px())), 0, std::max(0, rows() - 1));
}

std::pair<int, int> RankOverview::rows_of_pixel(int y) const {
    if (!folded()) {
        const int row = row_at_y(y);
        return {row, row + 1};
    }
    const int py = y - header_h_;
    const int first = static_cast<int>(std::floor(py * static_cast<double>(rows()) / rows_room()));
    const int last = static_cast<int>(std::floor((py + 1) * static_cast<double>(rows()) / rows_room()));
    return {std::clamp(first, 0, rows() - 1), std::clamp(std::max(last, first + 1), 1, rows())};
}

int RankOverview::slowest_row(int first, int last, int step_index) const {
    int best = first;
    double best_v = -1;
    for (int row = first; row < last; ++row) {
        const auto& cell = data_->cell(row, step_index);
        if (cell.present && metric_seconds(cell, metric_) > best_v) {
            best_v = metric_seconds(cell, metric_);
            best = row;
        }
    }
    return best;
}

void RankOverview::update_layout() {
    auto* v = verticalScrollBar();
    const int content = folded() ? rows_room() : rows() * row_height();
    const int page = rows_room();
    v->setRange(0, std::max(0, content - page));
    v->setPageStep(page);
    v->setSingleStep(row_height());
    offset_px_ = std::clamp(offset_px_, 0, v->maximum());
}

void RankOverview::rebuild_image() {
    if (rows() == 0 || steps() == 0) {
        cells_ = QImage();
        return;
    }
    const QRgb absent = view_colours().panel.rgb();
    // Unfolded: one pixel per cell, scaled when drawn. Folded: one pixel row per screen
    // row, each the slowest of the ranks it covers, so that one slow rank among thousands
    // still shows.
    const int pixel_rows = folded() ? rows_room() : rows();
    cells_ = QImage(steps(), pixel_rows, QImage::Format_RGB32);
    for (int y = 0; y < pixel_rows; ++y) {
        auto* line = reinterpret_cast<QRgb*>(cells_.scanLine(y));
        const auto [first, last] = folded() ? rows_of_pixel(header_h_ + y) : std::pair<int, int>{y, y + 1};
        for (int s = 0; s < steps(); ++s) {
            const auto& cell = data_->cell(slowest_row(first, last, s), s);
            line[s] = cell.present ? scale_.colour(metric_seconds(cell, metric_)).rgb() : absent;
        }
    }
    image_folded_ = folded();
    image_rows_room_ = rows_room();
}

void RankOverview::resizeEvent(QResizeEvent* e) {
    QAbstractScrollArea::resizeEvent(e);
    if (folded() || image_folded_) rebuild_image();  // its rows follow the height
    update_layout();
}

void RankOverview::changeEvent(QEvent* e) {
    QAbstractScrollArea::changeEvent(e);
    if (e->type() == QEvent::PaletteChange) {
        rebuild_image();
        viewport()->update();
    }
}

void RankOverview::scrollContentsBy(int, int) {
    offset_px_ = verticalScrollBar()->value();
    viewport()->update();
}

QRect RankOverview::cell_rect(Cell cell) const {
    const double w = cell_width();
    const int x0 = left_width() + static_cast<int>(std::floor(cell.step_index * w));
    const int x1 = left_width() + static_cast<int>(std::floor((cell.step_index + 1) * w));
    const int y0 = y_of_row(cell.row);
    return {x0, y0, std::max(1, x1 - x0), std::max(1, y_of_row(cell.row + 1) - y0)};
}

std::optional<RankOverview::Cell> RankOverview::cell_at(QPoint pos) const {
    if (rows() == 0 || steps() == 0 || pos.y() < header_h_ || pos.x() < left_width()) return std::nullopt;
    if (pos.y() - header_h_ + offset_px_ >= (folded() ? rows_room() : rows() * row_height())) return std::nullopt;
    const int step = static_cast<int>((pos.x() - left_width()) / cell_width());
    if (step >= steps()) return std::nullopt;
    // A folded pixel row stands for its slowest rank: what is seen is what is clicked.
    const auto [first, last] = rows_of_pixel(pos.y());
    return Cell{slowest_row(first, last, step), step};
}

QRect RankOverview::group_rect(int group) const {
    const auto& g = data_->grouping.groups[static_cast<std::size_t>(group)];
    const int y0 = y_of_row(g.first_row);
    return {kMargin + g.depth * group_w_, y0, group_w_, y_of_row(g.last_row + 1) - y0};
}

int RankOverview::group_at(QPoint pos) const {
    if (!data_ || pos.y() < header_h_) return -1;
    for (int g = 0; g < static_cast<int>(data_->grouping.groups.size()); ++g) {
        if (group_rect(g).contains(pos)) return g;
    }
    return -1;
}

void RankOverview::set_current(Cell cell) {
    if (rows() == 0 || steps() == 0) return;
    cell.row = std::clamp(cell.row, 0, rows() - 1);
    cell.step_index = std::clamp(cell.step_index, 0, steps() - 1);
    const bool changed = current_ != cell;
    current_ = cell;
    // Scroll the row into view.
    const int h = row_height();
    const int page = rows_room();
    auto* v = verticalScrollBar();
    if (cell.row * h < v->value()) v->setValue(cell.row * h);
    else if ((cell.row + 1) * h > v->value() + page) v->setValue((cell.row + 1) * h - page);
    viewport()->update();
    if (changed) emit current_changed();
}

void RankOverview::open_cell(Cell cell, bool whole_group) {
    const auto& g = data_->grouping;
    const int step = data_->matrix.steps[static_cast<std::size_t>(cell.step_index)];
    QList<int> ranks;
    const int group = whole_group ? g.innermost_group_of_row(cell.row) : -1;
    if (group >= 0) {
        for (int r : g.ranks_of(g.groups[static_cast<std::size_t>(group)])) ranks << r;
    } else {
        ranks << g.ranks[static_cast<std::size_t>(cell.row)];
    }
    emit ranks_requested(ranks, step);
}

void RankOverview::mousePressEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton || !data_) return;
    if (const auto cell = cell_at(e->pos())) {
        set_current(*cell);
        open_cell(*cell, (e->modifiers() & Qt::ShiftModifier) != 0);
        return;
    }
    if (const int group = group_at(e->pos()); group >= 0) {
        QList<int> ranks;
        for (int r : data_->grouping.ranks_of(data_->grouping.groups[static_cast<std::size_t>(group)])) ranks << r;
        emit ranks_requested(ranks, -1);
        return;
    }
    // The rank column: that rank, every step.
    const int x_rank = kMargin + data_->grouping.depth_count * group_w_;
    if (e->pos().x() >= x_rank && e->pos().x() < left_width() && e->pos().y() >= header_h_) {
        const int row = row_at_y(e->pos().y());
        if (row < rows()) emit ranks_requested({data_->grouping.ranks[static_cast<std::size_t>(row)]}, -1);
    }
}

void RankOverview::keyPressEvent(QKeyEvent* e) {
    if (!current_) {
        QAbstractScrollArea::keyPressEvent(e);
        return;
    }
    Cell c = *current_;
    const int page_rows = std::max(1, static_cast<int>(rows_room() / row_px()) - 1);
    const bool ctrl = (e->modifiers() & Qt::ControlModifier) != 0;
    switch (e->key()) {
        case Qt::Key_Up: --c.row; break;
        case Qt::Key_Down: ++c.row; break;
        case Qt::Key_Left: --c.step_index; break;
        case Qt::Key_Right: ++c.step_index; break;
        case Qt::Key_PageUp: c.row -= page_rows; break;
        case Qt::Key_PageDown: c.row += page_rows; break;
        case Qt::Key_Home: (ctrl ? c.row : c.step_index) = 0; break;
        case Qt::Key_End: (ctrl ? c.row = rows() - 1 : c.step_index = steps() - 1); break;
        case Qt::Key_Return: case Qt::Key_Enter:
            open_cell(c, (e->modifiers() & Qt::ShiftModifier) != 0);
            e->accept();
            return;
        default: QAbstractScrollArea::keyPressEvent(e); return;
    }
    set_current(c);
    e->accept();
}

QString RankOverview::cell_tooltip(Cell cell) const {
    const auto& g = data_->grouping;
    const int rank = g.ranks[static_cast<std::size_t>(cell.row)];
    const auto& v = data_->cell(cell.row, cell.step_index);
    QString html = tr("<b>rank %1</b> · step %2").arg(rank).arg(data_->matrix.steps[static_cast<std::size_t>(cell.step_index)]);
    if (folded()) {
        const auto [first, last] = rows_of_pixel(cell_rect(cell).center().y());
        if (last - first > 1) {
            html += tr("<br><i>the slowest of %1 ranks on this pixel row (ranks %2 – %3 in this order)</i>")
                        .arg(last - first)
                        .arg(g.ranks[static_cast<std::size_t>(first)])
                        .arg(g.ranks[static_cast<std::size_t>(last - 1)]);
        }
    }
    if (g.by_mesh && cell.row < g.unplaced_first_row) {
        const auto& c = g.coords[static_cast<std::size_t>(cell.row)];
        html += tr("<br>pp %1 · dp %2 · cp %3 · tp %4").arg(c.pp).arg(c.dp).arg(c.cp).arg(c.tp);
    }
    if (!v.present) return html + tr("<br><i>no device events in this step</i>");
    html += tr("<br>step time <b>%1</b><br>compute %2<br>exposed communication %3")
                .arg(seconds_text(v.step_s), seconds_text(v.compute_s), seconds_text(v.exposed_comm_s));
    if (v.collective_wait_s > 0) {
        html += tr("<br>collective wait %1").arg(seconds_text(v.collective_wait_s));
        if (v.waited_for_rank >= 0) html += tr(", mostly for rank %1").arg(v.waited_for_rank);
    }
    html += tr("<br><i>click: this rank's lanes at this step</i>");
    return html;
}

QString RankOverview::group_tooltip(int group) const {
    const auto& g = data_->grouping.groups[static_cast<std::size_t>(group)];
    const auto ranks = data_->grouping.ranks_of(g);
    const auto [lo, hi] = std::minmax_element(ranks.begin(), ranks.end());
    return tr("<b>%1</b>: %2 ranks, %3 – %4<br><i>click: their lanes</i>")
        .arg(QString::fromStdString(RankGrouping::label(g)))
        .arg(g.size())
        .arg(*lo)
        .arg(*hi);
}

bool RankOverview::viewportEvent(QEvent* e) {
    if (e->type() == QEvent::ToolTip && data_) {
        auto* help = static_cast<QHelpEvent*>(e);
        if (const auto cell = cell_at(help->pos())) {
            QToolTip::showText(help->globalPos(), cell_tooltip(*cell), viewport(), cell_rect(*cell));
        } else if (const int group = group_at(help->pos()); group >= 0) {
            QToolTip::showText(help->globalPos(), group_tooltip(group), viewport(), group_rect(group));
        } else {
            QToolTip::hideText();
        }
        return true;
    }
    return QAbstractScrollArea::viewportEvent(e);
}

void RankOverview::paintEvent(QPaintEvent*) {
    QPainter p(viewport());
    render_frame(p, viewport()->size());
}

void RankOverview::render_frame(QPainter& p, QSize size) {
    const auto& c = view_colours();
    p.fillRect(QRect(QPoint(0, 0), size), c.background);
    if (!data_ || rows() == 0 || steps() == 0) {
        p.setPen(c.text_dim);
        p.drawText(QRect(QPoint(0, 0), size), Qt::AlignCenter | Qt::TextWordWrap,
                   !data_ ? tr("No trace open: the rank overview shows a trace's ranks × steps.")
                          : tr("%1 carries no step numbers: there is no rank × step grid to show.").arg(data_->title));
        return;
    }
    paint_cells(p, size);
    paint_groups(p, size);
    paint_steps(p, size);
    paint_legend(p, size);
}

void RankOverview::paint_cells(QPainter& p, QSize size) {
    const auto& c = view_colours();
    const double w = cell_width();
    const int h = row_height();
    if (image_folded_ != folded() || (folded() && image_rows_room_ != rows_room())) rebuild_image();
    const QRect area(left_width(), header_h_, size.width() - left_width() - legend_w_ + 1, size.height() - header_h_);
    p.setClipRect(area);
    // One pixel per cell, scaled without smoothing: a frame costs one image draw whatever
    // the number of ranks.
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    p.drawImage(QRectF(left_width(), header_h_ - offset_px_, w * steps(), folded() ? rows_room() : static_cast<double>(h) * rows()),
                cells_);
    // Gaps between cells once they are large enough to read one by one.
    if (w >= 6) {
        for (int s = 1; s < steps(); ++s) {
            p.fillRect(QRect(cell_rect({0, s}).left(), header_h_, 1, y_of_row(rows()) - header_h_), c.background);
        }
    }
    const int first_row = row_at_y(header_h_);
    const int last_row = row_at_y(size.height());
    const int width = static_cast<int>(w * steps());
    if (h >= 6) {
        for (int row = first_row + 1; row <= last_row; ++row) {
            p.fillRect(QRect(left_width(), y_of_row(row), width, 1), c.background);
        }
    }
    // Group boundaries: a firmer line where a stage ends, a thin one between replicas.
    for (const auto& g : data_->grouping.groups) {
        if (g.first_row == 0 || g.first_row < first_row || g.first_row > last_row + 1) continue;
        // Replica lines only where rows are tall enough to leave the cells readable.
        if (g.depth > 0 && g.size() * row_px() < 6) continue;
        const int y = y_of_row(g.first_row);
        p.fillRect(QRect(left_width(), y - (g.depth == 0 ? 1 : 0), width, g.depth == 0 ? 2 : 1),
                   g.depth == 0 ? c.text_dim : c.background);
    }
    if (current_ && hasFocus()) {
        QRect r = cell_rect(*current_);
        if (r.height() < 4) r.adjust(0, -2, 0, 2);  // a folded row: still findable
        p.setPen(QPen(current_theme() == Theme::Dark ? Qt::white : Qt::black, 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(r.adjusted(0, 0, -1, -1));
    }
    p.setClipping(false);
}

void RankOverview::paint_groups(QPainter& p, QSize size) {
    const auto& c = view_colours();
    const auto& g = data_->grouping;
    const int h = row_height();
    const QFontMetrics fm(font());
    p.setClipRect(QRect(0, header_h_, left_width(), size.height() - header_h_));
    int index = 0;
    for (const auto& group : g.groups) {
        const QRect r = group_rect(index++);
        if (r.bottom() < header_h_ || r.top() > size.height()) continue;
        const bool odd = group.coordinate % 2 != 0;
        p.fillRect(r.adjusted(0, 0, -2, 0), odd ? c.panel_alt : c.panel);
        p.fillRect(QRect(r.left(), r.top(), r.width() - 2, 1), c.border);
        if (r.height() >= fm.height()) {
            // Keep the label on screen while the group's top is scrolled away.
            const int top = std::max(r.top(), header_h_);
            const QRect text(r.left() + 4, top, r.width() - 8, std::min(fm.height() + 4, r.bottom() - top));
            p.setPen(group.depth == 0 ? c.text : c.text_dim);
            p.drawText(text, Qt::AlignLeft | Qt::AlignVCenter, QString::fromStdString(RankGrouping::label(group)));
        }
    }
    // Rank numbers where rows are tall enough to carry text; else the first rank of each
    // stage.
    const int x = kMargin + g.depth_count * group_w_;
    p.setPen(c.text_dim);
    if (h >= fm.height()) {
        for (int row = row_at_y(header_h_); row <= row_at_y(size.height()); ++row) {
            const QRect r(x, y_of_row(row), rank_w_ - 8, h);
            p.drawText(r, Qt::AlignRight | Qt::AlignVCenter, tr("rank %1").arg(g.ranks[static_cast<std::size_t>(row)]));
        }
    } else if (g.groups.empty()) {
        // Ungrouped: every n-th row, n a power of two that leaves room for the text.
        int every = 1;
        while (every * row_px() < fm.height()) every *= 2;
        for (int row = 0; row < rows(); row += every) {
            const int y = y_of_row(row);
            if (y < header_h_ - fm.height() || y > size.height()) continue;
            p.drawText(QRect(x, y, rank_w_ - 8, fm.height()), Qt::AlignRight | Qt::AlignTop,
                       tr("rank %1").arg(g.ranks[static_cast<std::size_t>(row)]));
        }
    } else {
        // The first rank of each outermost group (a stage), where its label has room.
        int last_bottom = -1;
        for (const auto& group : g.groups) {
            const int y = y_of_row(group.first_row);
            if (group.depth != 0 || y < last_bottom || y < header_h_ - fm.height()) continue;
            p.drawText(QRect(x, y, rank_w_ - 8, fm.height()), Qt::AlignRight | Qt::AlignTop,
                       tr("rank %1").arg(g.ranks[static_cast<std::size_t>(group.first_row)]));
            last_bottom = y + fm.height();
        }
    }
    p.setClipping(false);
}

void RankOverview::paint_steps(QPainter& p, QSize size) {
    const auto& c = view_colours();
    p.fillRect(QRect(0, 0, size.width(), header_h_), c.background);
    const QFontMetrics fm(font());
    const double w = cell_width();
    const auto& steps_list = data_->matrix.steps;
    const int label_w = fm.horizontalAdvance(QString::number(steps_list.back())) + 8;
    const int every = std::max(1, static_cast<int>(std::ceil(label_w / w)));
    p.setPen(c.text_dim);
    p.drawText(QRect(kMargin, 0, left_width() - kMargin - 8, header_h_), Qt::AlignRight | Qt::AlignVCenter, tr("step"));
    // Which axis each group column is.
    for (const auto& group : data_->grouping.groups) {
        if (group.first_row != 0) continue;
        p.drawText(QRect(kMargin + group.depth * group_w_ + 4, 0, group_w_ - 8, header_h_), Qt::AlignLeft | Qt::AlignVCenter,
                   group.axis == Axis::Pp ? tr("stage") : tr("replica"));
    }
    for (int s = 0; s < steps(); s += every) {
        const QRect r = cell_rect({0, s});
        p.drawText(QRect(r.left(), 0, std::max(r.width(), label_w), header_h_), Qt::AlignHCenter | Qt::AlignVCenter,
                   QString::number(steps_list[static_cast<std::size_t>(s)]));
    }
}

void RankOverview::paint_legend(QPainter& p, QSize size) {
    const auto& c = view_colours();
    const QFontMetrics fm(font());
    // Beside the cells (they stop at a maximum width), not at the window's far edge.
    const int legend_left = std::min(size.width() - legend_w_, left_width() + static_cast<int>(cell_width() * steps()) + 24);
    const int x = legend_left + 14;
    const int top = header_h_ + fm.height() + 8;
    const int bottom = std::min(size.height() - kMargin - 2 * fm.height(), top + 320);
    p.fillRect(QRect(legend_left + 1, 0, size.width() - legend_left, size.height()), c.background);
    p.setPen(c.text);
    p.drawText(QRect(x, header_h_, size.width() - x, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
               metric_name(metric_));
    if (bottom - top < 20) return;
    // Slow at the top: the eye looks up for the bright (slow) end.
    for (int y = top; y < bottom; ++y) {
        p.fillRect(QRect(x, y, 14, 1), HeatScale::ramp(1.0 - static_cast<double>(y - top) / (bottom - top - 1)));
    }
    p.setPen(c.text_dim);
    const int tx = x + 20;
    for (int i = 0; i <= 4; ++i) {
        const double f = 1.0 - i / 4.0;
        const int y = top + static_cast<int>((bottom - top - 1) * (1.0 - f));
        const double v = scale_.low_s() + f * (scale_.high_s() - scale_.low_s());
        p.fillRect(QRect(x + 14, y, 4, 1), c.text_dim);
        // The ends say when some cells lie beyond them (the warm-up step, mostly).
        const QString bound = i == 0 && scale_.clamps_high() ? QStringLiteral("≥ ")
                              : i == 4 && scale_.clamps_low() ? QStringLiteral("≤ ")
                                                              : QString();
        p.drawText(QRect(tx, y - fm.height() / 2, size.width() - tx, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
                   bound + seconds_text(v));
    }
    p.fillRect(QRect(x, bottom + 10, 14, fm.height() - 4), c.panel);
    p.drawText(QRect(tx, bottom + 8, size.width() - tx, fm.height()), Qt::AlignLeft | Qt::AlignVCenter, tr("no data"));
    if (scale_.warmup_steps() > 0) {
        p.drawText(QRect(x, bottom + 12 + fm.height(), size.width() - x - 4, 3 * fm.height()),
                   Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                   tr("scale from step %1 on (step %2: warm-up)")
                       .arg(data_->matrix.steps[1])
                       .arg(data_->matrix.steps[0]));
    }
}

}  // namespace meshwork::gui
