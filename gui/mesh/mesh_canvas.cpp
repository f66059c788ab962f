#include "gui/mesh/mesh_canvas.h"

#include <QDragEnterEvent>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QMimeData>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>

#include "gui/app/format.h"
#include "gui/app/theme.h"
#include "gui/document/layout_document.h"
#include "gui/document/layout_mime.h"
#include "core/mesh/device_mesh.h"
#include "gui/mesh/stage_colours.h"
#include "core/model/layer_graph.h"

namespace meshwork::gui {

namespace {
// Forward FLOPs per token held by each pipeline stage (all its chunks), as a fraction of
// the model's: blocks, plus the embedding on the first chunk and norm/head on the last.
std::vector<double> flops_share_per_stage(const Layout& layout) {
    const int pp = layout.parallel.mesh.pp;
    std::vector<double> share(static_cast<std::size_t>(std::max(pp, 0)), 0.0);
    const auto split = layout.stage_layers();
    if (split.empty() || pp <= 0) return share;
    const LayerGraph g = build_layer_graph(layout.model);
    const int seq = layout.training.seq_length;
    std::vector<double> block_flops(static_cast<std::size_t>(layout.model.num_layers), 0.0);
    double head = 0, embed = 0;
    for (const auto& l : g.layers) {
        const double f = l.gemm_flops_per_token + l.attention_flops_per_token_per_context * l.context(seq, true);
        if (l.block >= 0) block_flops[static_cast<std::size_t>(l.block)] += f;
        else if (l.kind == LayerKind::Embedding) embed += f;
        else head += f;
    }
    double total = embed + head;
    for (double f : block_flops) total += f;
    int at = 0;
    for (std::size_t c = 0; c < split.size(); ++c) {
        double f = 0;
        for (int b = at; b < at + split[c]; ++b) f += block_flops[static_cast<std::size_t>(b)];
        if (c == 0) f += embed;
        if (c + 1 == split.size()) f += head;
        share[c % static_cast<std::size_t>(pp)] += f;
        at += split[c];
    }
    for (auto& s : share) s = total > 0 ? s / total : 0;
    return share;
}

QString rank_list(const std::vector<int>& ranks) {
    if (ranks.empty()) return {};
    bool contiguous = true;
    for (std::size_t i = 1; i < ranks.size(); ++i) contiguous &= ranks[i] == ranks[i - 1] + 1;
    if (contiguous && ranks.size() > 2) return QString("%1–%2").arg(ranks.front()).arg(ranks.back());
    QStringList parts;
    for (std::size_t i = 0; i < ranks.size() && i < 12; ++i) parts << QString::number(ranks[i]);
    if (ranks.size() > 12) parts << QString("… (%1)").arg(ranks.size());
    return parts.join(", ");
}

QString experts_text(const std::vector<int>& experts) {
    QStringList parts;
    for (std::size_t i = 0; i < experts.size() && i < 6; ++i) parts << QString::number(experts[i]);
    if (experts.size() > 6) parts << QString("+%1").arg(experts.size() - 6);
    return "E" + parts.join(",");
}
}  // namespace

MeshCanvas::MeshCanvas(LayoutDocument* document, QWidget* parent)
    : QWidget(parent), document_(document) {
    setMouseTracking(true);
    setAcceptDrops(true);
    // Placement by keyboard: Tab reaches the canvas, ←/→ pick a stage, Shift+←/→ move a
    // block across its boundary, the context menu (right click, Shift+F10) offers the same.
    setFocusPolicy(Qt::StrongFocus);
    setMinimumSize(480, 320);
    refusal_timer_.setSingleShot(true);
    refusal_timer_.setInterval(6000);
    connect(&refusal_timer_, &QTimer::timeout, this, [this] {
        refusal_text_.clear();
        update();
    });
    connect(document_, &LayoutDocument::changed, this, [this] {
        if (document_->has_layout()) {
            stage_flops_share_ = flops_share_per_stage(document_->layout());
            ep_experts_ = document_->layout().ep_experts();
        }
        stage_memory_.clear();  // stale until the next estimate arrives
        relayout();
    });
}

void MeshCanvas::set_stage_memory(std::vector<StageMemoryUse> memory) {
    stage_memory_ = std::move(memory);
    update();
}

QPoint MeshCanvas::stage_drop_point(int stage) const {
    for (const auto& s : geometry_.stages) {
        if (s.stage == stage) return s.rect.center().toPoint();
    }
    return {-1, -1};
}

QPoint MeshCanvas::tile_center(int rank) const {
    const auto* t = geometry_.tile_of_rank(rank);
    return t ? t->rect.center().toPoint() : QPoint(-1, -1);
}

void MeshCanvas::resizeEvent(QResizeEvent*) { relayout(); }

void MeshCanvas::relayout() {
    if (!document_->has_layout()) {
        geometry_ = {};
    } else {
        const double header = fontMetrics().height() * 2 + 14;
        geometry_ = layout_mesh_geometry(document_->layout(), QRectF(rect()), header);
    }
    update();
}

void MeshCanvas::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const auto& c = view_colours();
    p.fillRect(rect(), c.background);
    if (!document_->has_layout()) {
        p.setPen(c.text_dim);
        p.drawText(rect(), Qt::AlignCenter, tr("Open a layout (Ctrl+O) or create one (Ctrl+N)"));
        return;
    }
    p.setRenderHint(QPainter::Antialiasing);
    for (const auto& column : geometry_.stages) paint_stage(p, column);
    for (const auto& tile : geometry_.tiles) paint_tile(p, tile);
    paint_legend(p);
    paint_refusal(p);
}

