// Pipeline splits the search tries: the balanced split, and uneven ones whose first and
// last model chunks are lighter (they also carry the embedding and the LM head, as
// Megatron's --decoder-first/last-pipeline-num-layers allow).
#pragma once

#include <vector>

namespace meshwork::search {

// first, middle (every chunk but the ends), last; all zero = the balanced split of
// balanced_stage_split(), written as an empty layers_per_stage.
struct StageSplit {
    int first = 0, middle = 0, last = 0;
    [[nodiscard]] bool balanced() const { return first == 0 && middle == 0 && last == 0; }
    bool operator==(const StageSplit&) const = default;
};

// The balanced split first, then every split where the middle chunks hold q layers each
// and the ends q − a and q − b (0 ≤ a, b ≤ max_lighter, each end ≥ 0 layers: an end chunk
// may hold only the embedding or only the head and loss, as Megatron-LM's
// --account-for-embedding/loss-in-pipeline-split build it) that differs
// from the balanced one, in increasing (a, b). Only the balanced split when chunks < 2 or
// no such split places every layer (validation then refuses it when layers < chunks).
std::vector<StageSplit> stage_splits(int layers, int chunks, int max_lighter);

// Writes `split` as Placement::layers_per_stage for `chunks` chunks (cleared when
// balanced); does not allocate once `out` has capacity for `chunks` entries.
void write_layers_per_stage(const StageSplit& split, int chunks, std::vector<int>& out);

}  // namespace meshwork::search
