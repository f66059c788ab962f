#include "gui/mesh/axis_spin_box.h"

#include <algorithm>

namespace meshwork::gui {

namespace {
// Values tried per step at most: candidates that cannot form (a tp that does not divide the
// GPUs) are refused before validation and cost nothing; this bounds the validated ones.
constexpr int kMaxProbes = 1024;
}  // namespace

int AxisSpinBox::walk(int steps) const {
    const int direction = steps > 0 ? 1 : -1;
    int remaining = steps > 0 ? steps : -steps;
    int found = value();
    int probes = 0;
    for (int v = value() + direction; v >= minimum() && v <= maximum() && probes < kMaxProbes;
         v += direction, ++probes) {
        if (!accepts_(v)) continue;
        found = v;
        if (--remaining == 0) break;
    }
    return found;
}

std::pair<int, int> AxisSpinBox::neighbours() const {
    const auto it = neighbours_.find(value());
    if (it != neighbours_.end()) return it->second;
    const std::pair<int, int> n{walk(-1), walk(1)};
    neighbours_.emplace(value(), n);
    return n;
}

int AxisSpinBox::next_accepted(int steps) const {
    if (!accepts_ || steps == 0) return std::clamp(value() + steps, minimum(), maximum());
    if (steps == 1) return neighbours().second;
    if (steps == -1) return neighbours().first;
    return walk(steps);
}

void AxisSpinBox::stepBy(int steps) {
    if (!accepts_) {
        QSpinBox::stepBy(steps);
        return;
    }
    const int target = next_accepted(steps);
    if (target != value()) setValue(target);
}

QAbstractSpinBox::StepEnabled AxisSpinBox::stepEnabled() const {
    if (!accepts_ || !isEnabled() || isReadOnly()) return QSpinBox::stepEnabled();
    const auto [below, above] = neighbours();
    StepEnabled e = StepNone;
    if (above != value()) e |= StepUpEnabled;
    if (below != value()) e |= StepDownEnabled;
    return e;
}

}  // namespace meshwork::gui