void MeshCanvas::paint_stage(QPainter& p, const StageColumn& column) {
    const auto& c = view_colours();
    const Layout& l = document_->layout();
    const bool target = column.stage == drop_stage_ || (hasFocus() && column.stage == current_stage_);
    p.setPen(QPen(target ? c.accent : c.border, target ? 2 : 1));
    p.setBrush(c.panel);
    p.drawRoundedRect(column.rect, 6, 6);

    // Title: "Stage 0" and, below, the blocks it holds and its share of the FLOPs.
    const auto split = l.stage_layers();
    const auto first = l.stage_first_layer();
    int layers = 0;
    QStringList ranges;
    for (std::size_t ch = static_cast<std::size_t>(column.stage); ch < split.size();
         ch += static_cast<std::size_t>(l.parallel.mesh.pp)) {
        layers += split[ch];
        if (split[ch] == 0) {  // an end chunk that holds only the embedding or only the head
            ranges << (ch == 0 ? QString("embedding") : QString("head"));
            continue;
        }
        ranges << (split[ch] == 1 ? QString::number(first[ch])
                                  : QString("%1–%2").arg(first[ch]).arg(first[ch] + split[ch] - 1));
    }
    const QRectF title = column.header.adjusted(10, 6, -10, 0);
    const double line = fontMetrics().height();
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(stage_colour(column.stage).lighter(current_theme() == Theme::Dark ? 125 : 90));
    const double share = column.stage < static_cast<int>(stage_flops_share_.size())
                             ? stage_flops_share_[static_cast<std::size_t>(column.stage)] : 0;
    const QString right = tr("%1%").arg(share * 100, 0, 'f', 1);
    // Narrow columns (16 stages in a window) cannot hold "Stage 12" and "6.3%" side by side:
    // fall back to "S12", then drop the share (each tile's tooltip and the share bar still say it),
    // rather than painting one over the other.
    const QFontMetricsF bold_metrics(bold);
    const QFontMetricsF plain_metrics(font());
    const double gap = plain_metrics.horizontalAdvance(QStringLiteral("  "));
    QString name = tr("Stage %1").arg(column.stage);
    if (bold_metrics.horizontalAdvance(name) + gap + plain_metrics.horizontalAdvance(right) > title.width())
        name = tr("S%1").arg(column.stage);
    const bool share_fits =
        bold_metrics.horizontalAdvance(name) + gap + plain_metrics.horizontalAdvance(right) <= title.width();
    p.drawText(QRectF(title.left(), title.top(), title.width(), line), Qt::AlignLeft | Qt::AlignVCenter, name);
    p.setFont(font());
    p.setPen(c.text_dim);
    if (share_fits)
        p.drawText(QRectF(title.left(), title.top(), title.width(), line), Qt::AlignRight | Qt::AlignVCenter, right);
    QString detail = layers > 0 ? (layers == 1 ? tr("1 layer · block %1") : tr("%1 layers · blocks %2").arg(layers))
                                      .arg(ranges.join(", "))
                                : tr("no layers");
    // Where even the count is cut, say the count alone ("8 L") instead of "8 …".
    if (layers > 0 && plain_metrics.horizontalAdvance(detail) > title.width() &&
        plain_metrics.horizontalAdvance(tr("%1 layers").arg(layers)) > title.width())
        detail = tr("%1 L").arg(layers);
    p.drawText(QRectF(title.left(), title.top() + line, title.width(), line), Qt::AlignLeft | Qt::AlignVCenter,
               fontMetrics().elidedText(detail, Qt::ElideRight, static_cast<int>(title.width())));
    // Compute share bar under the title.
    const QRectF bar(title.left(), column.header.bottom() - 4, title.width(), 3);
    p.setPen(Qt::NoPen);
    p.setBrush(c.border);
    p.drawRect(bar);
    p.setBrush(stage_colour(column.stage));
    // Relative to the busiest stage, so an imbalance shows at a glance.
    const double busiest = stage_flops_share_.empty() ? 0.0
        : *std::max_element(stage_flops_share_.begin(), stage_flops_share_.end());
    p.drawRect(QRectF(bar.left(), bar.top(), bar.width() * (busiest > 0 ? share / busiest : 0), bar.height()));
}

