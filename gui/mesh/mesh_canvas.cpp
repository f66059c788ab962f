#include "mesh/mesh_canvas.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include "mesh/device_mesh.h"

namespace meshwork::gui {

namespace {
// Colours per pipeline stage, readable on dark and light palettes.
QColor stage_colour(int stage) {
    static const QColor colours[] = {QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b),
                                     QColor(0x59, 0xa1, 0x4f), QColor(0xb0, 0x7a, 0xa1),
                                     QColor(0x76, 0xb7, 0xb2), QColor(0xed, 0xc9, 0x48),
                                     QColor(0xe1, 0x57, 0x59), QColor(0x9c, 0x75, 0x5f)};
    return colours[stage % 8];
}
constexpr int kMaxReplicasDrawn = 8;  // DP replicas beyond this are summarised
constexpr int kMaxStagesDrawn = 32;
}  // namespace

MeshCanvas::MeshCanvas(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setMinimumSize(400, 300);
}

void MeshCanvas::set_layout(const Layout& layout) {
    layout_ = layout;
    has_layout_ = true;
    update();
}

void MeshCanvas::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), palette().base());
    tiles_.clear();
    if (!has_layout_) {
        p.drawText(rect(), Qt::AlignCenter, tr("Open a layout (Ctrl+O)"));
        return;
    }
    const auto& s = layout_.parallel.mesh;
    const DeviceMesh mesh = layout_.mesh();
    const int stages = std::min(s.pp, kMaxStagesDrawn);
    const int replicas = std::min(s.dp * s.cp, kMaxReplicasDrawn);
    hidden_replicas_ = s.dp * s.cp - replicas;
    const double margin = 16, header = 28, gap = 10;
    const double col_w = (width() - 2 * margin - gap * (stages - 1)) / stages;
    const double row_h = (height() - 2 * margin - header - gap * (replicas - 1) -
                          (hidden_replicas_ > 0 ? 20 : 0)) / replicas;
    const auto layers = layout_.stage_layers();
    QFont bold = font();
    bold.setBold(true);
    for (int st = 0; st < stages; ++st) {
        const double x = margin + st * (col_w + gap);
        p.setFont(bold);
        p.setPen(palette().text().color());
        QString title = tr("Stage %1").arg(st);
        if (!layers.empty()) {
            int n = 0;
            for (int c = st; c < static_cast<int>(layers.size()); c += s.pp) n += layers[c];
            title += tr("  ·  %1 layers").arg(n);
        }
        p.drawText(QRectF(x, margin, col_w, header - 6), Qt::AlignLeft | Qt::AlignVCenter, title);
        p.setFont(font());
        for (int rep = 0; rep < replicas; ++rep) {
            const double y = margin + header + rep * (row_h + gap);
            const QRectF group(x, y, col_w, row_h);
            p.setPen(QPen(palette().mid().color(), 1));
            p.setBrush(palette().alternateBase());
            p.drawRoundedRect(group, 6, 6);
            const int tp = s.tp;
            const double tile_w = (col_w - 8 - 4 * (tp - 1)) / tp;
            for (int t = 0; t < tp; ++t) {
                RankCoords c;
                c.tp = t;
                c.pp = st;
                c.dp = rep / s.cp;
                c.cp = rep % s.cp;
                const int rank = mesh.rank_of(c);
                const QRectF tile(x + 4 + t * (tile_w + 4), y + 4, tile_w, row_h - 8);
                p.setPen(Qt::NoPen);
                p.setBrush(stage_colour(st));
                p.drawRoundedRect(tile, 4, 4);
                p.setPen(Qt::white);
                if (tile_w > 22) {
                    p.drawText(tile, Qt::AlignCenter, QString::number(rank));
                }
                tiles_.push_back({tile, rank});
            }
        }
    }
    if (hidden_replicas_ > 0) {
        p.setPen(palette().text().color());
        p.drawText(QRectF(margin, height() - margin - 18, width() - 2 * margin, 18),
                   Qt::AlignLeft, tr("… and %1 more DP×CP replicas").arg(hidden_replicas_));
    }
}

bool MeshCanvas::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip && has_layout_) {
        auto* help = static_cast<QHelpEvent*>(e);
        for (const auto& t : tiles_) {
            if (!t.rect.contains(help->pos())) continue;
            const DeviceMesh mesh = layout_.mesh();
            const RankCoords c = mesh.coords(t.rank);
            QToolTip::showText(help->globalPos(),
                               tr("Rank %1 — node %2, GPU %3\ntp %4  cp %5  dp %6  pp %7\n"
                                  "ep %8  etp %9  edp %10")
                                   .arg(t.rank).arg(mesh.node_of(t.rank))
                                   .arg(mesh.local_gpu_of(t.rank)).arg(c.tp).arg(c.cp).arg(c.dp)
                                   .arg(c.pp).arg(c.ep).arg(c.etp).arg(c.edp),
                               this);
            return true;
        }
        QToolTip::hideText();
        return true;
    }
    return QWidget::event(e);
}

}  // namespace meshwork::gui
