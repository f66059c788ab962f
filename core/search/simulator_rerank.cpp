#include "core/search/simulator_rerank.h"

#include "core/sim/simulate.h"

namespace meshwork::search {

RerankFn simulator_rerank() {
    return [](const Layout& layout, Estimate& out) { out = simulate_layout(layout).estimate; };
}

}  // namespace meshwork::search
