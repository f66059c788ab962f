#include "gui/dialogs/loss_plot.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>

#include "gui/app/theme.h"

namespace meshwork::gui {

LossPlot::LossPlot(QWidget* parent) : QWidget(parent) {
    setMinimumHeight(100);
    setAccessibleName(tr("Loss per step"));
}

void LossPlot::clear() {
    points_.clear();
    update();
}

void LossPlot::add(int step, double loss) {
    points_.emplace_back(step, loss);
    update();
}

void LossPlot::paintEvent(QPaintEvent* /*event*/) {
    const auto& c = view_colours();
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), c.panel);
    p.setPen(c.border);
    p.drawRect(rect().adjusted(0, 0, -1, -1));
    const QFontMetrics fm = fontMetrics();
    const QRectF plot = QRectF(rect()).adjusted(48, 8 + fm.height(), -10, -8 - fm.height());
    if (points_.empty()) {
        p.setPen(c.text_dim);
        p.drawText(rect(), Qt::AlignCenter, tr("Loss appears here as steps finish"));
        return;
    }
    auto [lo_it, hi_it] = std::minmax_element(points_.begin(), points_.end(),
                                              [](const auto& a, const auto& b) { return a.second < b.second; });
    double lo = lo_it->second;
    double hi = hi_it->second;
    if (hi - lo < 1e-9) {
        lo -= 0.5;
        hi += 0.5;
    }
    const int first = points_.front().first;
    const int last = std::max(points_.back().first, first + 1);
    auto at = [&](int step, double loss) {
        return QPointF(plot.left() + (step - first) * plot.width() / (last - first),
                       plot.bottom() - (loss - lo) / (hi - lo) * plot.height());
    };
    p.setPen(c.text_dim);
    p.drawText(QRectF(0, plot.top() - fm.height() / 2.0, 44, fm.height()), Qt::AlignRight | Qt::AlignVCenter,
               QString::number(hi, 'f', 3));
    p.drawText(QRectF(0, plot.bottom() - fm.height() / 2.0, 44, fm.height()), Qt::AlignRight | Qt::AlignVCenter,
               QString::number(lo, 'f', 3));
    p.drawText(QRectF(plot.left(), plot.bottom() + 2, plot.width(), fm.height()), Qt::AlignLeft,
               tr("step %1").arg(first));
    p.drawText(QRectF(plot.left(), plot.bottom() + 2, plot.width(), fm.height()), Qt::AlignRight,
               tr("step %1").arg(last));
    QPainterPath path(at(points_.front().first, points_.front().second));
    for (const auto& [step, loss] : points_) path.lineTo(at(step, loss));
    p.setPen(QPen(c.accent, 2));
    p.drawPath(path);
    p.setBrush(c.accent);
    for (const auto& [step, loss] : points_) p.drawEllipse(at(step, loss), 2.5, 2.5);
    p.setPen(c.text);
    p.drawText(QRectF(plot.left(), 4, plot.width(), fm.height()), Qt::AlignRight,
               tr("loss %1 at step %2").arg(points_.back().second, 0, 'f', 5).arg(points_.back().first));
}

}  // namespace meshwork::gui