void MeshCanvas::paint_tile(QPainter& p, const RankTile& tile) {
    const auto& c = view_colours();
    const Layout& l = document_->layout();
    const QRectF r = tile.rect;
    // The EP rank a drag of experts is over, or the one the keyboard works on (MoE layouts).
    const bool ep_target = (drop_ep_rank_ >= 0 && tile.coords.ep == drop_ep_rank_) ||
                           (hasFocus() && l.model.is_moe() && tile.coords.ep == current_ep_rank_);
    QColor fill = stage_colour(tile.coords.pp);
    if (current_theme() == Theme::Dark) fill = fill.darker(135);
    p.setPen(ep_target ? QPen(c.accent, 2) : Qt::NoPen);
    p.setBrush(fill);
    p.drawRoundedRect(r, 3, 3);

    const bool moe = l.model.is_moe();
    const auto fm = fontMetrics();
    QFont small = font();
    small.setPointSizeF(font().pointSizeF() * 0.85);
    p.setPen(Qt::white);
    const double bar_h = stage_memory_.empty() ? 0 : 5;
    const QRectF text_area = r.adjusted(2, 2, -2, -2 - bar_h);
    QFont bold = font();
    bold.setBold(true);
    // The rank number in bold, or smaller when the tile is narrow; nothing when even that
    // does not fit (the tooltip still tells).
    const QString rank_text = QString::number(tile.rank);
    QFont rank_font = bold;
    if (QFontMetrics(rank_font).horizontalAdvance(rank_text) + 4 > text_area.width()) rank_font = small;
    if (QFontMetrics(rank_font).horizontalAdvance(rank_text) + 2 <= text_area.width() && r.height() >= fm.height()) {
        QStringList lines{rank_text};
        if (moe && r.height() >= fm.height() * 2.4) lines << QString("EP%1").arg(tile.coords.ep);
        if (moe && r.height() >= fm.height() * 3.4 && tile.coords.ep < static_cast<int>(ep_experts_.size())) {
            lines << experts_text(ep_experts_[static_cast<std::size_t>(tile.coords.ep)]);
        }
        const double total_h = fm.height() * lines.size();
        double y = text_area.center().y() - total_h / 2;
        for (int i = 0; i < lines.size(); ++i) {
            p.setFont(i == 0 ? rank_font : small);
            p.setPen(i == 0 ? QColor(Qt::white) : QColor(255, 255, 255, 200));
            const QString text = QFontMetrics(p.font()).elidedText(lines[i], Qt::ElideRight, static_cast<int>(text_area.width()));
            p.drawText(QRectF(text_area.left(), y, text_area.width(), fm.height()), Qt::AlignCenter, text);
            y += fm.height();
        }
        p.setFont(font());
    }
    // Memory bar: share of HBM the stage's busiest rank needs; red when it does not fit.
    if (!stage_memory_.empty() && tile.coords.pp < static_cast<int>(stage_memory_.size())) {
        const auto& m = stage_memory_[static_cast<std::size_t>(tile.coords.pp)];
        const double frac = m.capacity_bytes > 0 ? m.used_bytes / m.capacity_bytes : 0;
        const QRectF bar(r.left() + 2, r.bottom() - bar_h - 1, r.width() - 4, bar_h - 1);
        p.setPen(Qt::NoPen);
        p.setBrush(QColor(0, 0, 0, 90));
        p.drawRect(bar);
        p.setBrush(frac > 1 ? c.error : (frac > 0.9 ? c.warning : c.ok));
        p.drawRect(QRectF(bar.left(), bar.top(), bar.width() * std::min(frac, 1.0), bar.height()));
    }
}

