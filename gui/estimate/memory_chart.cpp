#include "gui/estimate/memory_chart.h"

#include <QEvent>
#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "gui/app/format.h"
#include "gui/app/theme.h"

namespace meshwork::gui {

namespace {
constexpr double kLegendHeightPx = 42;  // two rows of legend entries and the top axis label
constexpr double kAxisWidthPx = 56;
constexpr double kLabelHeightPx = 18;
constexpr double kMarginPx = 6;

// A round figure at or above `bytes` for the top of the axis: 1, 2 or 5 × 2^k GiB steps.
double nice_ceiling_bytes(double bytes) {
    const double gib = 1024.0 * 1024.0 * 1024.0;
    double step = gib / 8;
    while (step * 8 < bytes) step *= 2;
    return std::ceil(bytes / step) * step;
}
}  // namespace

QString StageMemoryBreakdown::kind_label(int kind) {
    switch (kind) {
        case Params: return QObject::tr("Weights");
        case Grads: return QObject::tr("Gradients");
        case Optimizer: return QObject::tr("Optimizer");
        case Activations: return QObject::tr("Activations");
        case Buffers: return QObject::tr("Buffers");
        case Reserved: return QObject::tr("Reserved");
        default: return {};
    }
}

QColor memory_kind_colour(int kind) {
    // Colour-blind-safe (Okabe–Ito) hues, the same in both themes.
    static const QColor colours[] = {QColor(0x00, 0x72, 0xB2), QColor(0x56, 0xB4, 0xE9), QColor(0x00, 0x9E, 0x73),
                                     QColor(0xE6, 0x9F, 0x00), QColor(0xCC, 0x79, 0xA7), QColor(0x99, 0x99, 0x99)};
    return colours[std::clamp(kind, 0, StageMemoryBreakdown::KindCount - 1)];
}

MemoryChart::MemoryChart(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setAccessibleName(tr("Memory per pipeline stage"));
}

void MemoryChart::set_stages(std::vector<StageMemoryBreakdown> stages) {
    stages_ = std::move(stages);
    update();
}

double MemoryChart::axis_max_bytes() const {
    double top = 1;
    for (const auto& s : stages_) top = std::max({top, s.total_bytes(), s.capacity_bytes});
    // Headroom above the tallest column or the capacity line, for the line's label.
    return nice_ceiling_bytes(top * 1.08);
}

QRectF MemoryChart::plot_rect() const {
    return QRectF(kAxisWidthPx, kLegendHeightPx + kMarginPx, width() - kAxisWidthPx - kMarginPx,
                  height() - kLegendHeightPx - kLabelHeightPx - 2 * kMarginPx);
}

QRectF MemoryChart::column_rect(int index) const {
    const QRectF plot = plot_rect();
    const double slot = plot.width() / std::max<std::size_t>(1, stages_.size());
    const double bar = std::max(1.0, std::min(slot * 0.7, 48.0));
    return QRectF(plot.left() + slot * index + (slot - bar) / 2, plot.top(), bar, plot.height());
}

int MemoryChart::stage_at(QPoint pos) const {
    const QRectF plot = plot_rect();
    if (stages_.empty() || !plot.contains(pos)) return -1;
    const double slot = plot.width() / static_cast<double>(stages_.size());
    const int index = static_cast<int>((pos.x() - plot.left()) / slot);
    return index >= 0 && index < static_cast<int>(stages_.size()) ? index : -1;
}

void MemoryChart::paintEvent(QPaintEvent* /*event*/) {
    const auto& c = view_colours();
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, false);
    p.fillRect(rect(), c.background);
    const QFontMetrics fm = fontMetrics();

    // Legend: a swatch and a label per kind, wrapped over two rows.
    double x = kMarginPx;
    double y = kMarginPx;
    for (int k = 0; k < StageMemoryBreakdown::KindCount; ++k) {
        const QString label = StageMemoryBreakdown::kind_label(k);
        const double w = 14 + fm.horizontalAdvance(label) + 12;
        if (x + w > width() - kMarginPx && x > kMarginPx) {
            x = kMarginPx;
            y += fm.height() + 2;
        }
        p.fillRect(QRectF(x, y + (fm.height() - 10) / 2.0, 10, 10), memory_kind_colour(k));
        p.setPen(c.text);
        p.drawText(QPointF(x + 14, y + fm.ascent()), label);
        x += w;
    }

