#include "core/cost/host_sharing.h"

#include <algorithm>

namespace meshwork::cost {

int ranks_per_node(const ClusterSpec& cluster, int world_size) {
    return std::max(1, std::min(world_size, cluster.gpus_per_node));
}

double host_bound_step_s(const ClusterSpec& cluster, int world_size, double mean_rank_compute_s) {
    const double ranks = ranks_per_node(cluster, world_size);
    // With a core per rank each rank computes unhindered: the rank's own timeline decides.
    if (cluster.host_cores <= 0 || ranks <= cluster.host_cores || mean_rank_compute_s <= 0) return 0;
    return ranks * mean_rank_compute_s / cluster.host_cores;
}

}  // namespace meshwork::cost
