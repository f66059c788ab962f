#include "gui/mesh/stage_colours.h"

namespace meshwork::gui {

QColor stage_colour(int stage) {
    static const QColor colours[] = {QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b),
                                     QColor(0x59, 0xa1, 0x4f), QColor(0xb0, 0x7a, 0xa1),
                                     QColor(0x76, 0xb7, 0xb2), QColor(0xed, 0xc9, 0x48),
                                     QColor(0xe1, 0x57, 0x59), QColor(0x9c, 0x75, 0x5f),
                                     QColor(0xff, 0x9d, 0xa7), QColor(0xba, 0xb0, 0xac)};
    return colours[(stage < 0 ? 0 : stage) % 10];
}

}  // namespace meshwork::gui
