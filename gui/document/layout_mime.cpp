#include "gui/document/layout_mime.h"

#include <QStringList>

#include <algorithm>

namespace meshwork::gui {

QMimeData* make_index_mime(const QString& type, const std::vector<int>& indices) {
    QStringList parts;
    for (int i : indices) parts << QString::number(i);
    auto* mime = new QMimeData;
    mime->setData(type, parts.join(',').toUtf8());
    mime->setText(parts.join(", "));
    return mime;
}

std::vector<int> read_index_mime(const QMimeData* mime, const QString& type) {
    std::vector<int> out;
    if (!mime || !mime->hasFormat(type)) return out;
    for (const auto& part : QString::fromUtf8(mime->data(type)).split(',', Qt::SkipEmptyParts)) {
        bool ok = false;
        const int v = part.toInt(&ok);
        if (ok) out.push_back(v);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace meshwork::gui
