#include "core/cost/group_topology.h"

#include <algorithm>

namespace meshwork::cost {

GroupSpan group_span(int size, int stride, int gpus_per_node) {
    GroupSpan g;
    g.size = std::max(1, size);
    const int gpn = std::max(1, gpus_per_node);
    stride = std::max(1, stride);
    if (stride >= gpn) {
        g.per_node = 1;
    } else {
        // Members 0, stride, 2·stride, ... below gpn share the first node.
        g.per_node = std::min(g.size, (gpn + stride - 1) / stride);
    }
    g.nodes = (g.size + g.per_node - 1) / g.per_node;
    return g;
}

GroupSpan group_span2(int size_a, int stride_a, int size_b, int stride_b, int gpus_per_node) {
    size_a = std::max(1, size_a);
    size_b = std::max(1, size_b);
    if (stride_b < stride_a) {
        std::swap(size_a, size_b);
        std::swap(stride_a, stride_b);
    }
    GroupSpan g;
    g.size = size_a * size_b;
    const long long gpn = std::max(1, gpus_per_node);
    // Count the members i·stride_a + j·stride_b of the group of rank 0 below gpn; at most
    // gpn iterations.
    long long count = 0;
    for (long long j = 0; j < size_b && j * stride_b < gpn; ++j) {
        const long long room = gpn - j * stride_b;
        count += std::min<long long>(size_a, (room + stride_a - 1) / stride_a);
    }
    g.per_node = static_cast<int>(std::max<long long>(1, count));
    g.nodes = (g.size + g.per_node - 1) / g.per_node;
    return g;
}

}  // namespace meshwork::cost
