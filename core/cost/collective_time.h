// Time of NCCL-style collectives with an alpha-beta model per link tier.
//
// A group inside one node uses the intra-node tier; a group with one rank per node uses
// the inter-node tier; a group with several ranks on each of several nodes takes the
// better of a flat ring over the slower tier and NCCL's hierarchical form (intra-node
// reduce-scatter, inter-node collective on 1/k of the data, intra-node all-gather).
// Ring bus-bandwidth factors: all-reduce 2(n−1)/n, all-gather and reduce-scatter (n−1)/n,
// all-to-all (n−1)/n. Sizes are the full buffer per rank (the all-reduce input, the
// all-gather output). See docs/cost-model.md, "Communication".
#pragma once

#include "core/cluster/cluster_spec.h"
#include "core/cost/group_topology.h"

namespace meshwork::cost {

// Achieved per-rank bandwidth and latency of the two tiers, from the cluster JSON.
struct LinkModel {
    double intra_bytes_per_s = 1;
    double intra_latency_s = 0;
    double inter_bytes_per_s = 1;
    double inter_latency_s = 0;
};

LinkModel link_model(const ClusterSpec& cluster);

double all_reduce_s(const LinkModel& l, const GroupSpan& g, double bytes);
double all_gather_s(const LinkModel& l, const GroupSpan& g, double bytes);
double reduce_scatter_s(const LinkModel& l, const GroupSpan& g, double bytes);
double all_to_all_s(const LinkModel& l, const GroupSpan& g, double bytes);
// One point-to-point transfer between two ranks, inside a node or not.
double send_recv_s(const LinkModel& l, bool crosses_nodes, double bytes);

}  // namespace meshwork::cost