    const QRectF plot = plot_rect();
    if (stages_.empty() || plot.height() < 20) {
        p.setPen(c.text_dim);
        p.drawText(plot, Qt::AlignCenter, tr("No memory estimate"));
        return;
    }
    const double top_bytes = axis_max_bytes();
    auto y_of = [&](double bytes) { return plot.bottom() - bytes / top_bytes * plot.height(); };

    // Grid and axis labels at quarters of the axis.
    p.setPen(c.border);
    for (int i = 0; i <= 4; ++i) {
        const double bytes = top_bytes * i / 4;
        const double gy = y_of(bytes);
        p.setPen(c.border);
        p.drawLine(QPointF(plot.left(), gy), QPointF(plot.right(), gy));
        p.setPen(c.text_dim);
        p.drawText(QRectF(0, gy - fm.height() / 2.0, kAxisWidthPx - 6, fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, format_bytes(bytes));
    }

    // Columns, stacked bottom-up in kind order.
    const int label_every = std::max(1, static_cast<int>(std::ceil(
        static_cast<double>(stages_.size()) * (fm.horizontalAdvance("S00") + 6) / std::max(1.0, plot.width()))));
    for (std::size_t i = 0; i < stages_.size(); ++i) {
        const auto& s = stages_[i];
        const QRectF col = column_rect(static_cast<int>(i));
        double base = 0;
        for (int k = 0; k < StageMemoryBreakdown::KindCount; ++k) {
            const double b = s.bytes[static_cast<std::size_t>(k)];
            if (b <= 0) continue;
            const double y0 = y_of(base + b);
            const double y1 = y_of(base);
            p.fillRect(QRectF(col.left(), y0, col.width(), std::max(1.0, y1 - y0)), memory_kind_colour(k));
            base += b;
        }
        if (!s.fits()) {
            p.setPen(QPen(c.error, 2));
            p.setBrush(Qt::NoBrush);
            p.drawRect(QRectF(col.left(), y_of(base), col.width(), plot.bottom() - y_of(base)));
        }
        if (static_cast<int>(i) % label_every == 0) {
            p.setPen(s.fits() ? c.text_dim : c.error);
            p.drawText(QRectF(col.center().x() - 30, plot.bottom() + 2, 60, kLabelHeightPx), Qt::AlignHCenter | Qt::AlignTop,
                       QString("S%1").arg(s.stage));
        }
    }

    // Capacity: one dashed line when every stage has the same GPU (always, today).
    const double capacity = stages_.front().capacity_bytes;
    if (capacity > 0) {
        const double cy = y_of(capacity);
        p.setPen(QPen(c.error, 1.5, Qt::DashLine));
        p.drawLine(QPointF(plot.left(), cy), QPointF(plot.right(), cy));
        p.setPen(c.error);
        const QString text = tr("HBM %1").arg(format_bytes(capacity));
        // Above the line unless that would leave the plot (then just below it).
        const double text_y = cy - 3 - fm.ascent() >= plot.top() ? cy - 3 : cy + fm.ascent() + 2;
        p.drawText(QPointF(plot.right() - fm.horizontalAdvance(text) - 2, text_y), text);
    }
}

bool MemoryChart::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int index = stage_at(help->pos());
        if (index < 0) {
            QToolTip::hideText();
            event->ignore();
            return true;
        }
        const auto& s = stages_[static_cast<std::size_t>(index)];
        QString text = tr("<b>Stage %1</b>: %2 of %3").arg(s.stage).arg(format_bytes(s.total_bytes()), format_bytes(s.capacity_bytes));
        text += "<table>";
        for (int k = 0; k < StageMemoryBreakdown::KindCount; ++k) {
            text += QString("<tr><td><font color='%1'>■</font> %2</td><td align=right>%3</td></tr>")
                        .arg(memory_kind_colour(k).name(), StageMemoryBreakdown::kind_label(k),
                             format_bytes(s.bytes[static_cast<std::size_t>(k)]));
        }
        text += "</table>";
        if (!s.fits()) text += tr("<br><font color='%1'>Over by %2</font>").arg(view_colours().error.name(),
                                                                            format_bytes(s.total_bytes() - s.capacity_bytes));
        QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(event);
}

}  // namespace meshwork::gui
