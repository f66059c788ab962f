#include "gui/mesh/mesh_geometry.h"

#include <QObject>

#include <algorithm>

#include "core/mesh/device_mesh.h"

namespace meshwork::gui {

const RankTile* MeshGeometry::tile_at(QPointF pos) const {
    for (const auto& t : tiles) {
        if (t.rect.contains(pos)) return &t;
    }
    return nullptr;
}

const StageColumn* MeshGeometry::stage_at(QPointF pos) const {
    for (const auto& s : stages) {
        if (s.rect.contains(pos)) return &s;
    }
    return nullptr;
}

const RankTile* MeshGeometry::tile_of_rank(int rank) const {
    for (const auto& t : tiles) {
        if (t.rank == rank) return &t;
    }
    return nullptr;
}

MeshGeometry layout_mesh_geometry(const Layout& layout, const QRectF& area, double header_height) {
    MeshGeometry g;
    const auto& s = layout.parallel.mesh;
    if (s.pp < 1 || s.tp < 1 || s.dp < 1 || s.cp < 1) return g;
    const DeviceMesh mesh = layout.mesh();
    const int stages = std::min(s.pp, kMaxStagesDrawn);
    const int replicas = std::min(s.dp * s.cp, kMaxReplicasDrawn);
    g.hidden_stages = s.pp - stages;
    g.hidden_replicas = s.dp * s.cp - replicas;

    const double margin = 14, gap = stages > 12 ? 6 : 12, row_gap = 6, pad = 5, tile_gap = 3;
    const double legend_h = 26;
    g.legend = QRectF(area.left() + margin, area.bottom() - margin - legend_h,
                      area.width() - 2 * margin, legend_h);
    const double top = area.top() + margin;
    const double bottom = g.legend.top() - 8;
    const double col_w = (area.width() - 2 * margin - gap * (stages - 1)) / stages;
    // The TP ranks of a replica sit side by side while a tile stays wide enough for a rank
    // number; beyond that they wrap into a grid inside the replica.
    const double inner_w = col_w - 2 * pad - 2 * 3;
    const int tile_cols = std::clamp(static_cast<int>((inner_w + tile_gap) / (kMinTileWidth + tile_gap)), 1, s.tp);
    // Prefer a full grid (8 → 4×2 rather than 5+3) when a divisor comes close.
    int cols = tile_cols;
    for (int d = tile_cols; d * 2 > tile_cols; --d) {
        if (s.tp % d == 0) {
            cols = d;
            break;
        }
    }
    const int tile_rows = (s.tp + cols - 1) / cols;
    const double avail_rows = bottom - top - header_height - 6;
    // Rows stay compact (a tile is a GPU, not a poster); extra height stays empty.
    const double max_row_h = tile_rows * 86.0;
    const double row_h = std::clamp((avail_rows - row_gap * (replicas - 1)) / replicas, 18.0, max_row_h);
    const double col_h = header_height + 6 + replicas * row_h + (replicas - 1) * row_gap + pad;
    const double tile_w = (inner_w - tile_gap * (cols - 1)) / cols;
    const double tile_h = (row_h - 6 - tile_gap * (tile_rows - 1)) / tile_rows;

    for (int st = 0; st < stages; ++st) {
        const double x = area.left() + margin + st * (col_w + gap);
        StageColumn column;
        column.stage = st;
        column.rect = QRectF(x, top, col_w, std::min(col_h, bottom - top));
        column.header = QRectF(x, top, col_w, header_height);
        g.stages.push_back(column);
        for (int rep = 0; rep < replicas; ++rep) {
            const double y = top + header_height + 6 + rep * (row_h + row_gap);
            ReplicaRow row;
            row.stage = st;
            row.dp = rep / s.cp;
            row.cp = rep % s.cp;
            row.rect = QRectF(x + pad, y, col_w - 2 * pad, row_h);
            g.rows.push_back(row);
            for (int t = 0; t < s.tp; ++t) {
                RankCoords c;
                c.tp = t;
                c.pp = st;
                c.dp = row.dp;
                c.cp = row.cp;
                RankTile tile;
                tile.rank = mesh.rank_of(c);
                tile.coords = mesh.coords(tile.rank);
                const int gx = t % cols, gy = t / cols;
                tile.rect = QRectF(row.rect.left() + 3 + gx * (tile_w + tile_gap), y + 3 + gy * (tile_h + tile_gap),
                                   std::max(1.0, tile_w), std::max(1.0, tile_h));
                g.tiles.push_back(tile);
            }
        }
    }
    return g;
}

QString gpu_count_text(const Layout& layout) {
    const auto& m = layout.parallel.mesh;
    const long long in_mesh = static_cast<long long>(m.tp) * m.cp * m.dp * m.pp;
    if (in_mesh == layout.gpus) return QObject::tr("%1 GPUs").arg(layout.gpus);
    return QObject::tr("mesh of %1 GPUs (layout: %2)").arg(in_mesh).arg(layout.gpus);
}

}  // namespace meshwork::gui
