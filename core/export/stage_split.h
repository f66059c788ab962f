// Pipeline splits as frameworks describe them: one count for every chunk, or a first and a
// last chunk that differ from equal middle chunks (Megatron's --decoder-first/last-pipeline-
// num-layers, torchtitan's pipeline_parallel_{first,last}_stage_less_layers).
#pragma once

#include <vector>

namespace meshwork {

struct SplitShape {
    bool even = false;       // every chunk holds `middle` layers
    bool ends_form = false;  // chunk 0 holds `first`, the last `last`, all others `middle`
    int first = 0, middle = 0, last = 0;
};

// Classifies layers per chunk; neither flag set means the split has no such short form.
SplitShape classify_split(const std::vector<int>& layers_per_chunk);
// The chunk vector of an ends-form split; empty when `chunks` < 2 or a count is negative.
std::vector<int> ends_split(int chunks, int first, int middle, int last);

}  // namespace meshwork
