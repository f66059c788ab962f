// Where each part of the mesh canvas goes: pipeline stages as columns, DP×CP replicas as
// rows inside a column, the TP ranks of a replica side by side. Computed once per resize or
// layout change and used for painting and hit testing alike.
#pragma once

#include <QRectF>
#include <QString>

#include <vector>

#include "core/layout/layout.h"

namespace meshwork::gui {

struct StageColumn {
    int stage = 0;
    QRectF rect;    // whole column, the drop target for blocks
    QRectF header;  // title and compute share
};

struct ReplicaRow {
    int stage = 0;
    int dp = 0, cp = 0;
    QRectF rect;
};

struct RankTile {
    int rank = 0;
    RankCoords coords;
    QRectF rect;
};

struct MeshGeometry {
    std::vector<StageColumn> stages;
    std::vector<ReplicaRow> rows;
    std::vector<RankTile> tiles;
    QRectF legend;            // the strip at the bottom
    int hidden_stages = 0;    // stages beyond the drawn ones
    int hidden_replicas = 0;  // DP×CP replicas beyond the drawn ones

    [[nodiscard]] const RankTile* tile_at(QPointF pos) const;
    [[nodiscard]] const StageColumn* stage_at(QPointF pos) const;
    [[nodiscard]] const RankTile* tile_of_rank(int rank) const;
};

inline constexpr int kMaxStagesDrawn = 32;
inline constexpr int kMaxReplicasDrawn = 8;  // beyond this a note says how many are hidden
inline constexpr double kMinTileWidth = 30;  // px: room for a three-digit rank

// "64 GPUs", or for a layout whose mesh does not hold its GPUs (an invalid file)
// "mesh of 24 GPUs (layout: 64)": the canvas legend and the status bar say the same.
QString gpu_count_text(const Layout& layout);

// `header_height` fits two lines of the canvas font; `area` is the widget rectangle.
MeshGeometry layout_mesh_geometry(const Layout& layout, const QRectF& area, double header_height);

}  // namespace meshwork::gui
