// Ranks that share a host's cores. The CPU engine runs every rank as a thread of one
// process: with more ranks on a node than cores the ranks take turns, and the node then
// needs at least its ranks' total compute divided by its cores for a step, however the
// work is split between them (a throughput bound). GPUs (ClusterSpec::host_cores = 0) give
// every rank a device of its own: no bound. See docs/cost-model.md, "Ranks sharing a host".
#pragma once

#include "core/cluster/cluster_spec.h"

namespace meshwork::cost {

// Ranks of a `world_size`-rank job on one node of `cluster`.
int ranks_per_node(const ClusterSpec& cluster, int world_size);

// The shortest step the cores of one node allow, given the mean compute of one rank in one
// step (kernels and optimizer): ranks_per_node · mean_rank_compute_s / host_cores when the
// node has more ranks than cores, else 0 (no bound).
double host_bound_step_s(const ClusterSpec& cluster, int world_size, double mean_rank_compute_s);

}  // namespace meshwork::cost
