#include "core/cost/launch_cost.h"

#include <algorithm>

namespace meshwork::cost {

double lost_to_launches_s(int kernels, double host_s, double gpu_s, int syncs) {
    const double gaps = std::max(0, kernels) * kKernelGapS;
    return std::max(gaps, host_s - std::max(0.0, gpu_s)) + std::max(0, syncs) * kSyncGapS;
}

namespace {
// The host's time to issue a half: one graph launch when captured, else one per kernel.
double half_host_s(const HalfPass& h) {
    if (h.kernels <= 0) return 0;
    return h.captured ? kGraphLaunchS : h.kernels * kHostPerKernelS;
}
}  // namespace

double exposed_layer_launch_s(const HalfPass& attention, const HalfPass& mlp) {
    return lost_to_launches_s(attention.kernels + mlp.kernels, half_host_s(attention) + half_host_s(mlp),
                              attention.gpu_s + mlp.gpu_s, attention.syncs + mlp.syncs);
}

}  // namespace meshwork::cost