void MeshCanvas::paint_legend(QPainter& p) {
    const auto& c = view_colours();
    const Layout& l = document_->layout();
    const DeviceMesh mesh = l.mesh();
    const auto& s = l.parallel.mesh;
    p.setPen(c.text_dim);
    QString text = tr("%1 on %2 node(s) × %3   ·   tp %4  cp %5  dp %6  pp %7")
                       .arg(gpu_count_text(l)).arg(mesh.num_nodes()).arg(mesh.gpus_per_node())
                       .arg(s.tp).arg(s.cp).arg(s.dp).arg(s.pp);
    if (l.model.is_moe()) text += tr("   ·   ep %1  etp %2  edp %3").arg(s.ep).arg(s.etp).arg(mesh.edp());
    if (l.parallel.vpp > 1) text += tr("   ·   vpp %1").arg(l.parallel.vpp);
    text += tr("   ·   order %1").arg(QString::fromStdString(s.order));
    if (geometry_.hidden_replicas > 0) text += tr("   ·   %1 more DP×CP replicas not drawn").arg(geometry_.hidden_replicas);
    if (geometry_.hidden_stages > 0) text += tr("   ·   %1 more stages not drawn").arg(geometry_.hidden_stages);
    if (stage_memory_.empty()) text += tr("   ·   no memory estimate (invalid layout)");
    p.drawText(geometry_.legend, Qt::AlignLeft | Qt::AlignVCenter,
               fontMetrics().elidedText(text, Qt::ElideRight, static_cast<int>(geometry_.legend.width())));
}

void MeshCanvas::paint_refusal(QPainter& p) {
    if (refusal_text_.isEmpty()) return;
    const auto& c = view_colours();
    const auto fm = fontMetrics();
    const int max_w = std::min(width() - 24, 420);
    QRect text_rect = fm.boundingRect(QRect(0, 0, max_w, 2000), Qt::TextWordWrap, refusal_text_);
    QRectF box(refusal_pos_.x() + 12, refusal_pos_.y() + 12, text_rect.width() + 20, text_rect.height() + 16);
    if (box.right() > width() - 6) box.moveRight(width() - 6);
    if (box.bottom() > height() - 6) box.moveBottom(refusal_pos_.y() - 6);
    box.moveLeft(std::max(6.0, box.left()));
    p.setPen(QPen(c.error, 1.5));
    p.setBrush(current_theme() == Theme::Dark ? QColor(0x3a, 0x1f, 0x21) : QColor(0xfd, 0xec, 0xec));
    p.drawRoundedRect(box, 5, 5);
    p.drawEllipse(QPointF(refusal_pos_), 4, 4);
    p.setPen(c.text);
    p.drawText(box.adjusted(10, 8, -10, -8), Qt::TextWordWrap, refusal_text_);
}

void MeshCanvas::show_refusal(QPoint pos, const QString& reason) {
    refusal_pos_ = pos;
    refusal_text_ = tr("Refused: %1").arg(reason);
    refusal_timer_.start();
    emit edit_refused(reason);
    update();
}

