#include "core/cost/activation_offload.h"

#include <algorithm>

namespace meshwork::cost {

int offloaded_layers_in(int first, int layers, int offload_layers) {
    return std::clamp(offload_layers - first, 0, std::max(0, layers));
}

double offload_exposed_s(double layer_bytes, double hiding_pass_s, double host_bytes_per_s, double host_latency_s) {
    if (!(host_bytes_per_s > 0) || !(layer_bytes > 0)) return 0;
    const double copy_s = std::max(0.0, host_latency_s) + layer_bytes / host_bytes_per_s;
    return std::max(0.0, copy_s - std::max(0.0, hiding_pass_s));
}

}  // namespace meshwork::cost
