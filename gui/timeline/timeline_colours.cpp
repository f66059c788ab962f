#include "gui/timeline/timeline_colours.h"

namespace meshwork::gui {

namespace {
struct Family {
    int hue;
    int hue_spread;  // layers cycle through hue .. hue + spread
    int saturation;
    int value;
};
Family family_of(EventKind kind) {
    switch (kind) {
        case EventKind::Compute: return {195, 50, 150, 215};
        case EventKind::Communication: return {8, 30, 185, 235};
        case EventKind::Memcpy: return {100, 30, 140, 195};
        case EventKind::Memset: return {70, 15, 130, 190};
        case EventKind::Marker: return {275, 25, 90, 200};
        case EventKind::Idle: return {0, 0, 0, 110};
    }
    return {0, 0, 0, 128};
}
}  // namespace

QColor item_colour(EventKind kind, int layer) {
    const Family f = family_of(kind);
    // Golden-ratio steps spread consecutive layers across the family's hue range.
    const int step = layer < 0 ? 0 : (layer * 37) % (f.hue_spread + 1);
    const int value = f.value - (layer < 0 ? 0 : (layer % 3) * 12);
    return QColor::fromHsv((f.hue + step) % 360, f.saturation, value);
}

QColor folded_colour(EventKind kind) {
    const Family f = family_of(kind);
    return QColor::fromHsv(f.hue, f.saturation / 3, f.value - 40);
}

QColor text_colour_on(const QColor& background) {
    return background.lightnessF() > 0.6 ? QColor(0x12, 0x14, 0x17) : QColor(0xf4, 0xf5, 0xf7);
}

ItemColourTable::ItemColourTable() {
    for (std::size_t k = 0; k < kKinds; ++k) {
        const auto kind = static_cast<EventKind>(k);
        // Stored as RGB: reading channels of an HSV-specified QColor converts every time.
        items_[k][0] = item_colour(kind, -1).toRgb();
        for (std::size_t l = 1; l < kLayers; ++l) items_[k][l] = item_colour(kind, static_cast<int>(l - 1)).toRgb();
        folded_[k] = folded_colour(kind).toRgb();
    }
}

}  // namespace meshwork::gui
