// Re-ranking with the discrete-event simulator (core/sim): the analytical cost model ranks
// the whole space, the simulator re-costs the front-runners, whose pipeline timing it
// follows event by event instead of in closed form.
#pragma once

#include "core/search/search.h"

namespace meshwork::search {

// A reranker for SearchHooks::rerank that fills the estimate from simulate_layout().
RerankFn simulator_rerank();
inline constexpr const char* kSimulatorRerankName = "simulator";

}  // namespace meshwork::search
