// Colours of timeline items: the kind picks the family (compute blue-green, communication
// orange-red, copies green, markers violet, idle grey) and the layer shifts the shade, so
// neighbouring layers stay apart while a kind stays recognisable.
#pragma once

#include <QColor>

#include <cstddef>

#include "core/trace/trace_event.h"

namespace meshwork::gui {

QColor item_colour(EventKind kind, int layer);
// Folded runs: the family colour, desaturated, so that a run never reads as one event.
QColor folded_colour(EventKind kind);
// Black or white, whichever reads better on `background`.
QColor text_colour_on(const QColor& background);

// item_colour() and folded_colour() precomputed: a frame asks for tens of thousands.
class ItemColourTable {
public:
    ItemColourTable();
    [[nodiscard]] const QColor& item(EventKind kind, int layer) const {
        const auto k = static_cast<std::size_t>(kind) % kKinds;
        return items_[k][static_cast<std::size_t>(layer < 0 ? 0 : 1 + layer % (kLayers - 1))];
    }
    [[nodiscard]] const QColor& folded(EventKind kind) const { return folded_[static_cast<std::size_t>(kind) % kKinds]; }

private:
    static constexpr std::size_t kKinds = 6;
    static constexpr std::size_t kLayers = 49;  // no layer, then layers modulo 48
    QColor items_[kKinds][kLayers];
    QColor folded_[kKinds];
};

}  // namespace meshwork::gui
