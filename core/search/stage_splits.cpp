#include "core/search/stage_splits.h"

#include <algorithm>

#include "core/layout/layout.h"

namespace meshwork::search {

void write_layers_per_stage(const StageSplit& s, int chunks, std::vector<int>& out) {
    if (s.balanced() || chunks < 1) {
        out.clear();
        return;
    }
    out.resize(static_cast<std::size_t>(chunks));
    std::fill(out.begin(), out.end(), s.middle);
    out.front() = s.first;
    out.back() = s.last;
}

std::vector<StageSplit> stage_splits(int layers, int chunks, int max_lighter) {
    std::vector<StageSplit> out{StageSplit{}};
    // With end chunks of no layer, chunks − 2 layers can fill them.
    if (chunks < 2 || layers < chunks - 2 * std::max(0, max_lighter)) return out;
    std::vector<std::vector<int>> seen{balanced_stage_split(layers, chunks)};
    std::vector<int> split;
    for (int a = 0; a <= max_lighter; ++a) {
        for (int b = 0; b <= max_lighter; ++b) {
            // chunks·q − a − b = layers
            if ((layers + a + b) % chunks != 0) continue;
            const int q = (layers + a + b) / chunks;
            if (q < 1) continue;  // middle chunks hold at least one layer
            const StageSplit s{q - a, q, q - b};
            // An end chunk may hold no layer: the embedding alone, or the head and loss
            // alone (Megatron-LM's accounted split, core/layout/pipeline_split.h).
            if (s.first < 0 || s.last < 0) continue;
            write_layers_per_stage(s, chunks, split);
            // With two chunks there is no middle: different (a, b) can give one split.
            if (std::find(seen.begin(), seen.end(), split) != seen.end()) continue;
            seen.push_back(split);
            out.push_back(s);
        }
    }
    return out;
}

}  // namespace meshwork::search
