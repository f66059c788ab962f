// Memory of one pipeline stage split by what holds it, as the cost model predicts it at
// the stage's peak (core/cost StageMemory), with the GPU's capacity beside it.
#pragma once

#include <array>
#include <QString>

namespace meshwork::gui {

struct StageMemoryBreakdown {
    // The kinds in the order they are stacked (bottom first) and listed in the legend.
    enum Kind { Params, Grads, Optimizer, Activations, Buffers, Reserved, KindCount };
    int stage = 0;
    std::array<double, KindCount> bytes{};
    double capacity_bytes = 0;

    [[nodiscard]] double total_bytes() const {
        double sum = 0;
        for (double b : bytes) sum += b;
        return sum;
    }
    [[nodiscard]] bool fits() const { return total_bytes() <= capacity_bytes; }
    static QString kind_label(int kind);
};

}  // namespace meshwork::gui
