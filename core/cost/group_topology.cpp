#include "core/cost/group_topology.h"

#include <algorithm>
#include <string_view>

namespace meshwork::cost {

bool axis_strides(const MeshShape& shape, int edp, AxisStrides& out) {
    const std::string_view order = shape.order;
    int dense_stride = 1, expert_stride = 1;
    int seen = 0;
    std::size_t at = 0;
    while (at <= order.size()) {
        std::size_t end = order.find('-', at);
        if (end == std::string_view::npos) end = order.size();
        const std::string_view name = order.substr(at, end - at);
        int dense_size = 1, expert_size = 1;
        int bit = 0;
        if (name == "tp") {
            bit = 1;
            out.tp = dense_stride;
            out.etp = expert_stride;
            dense_size = shape.tp;
            expert_size = shape.etp;
        } else if (name == "cp") {
            bit = 2;
            out.cp = dense_stride;
            dense_size = shape.cp;  // cp folds away in the expert mesh
        } else if (name == "ep") {
            bit = 4;
            out.ep = expert_stride;
            expert_size = shape.ep;  // ep is not an axis of dense layers
        } else if (name == "dp") {
            bit = 8;
            out.dp = dense_stride;
            out.edp = expert_stride;
            dense_size = shape.dp;
            expert_size = edp;
        } else if (name == "pp") {
            bit = 16;
            out.pp = dense_stride;
            dense_size = shape.pp;
            expert_size = shape.pp;
        } else {
            return false;
        }
        if (seen & bit) return false;
        seen |= bit;
        dense_stride *= std::max(1, dense_size);
        expert_stride *= std::max(1, expert_size);
        at = end + 1;
    }
    return seen == 31;
}

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
