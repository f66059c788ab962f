#include "gui/timeline/time_flags.h"

#include <QFontMetrics>
#include <QPainter>
#include <QPolygonF>

#include <algorithm>
#include <cmath>

#include "gui/app/format.h"

namespace meshwork::gui {

bool TimeFlags::toggle(double t_ns, double tolerance_ns) {
    auto nearest = flags_ns_.end();
    double best = tolerance_ns;
    for (auto it = flags_ns_.begin(); it != flags_ns_.end(); ++it) {
        const double d = std::fabs(*it - t_ns);
        if (d <= best) {
            best = d;
            nearest = it;
        }
    }
    if (nearest != flags_ns_.end()) {
        flags_ns_.erase(nearest);
        return false;
    }
    flags_ns_.insert(std::upper_bound(flags_ns_.begin(), flags_ns_.end(), t_ns), t_ns);
    return true;
}

void TimeFlags::paint_lines(QPainter& p, const QRectF& lanes, const std::function<double(double)>& x_of,
                            const QColor& colour) const {
    p.setPen(Qt::NoPen);
    for (double t : flags_ns_) {
        const double x = std::floor(x_of(t));
        if (x < lanes.left() || x > lanes.right()) continue;
        p.fillRect(QRectF(x, lanes.top(), 1, lanes.height()), colour);
    }
}

void TimeFlags::paint_ruler(QPainter& p, const QRectF& ruler, const std::function<double(double)>& x_of,
                            double origin_ns, const QColor& colour, const QColor& text) const {
    const QFontMetrics fm(p.font());
    const QColor tint(colour.red(), colour.green(), colour.blue(), 48);
    const double label_top = ruler.bottom() - fm.height() - 1;
    for (std::size_t i = 0; i < flags_ns_.size(); ++i) {
        const double x = std::floor(x_of(flags_ns_[i]));
        // The flag's time from the origin, right of its pennant.
        const double from_origin = flags_ns_[i] - origin_ns;
        const QString when = (from_origin < 0 ? QStringLiteral("−") : QString()) + format_duration_ns(std::fabs(from_origin));
        const QRectF when_box(x + 10, label_top, fm.horizontalAdvance(when) + 6, fm.height());
        // The time to the next flag, centred between the two where it clears this flag's label.
        if (i + 1 < flags_ns_.size()) {
            const double x_next = std::floor(x_of(flags_ns_[i + 1]));
            const QString delta = QStringLiteral("Δ ") + format_duration_ns(flags_ns_[i + 1] - flags_ns_[i]);
            const double w = fm.horizontalAdvance(delta) + 8;
            const double mid = (std::max(x, ruler.left()) + std::min(x_next, ruler.right())) / 2;
            const QRectF box(mid - w / 2, label_top, w, fm.height());
            const bool clear = box.left() > when_box.right() + 4 && box.right() < x_next - 4 &&
                               box.left() >= ruler.left() && box.right() <= ruler.right();
            if (clear) {
                p.fillRect(box, tint);
                p.setPen(text);
                p.drawText(box, Qt::AlignCenter, delta);
            }
        }
        if (x < ruler.left() || x > ruler.right()) continue;
        p.fillRect(QRectF(x, ruler.top(), 1, ruler.height()), colour);
        // A small pennant at the foot of the axis.
        QPolygonF pennant;
        pennant << QPointF(x + 1, ruler.bottom() - 9) << QPointF(x + 8, ruler.bottom() - 6)
                << QPointF(x + 1, ruler.bottom() - 3);
        p.setPen(Qt::NoPen);
        p.setBrush(colour);
        p.drawPolygon(pennant);
        p.setBrush(Qt::NoBrush);
        if (when_box.right() <= ruler.right()) {
            p.fillRect(when_box, tint);
            p.setPen(text);
            p.drawText(when_box, Qt::AlignCenter, when);
        }
    }
}

}  // namespace meshwork::gui