QString MeshCanvas::tile_tooltip(const RankTile& tile) const {
    const Layout& l = document_->layout();
    const DeviceMesh mesh = l.mesh();
    const auto& k = tile.coords;
    QString html = tr("<b>Rank %1</b> — node %2, GPU %3<br>").arg(tile.rank).arg(mesh.node_of(tile.rank))
                       .arg(mesh.local_gpu_of(tile.rank));
    html += tr("tp %1 · cp %2 · dp %3 · pp %4").arg(k.tp).arg(k.cp).arg(k.dp).arg(k.pp);
    // The stage's share of the FLOPs, which a narrow column header leaves out.
    if (k.pp < static_cast<int>(stage_flops_share_.size()))
        html += tr(" · stage %1 holds %2% of the FLOPs").arg(k.pp)
                    .arg(stage_flops_share_[static_cast<std::size_t>(k.pp)] * 100, 0, 'f', 1);
    if (l.model.is_moe()) html += tr(" · ep %1 · etp %2 · edp %3").arg(k.ep).arg(k.etp).arg(k.edp);
    html += "<table cellspacing=0 cellpadding=1>";
    auto row = [&](const QString& name, Axis axis) {
        if (mesh.axis_size(axis) <= 1) return;
        html += tr("<tr><td>%1 group&nbsp;</td><td>%2%3</td></tr>")
                    .arg(name, rank_list(mesh.group_of(tile.rank, axis)),
                         mesh.axis_crosses_nodes(axis) ? tr(" (crosses nodes)") : QString());
    };
    row("TP", Axis::Tp);
    row("CP", Axis::Cp);
    row("DP", Axis::Dp);
    row("PP", Axis::Pp);
    if (l.model.is_moe()) {
        row("EP", Axis::Ep);
        row("ETP", Axis::Etp);
    }
    html += "</table>";
    if (l.model.is_moe() && k.ep < static_cast<int>(ep_experts_.size())) {
        QStringList e;
        for (int x : ep_experts_[static_cast<std::size_t>(k.ep)]) e << QString::number(x);
        html += tr("Experts: %1<br>").arg(e.join(", "));
    }
    if (k.pp < static_cast<int>(stage_memory_.size())) {
        const auto& m = stage_memory_[static_cast<std::size_t>(k.pp)];
        html += tr("Memory: %1 of %2").arg(format_bytes(m.used_bytes), format_bytes(m.capacity_bytes));
    }
    return html;
}

bool MeshCanvas::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip && document_->has_layout()) {
        auto* help = static_cast<QHelpEvent*>(e);
        if (const auto* t = geometry_.tile_at(help->pos())) {
            QToolTip::showText(help->globalPos(), tile_tooltip(*t), this, t->rect.toRect());
        } else {
            QToolTip::hideText();
        }
        return true;
    }
    return QWidget::event(e);
}

void MeshCanvas::dragEnterEvent(QDragEnterEvent* e) {
    if (e->mimeData()->hasFormat(kBlocksMime) || e->mimeData()->hasFormat(kExpertsMime)) {
        e->acceptProposedAction();
    }
}

void MeshCanvas::dragMoveEvent(QDragMoveEvent* e) {
    drop_stage_ = -1;
    drop_ep_rank_ = -1;
    const QPointF pos = e->position();
    if (e->mimeData()->hasFormat(kBlocksMime)) {
        if (const auto* s = geometry_.stage_at(pos)) drop_stage_ = s->stage;
    } else if (e->mimeData()->hasFormat(kExpertsMime)) {
        if (const auto* t = geometry_.tile_at(pos)) drop_ep_rank_ = t->coords.ep;
    }
    if (drop_stage_ >= 0 || drop_ep_rank_ >= 0) e->acceptProposedAction();
    else e->ignore();
    update();
}

void MeshCanvas::dragLeaveEvent(QDragLeaveEvent*) {
    drop_stage_ = -1;
    drop_ep_rank_ = -1;
    update();
}

void MeshCanvas::dropEvent(QDropEvent* e) {
    drop_stage_ = -1;
    drop_ep_rank_ = -1;
    const QPoint pos = e->position().toPoint();
    const QMimeData* mime = e->mimeData();
    ProposedEdit edit;
    if (mime->hasFormat(kBlocksMime)) {
        const auto* s = geometry_.stage_at(pos);
        if (!s) return show_refusal(pos, tr("drop transformer blocks on a pipeline stage column"));
        edit = move_blocks_to_stage(document_->layout(), read_index_mime(mime, kBlocksMime), s->stage);
    } else if (mime->hasFormat(kExpertsMime)) {
        const auto* t = geometry_.tile_at(pos);
        if (!t) return show_refusal(pos, tr("drop experts on a GPU tile (its EP rank takes them)"));
        edit = move_experts_to_ep_rank(document_->layout(), read_index_mime(mime, kExpertsMime), t->coords.ep);
    } else {
        return;
    }
    const auto outcome = document_->apply(edit);
    if (!outcome.accepted) {
        e->ignore();
        show_refusal(pos, outcome.reason);
        return;
    }
    refusal_text_.clear();
    e->acceptProposedAction();
    emit edit_done(QString::fromStdString(edit.description));
}

