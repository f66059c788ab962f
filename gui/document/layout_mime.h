// Drag payloads between the model palette and the mesh canvas.
#pragma once

#include <QMimeData>
#include <QString>

#include <vector>

namespace meshwork::gui {

inline const QString kBlocksMime = QStringLiteral("application/x-meshwork-blocks");
inline const QString kExpertsMime = QStringLiteral("application/x-meshwork-experts");

// Transformer block indices or routed expert ids, as a comma-separated list.
QMimeData* make_index_mime(const QString& type, const std::vector<int>& indices);
std::vector<int> read_index_mime(const QMimeData* mime, const QString& type);

}  // namespace meshwork::gui
