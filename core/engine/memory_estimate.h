// The engine's own fp32 footprint of a layout on each rank, computed before a run: the
// parameter shards, their gradients, the Adam moments (sharded under ZeRO), and the
// activations each layer keeps per micro-batch times the micro-batches in flight under the
// pipeline schedule, plus one micro-batch of transient buffers. (The cost model in
// core/cost predicts production frameworks' memory; this is what this engine allocates.)
#pragma once

#include <cstddef>
#include <vector>

#include "core/engine/engine_options.h"
#include "core/layout/layout.h"

namespace meshwork::engine {

struct RankMemory {
    int rank = 0;
    std::size_t params_bytes = 0;
    std::size_t grads_bytes = 0;
    std::size_t optimizer_bytes = 0;
    std::size_t activations_bytes = 0;
    std::size_t peak_bytes = 0;
};

std::vector<RankMemory> estimate_memory(const Layout& layout, const EngineOptions& options);

// Physical memory of this machine in bytes (0 when unknown): what a CPU run is held against
// before it starts (meshwork-cli run, the GUI's run dialog).
double host_memory_bytes();

}  // namespace meshwork::engine