int MeshCanvas::current_stage() const { return current_stage_; }

void MeshCanvas::set_current_stage(int stage) {
    if (!document_->has_layout()) return;
    current_stage_ = std::clamp(stage, 0, std::max(0, document_->layout().parallel.mesh.pp - 1));
    update();
}

ProposedEdit MeshCanvas::move_boundary_block(int stage, int direction) const {
    const Layout& l = document_->layout();
    ProposedEdit edit{l, "", ""};
    const int pp = l.parallel.mesh.pp;
    const int to = stage + direction;
    if (l.parallel.vpp > 1) {
        edit.refused = tr("with virtual stages (vpp %1) a stage holds several chunks: drag the blocks from the "
                          "Model tree instead").arg(l.parallel.vpp).toStdString();
        return edit;
    }
    if (to < 0 || to >= pp) {
        edit.refused = (direction < 0 ? tr("stage %1 is the first: there is no stage before it")
                                      : tr("stage %1 is the last: there is no stage after it"))
                           .arg(stage).toStdString();
        return edit;
    }
    const auto split = l.stage_layers();
    const auto first = l.stage_first_layer();
    if (stage >= static_cast<int>(split.size()) || split[static_cast<std::size_t>(stage)] == 0) {
        edit.refused = tr("stage %1 holds no block to move").arg(stage).toStdString();
        return edit;
    }
    // The block on the boundary crossed: this stage's first going back, its last going on.
    const int block = direction < 0 ? first[static_cast<std::size_t>(stage)]
                                    : first[static_cast<std::size_t>(stage)] + split[static_cast<std::size_t>(stage)] - 1;
    return move_blocks_to_stage(l, {block}, to);
}

void MeshCanvas::apply_keyboard_edit(const ProposedEdit& edit) {
    const QPoint where = geometry_.stages.empty() ? QPoint(20, 20) : stage_drop_point(current_stage_);
    const auto outcome = document_->apply(edit);
    if (!outcome.accepted) {
        show_refusal(where, outcome.reason);
        emit edit_refused(outcome.reason);
        return;
    }
    refusal_text_.clear();
    emit edit_done(QString::fromStdString(edit.description));
}

void MeshCanvas::keyPressEvent(QKeyEvent* e) {
    if (!document_->has_layout()) return QWidget::keyPressEvent(e);
    const bool shift = e->modifiers() & Qt::ShiftModifier;
    if (e->key() == Qt::Key_Left || e->key() == Qt::Key_Right) {
        const int direction = e->key() == Qt::Key_Left ? -1 : 1;
        if (shift) apply_keyboard_edit(move_boundary_block(current_stage_, direction));
        else set_current_stage(current_stage_ + direction);
        return;
    }
    if (e->key() == Qt::Key_Home || e->key() == Qt::Key_End) {
        set_current_stage(e->key() == Qt::Key_Home ? 0 : document_->layout().parallel.mesh.pp - 1);
        return;
    }
    if ((e->key() == Qt::Key_Up || e->key() == Qt::Key_Down) && document_->layout().model.is_moe()) {
        const int direction = e->key() == Qt::Key_Up ? -1 : 1;
        if (shift) apply_keyboard_edit(move_edge_expert(current_ep_rank_, direction));
        else set_current_ep_rank(current_ep_rank_ + direction);
        return;
    }
    QWidget::keyPressEvent(e);
}

int MeshCanvas::current_ep_rank() const { return current_ep_rank_; }

void MeshCanvas::set_current_ep_rank(int ep_rank) {
    if (!document_->has_layout()) return;
    current_ep_rank_ = std::clamp(ep_rank, 0, std::max(0, document_->layout().parallel.mesh.ep - 1));
    update();
}

