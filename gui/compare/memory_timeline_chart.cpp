#include "gui/compare/memory_timeline_chart.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>

#include "gui/app/format.h"
#include "gui/app/theme.h"

namespace meshwork::gui {

namespace {

QColor rank_colour(int index, int count) {
    return QColor::fromHsv((index * 360 / std::max(1, count) + 200) % 360, 170, 230);
}

}  // namespace

MemoryTimelineChart::MemoryTimelineChart(QWidget* parent) : QWidget(parent) {
    setMinimumHeight(160);
    note_ = tr("No comparison");
}

int MemoryTimelineChart::ranks_drawn() const { return static_cast<int>(series_.size()); }

void MemoryTimelineChart::set_data(std::vector<profiler::MemorySeries> series, const profiler::MemoryComparison& comparison) {
    series_.clear();
    predicted_peak_.clear();
    ranks_total_ = 0;
    // Per rank the device the comparison measured (its highest allocated peak), so the
    // dashed prediction and the curve are the same rank's same device.
    for (const auto& r : comparison.ranks) {
        if (!r.measured) continue;
        const auto it = std::find_if(series.begin(), series.end(), [&](const auto& s) {
            return s.rank == r.rank && s.device == r.device;
        });
        if (it == series.end()) continue;
        ++ranks_total_;
        if (static_cast<int>(series_.size()) >= kMaxRanksDrawn) continue;
        series_.push_back(std::move(*it));
        predicted_peak_.push_back(r.predicted.peak);
    }
    note_ = series_.empty() ? tr("Memory not compared: %1").arg(QString::fromStdString(comparison.note)) : QString();
    update();
}

void MemoryTimelineChart::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const auto& c = view_colours();
    p.fillRect(rect(), c.background);
    if (series_.empty()) {
        p.setPen(c.text_dim);
        p.drawText(rect().adjusted(12, 8, -12, -8), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, note_);
        return;
    }
    std::int64_t t0 = series_.front().points.front().time_ns, t1 = t0, top = 1;
    for (std::size_t i = 0; i < series_.size(); ++i) {
        for (const auto& q : series_[i].points) {
            t0 = std::min(t0, q.time_ns);
            t1 = std::max(t1, q.time_ns);
            top = std::max({top, q.allocated_bytes, q.reserved_bytes});
        }
        top = std::max(top, predicted_peak_[i]);
    }
    const double y_max = 1.08 * static_cast<double>(top);
    const QFontMetrics fm(font());
    const QRectF plot = QRectF(rect()).adjusted(fm.horizontalAdvance("000.0 MiB") + 16, fm.height() * 2.5 + 8, -16,
                                                -(fm.height() + 14));
    const auto x_of = [&](std::int64_t t) {
        return plot.left() + plot.width() * static_cast<double>(t - t0) / static_cast<double>(std::max<std::int64_t>(1, t1 - t0));
    };
    const auto y_of = [&](double bytes) { return plot.bottom() - plot.height() * bytes / y_max; };
    // Axes: four byte gridlines, the time span at the ends.
    p.setPen(c.border);
    p.drawRect(plot);
    for (int i = 1; i <= 4; ++i) {
        const double v = y_max * i / 4.5;
        const double y = y_of(v);
        p.setPen(QPen(c.border, 1, Qt::DotLine));
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        p.setPen(c.text_dim);
        p.drawText(QRectF(0, y - fm.height() / 2.0, plot.left() - 6, fm.height()), Qt::AlignRight | Qt::AlignVCenter,
                   format_bytes(v));
    }
    p.setPen(c.text_dim);
    p.drawText(QRectF(plot.left(), plot.bottom() + 4, plot.width(), fm.height()), Qt::AlignLeft, tr("0 (first memory event)"));
    p.drawText(QRectF(plot.left(), plot.bottom() + 4, plot.width(), fm.height()), Qt::AlignRight,
               format_duration_ns(static_cast<double>(t1 - t0)));
    // Curves and predictions; the legend above the plot.
    double legend_x = plot.left();
    const double legend_y = 6;
    p.setPen(c.text);
    const QString title = tr("Measured allocated (solid) and reserved (thin) beside the predicted peak (dashed), per rank") +
                          (ranks_total_ > ranks_drawn() ? tr(" — %1 of %2 ranks drawn").arg(ranks_drawn()).arg(ranks_total_) : QString());
    p.drawText(QPointF(plot.left(), legend_y + fm.ascent()), title);
    for (std::size_t i = 0; i < series_.size(); ++i) {
        const QColor colour = rank_colour(static_cast<int>(i), static_cast<int>(series_.size()));
        QPainterPath allocated, reserved;
        const auto& pts = series_[i].points;
        for (std::size_t k = 0; k < pts.size(); ++k) {
            const QPointF a(x_of(pts[k].time_ns), y_of(static_cast<double>(pts[k].allocated_bytes)));
            const QPointF r(x_of(pts[k].time_ns), y_of(static_cast<double>(pts[k].reserved_bytes)));
            if (k == 0) {
                allocated.moveTo(a);
                reserved.moveTo(r);
            } else {
                // Steps: a total holds until the next event changes it.
                allocated.lineTo(a.x(), allocated.currentPosition().y());
                allocated.lineTo(a);
                reserved.lineTo(r.x(), reserved.currentPosition().y());
                reserved.lineTo(r);
            }
        }
        QColor thin = colour;
        thin.setAlpha(140);
        p.setPen(QPen(thin, 1));
        p.drawPath(reserved);
        p.setPen(QPen(colour, 1.6));
        p.drawPath(allocated);
        if (predicted_peak_[i] > 0) {
            p.setPen(QPen(colour, 1.2, Qt::DashLine));
            const double y = y_of(static_cast<double>(predicted_peak_[i]));
            p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        }
        const QString label = tr("rank %1").arg(series_[i].rank);
        const double lx = legend_x, ly = legend_y + fm.height() + 4;
        p.fillRect(QRectF(lx, ly + fm.height() / 2.0 - 2, 14, 4), colour);
        p.setPen(c.text);
        p.drawText(QPointF(lx + 18, ly + fm.ascent()), label);
        legend_x += 18 + fm.horizontalAdvance(label) + 14;
    }
}

}  // namespace meshwork::gui
