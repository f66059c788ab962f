#include "core/cost/collective_time.h"

#include <algorithm>

namespace meshwork::cost {

LinkModel link_model(const ClusterSpec& c) {
    LinkModel l;
    l.intra_bytes_per_s =
        std::max(1.0, c.intra_node.bandwidth_bytes_per_s * c.efficiency.intra_node_link);
    l.inter_bytes_per_s =
        std::max(1.0, c.inter_node.bandwidth_bytes_per_s * c.efficiency.inter_node_link);
    l.intra_latency_s = std::max(0.0, c.intra_node.latency_s);
    l.inter_latency_s = std::max(0.0, c.inter_node.latency_s);
    return l;
}

namespace {

// A ring pass that moves `factor`·bytes per rank in `steps` latency-bound steps.
double ring_s(double factor, double bytes, double bw, double latency, double steps) {
    return factor * bytes / bw + steps * latency;
}

// `phases` = 2 for an all-reduce (reduce-scatter + all-gather), 1 for either half.
double collective_s(const LinkModel& l, const GroupSpan& g, double bytes, double phases) {
    const double n = g.size;
    if (g.size <= 1 || bytes <= 0) return 0;
    const double f = phases * (n - 1) / n;
    if (!g.crosses_nodes()) return ring_s(f, bytes, l.intra_bytes_per_s, l.intra_latency_s, phases * (n - 1));
    const double flat = ring_s(f, bytes, std::min(l.intra_bytes_per_s, l.inter_bytes_per_s),
                               std::max(l.intra_latency_s, l.inter_latency_s), phases * (n - 1));
    if (g.per_node <= 1) return flat;
    const double k = g.per_node;
    const double nodes = g.nodes;
    const double intra = ring_s(phases * (k - 1) / k, bytes, l.intra_bytes_per_s,
                                l.intra_latency_s, phases * (k - 1));
    const double inter = ring_s(phases * (nodes - 1) / nodes, bytes / k, l.inter_bytes_per_s,
                                l.inter_latency_s, phases * (nodes - 1));
    return std::min(flat, intra + inter);
}

}  // namespace

double all_reduce_s(const LinkModel& l, const GroupSpan& g, double bytes) {
    return collective_s(l, g, bytes, 2.0);
}

double all_gather_s(const LinkModel& l, const GroupSpan& g, double bytes) {
    return collective_s(l, g, bytes, 1.0);
}

double reduce_scatter_s(const LinkModel& l, const GroupSpan& g, double bytes) {
    return collective_s(l, g, bytes, 1.0);
}

double all_to_all_s(const LinkModel& l, const GroupSpan& g, double bytes) {
    if (g.size <= 1 || bytes <= 0) return 0;
    const double n = g.size;
    const double k = g.per_node;
    // Each rank keeps 1/n of its buffer, sends (k−1)/n inside its node and (n−k)/n to other
    // nodes; both tiers run at once. Messages are posted together, so one latency per tier.
    const double intra = (k - 1) / n * bytes / l.intra_bytes_per_s + (k > 1 ? l.intra_latency_s : 0);
    const double inter =
        (n - k) / n * bytes / l.inter_bytes_per_s + (n > k ? l.inter_latency_s : 0);
    return std::max(intra, inter);
}

double send_recv_s(const LinkModel& l, bool crosses_nodes, double bytes) {
    if (bytes <= 0) return 0;
    return crosses_nodes ? l.inter_latency_s + bytes / l.inter_bytes_per_s
                         : l.intra_latency_s + bytes / l.intra_bytes_per_s;
}

}  // namespace meshwork::cost
