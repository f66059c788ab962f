#include "profiler/analysis/warmup_steps.h"

#include <algorithm>

namespace meshwork::profiler {

std::size_t warmup_items(std::size_t count, int warmup_steps) {
    if (count < 2 || warmup_steps <= 0) return 0;
    return std::min(count - 1, static_cast<std::size_t>(warmup_steps));
}

}  // namespace meshwork::profiler
