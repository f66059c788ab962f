#include "core/cost/launch_cost.h"

#include <algorithm>

namespace meshwork::cost {

double exposed_launch_s(const HalfPass& half) {
    if (half.kernels <= 0 && half.syncs <= 0) return 0;
    const double host = half.captured ? kGraphLaunchS : half.kernels * kHostPerKernelS;
    const double gaps = std::max(0, half.kernels) * kKernelGapS;
    return std::max(gaps, host - std::max(0.0, half.gpu_s)) + std::max(0, half.syncs) * kSyncGapS;
}

}  // namespace meshwork::cost