ProposedEdit MeshCanvas::move_edge_expert(int ep_rank, int direction) const {
    const Layout& l = document_->layout();
    ProposedEdit edit{l, "", ""};
    if (!l.model.is_moe()) {
        edit.refused = tr("%1 has no experts").arg(QString::fromStdString(l.model.name)).toStdString();
        return edit;
    }
    const int to = ep_rank + direction;
    if (to < 0 || to >= l.parallel.mesh.ep) {
        edit.refused = (direction < 0 ? tr("EP rank %1 is the first: there is no EP rank before it")
                                      : tr("EP rank %1 is the last: there is no EP rank after it"))
                           .arg(ep_rank).toStdString();
        return edit;
    }
    const auto placed = l.ep_experts();
    if (ep_rank < 0 || ep_rank >= static_cast<int>(placed.size()) || placed[static_cast<std::size_t>(ep_rank)].empty()) {
        edit.refused = tr("EP rank %1 holds no expert to move").arg(ep_rank).toStdString();
        return edit;
    }
    // As blocks cross a stage boundary: the first expert goes back, the last goes on.
    const auto& mine = placed[static_cast<std::size_t>(ep_rank)];
    return move_experts_to_ep_rank(l, {direction < 0 ? mine.front() : mine.back()}, to);
}

void MeshCanvas::contextMenuEvent(QContextMenuEvent* e) {
    if (!document_->has_layout()) return;
    // A right click picks the stage (and the EP rank of the tile) under the cursor; the
    // keyboard's menu key (Shift+F10) keeps the current ones.
    if (e->reason() == QContextMenuEvent::Mouse) {
        if (const auto* s = geometry_.stage_at(e->pos())) set_current_stage(s->stage);
        if (const auto* t = geometry_.tile_at(e->pos())) set_current_ep_rank(t->coords.ep);
    }
    QMenu menu(this);
    fill_context_menu(menu);
    menu.exec(e->reason() == QContextMenuEvent::Mouse ? e->globalPos()
                                                      : mapToGlobal(geometry_.stages.empty() ? QPoint(20, 20)
                                                                                             : stage_drop_point(current_stage_)));
}

void MeshCanvas::fill_context_menu(QMenu& menu) {
    auto add = [&](const ProposedEdit& edit, const QString& text) {
        auto* action = menu.addAction(text, this, [this, edit] { apply_keyboard_edit(edit); });
        action->setEnabled(edit.refused.empty() && document_->check(edit).accepted);
        if (!edit.refused.empty()) action->setToolTip(QString::fromStdString(edit.refused));
        else if (const auto check = document_->check(edit); !check.accepted) action->setToolTip(check.reason);
    };
    // An edge has no neighbour to name: the item says so (and stays disabled, the refusal in
    // its tooltip) instead of naming stage −1 or a stage past the last.
    const int stage = current_stage_;
    const int pp = document_->layout().parallel.mesh.pp;
    add(move_boundary_block(stage, -1),
        stage > 0 ? tr("Move the first block of stage %1 to stage %2\tShift+←").arg(stage).arg(stage - 1)
                  : tr("Move the first block of stage %1 back (no stage before it)\tShift+←").arg(stage));
    add(move_boundary_block(stage, 1),
        stage + 1 < pp ? tr("Move the last block of stage %1 to stage %2\tShift+→").arg(stage).arg(stage + 1)
                       : tr("Move the last block of stage %1 on (no stage after it)\tShift+→").arg(stage));
    if (document_->layout().model.is_moe()) {
        menu.addSeparator();
        const int ep = current_ep_rank_;
        const auto placed = document_->layout().ep_experts();
        const bool any = ep < static_cast<int>(placed.size()) && !placed[static_cast<std::size_t>(ep)].empty();
        const QString first = any ? QString::number(placed[static_cast<std::size_t>(ep)].front()) : QString("—");
        const QString last = any ? QString::number(placed[static_cast<std::size_t>(ep)].back()) : QString("—");
        const int ranks = static_cast<int>(placed.size());
        add(move_edge_expert(ep, -1),
            ep > 0 ? tr("Move expert %1 of EP rank %2 to EP rank %3\tShift+↑").arg(first).arg(ep).arg(ep - 1)
                   : tr("Move expert %1 of EP rank %2 back (no EP rank before it)\tShift+↑").arg(first).arg(ep));
        add(move_edge_expert(ep, 1),
            ep + 1 < ranks ? tr("Move expert %1 of EP rank %2 to EP rank %3\tShift+↓").arg(last).arg(ep).arg(ep + 1)
                           : tr("Move expert %1 of EP rank %2 on (no EP rank after it)\tShift+↓").arg(last).arg(ep));
    }
    menu.setToolTipsVisible(true);
}

}  // namespace meshwork::gui
