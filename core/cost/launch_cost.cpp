#include "core/cost/launch_cost.h"

#include <algorithm>

namespace meshwork::cost {

double lost_to_launches_s(int kernels, double host_s, double gpu_s, int syncs) {
    const double gaps = std::max(0, kernels) * kKernelGapS;
    return std::max(gaps, host_s - std::max(0.0, gpu_s)) + std::max(0, syncs) * kSyncGapS;
}

double exposed_launch_s(const HalfPass& half) {
    if (half.kernels <= 0 && half.syncs <= 0) return 0;
    const double host = half.captured ? kGraphLaunchS : half.kernels * kHostPerKernelS;
    return lost_to_launches_s(half.kernels, host, half.gpu_s, half.syncs);
}

double exposed_layer_launch_s(const HalfPass& attention, const HalfPass& mlp) {
    auto host = [](const HalfPass& h) {
        if (h.kernels <= 0) return 0.0;
        return h.captured ? kGraphLaunchS : h.kernels * kHostPerKernelS;
    };
    return lost_to_launches_s(attention.kernels + mlp.kernels, host(attention) + host(mlp),
                              attention.gpu_s + mlp.gpu_s, attention.syncs + mlp.syncs);
}

}  // namespace meshwork::cost
