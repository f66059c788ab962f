// Where the ranks of one process group sit: how many share a node and how many nodes the
// group spans. Computed from the strides of core/mesh/mesh_shape.h (no allocation), because
// the estimate runs millions of times in a search.
#pragma once

#include "core/mesh/mesh_shape.h"

namespace meshwork::cost {

struct GroupSpan {
    int size = 1;      // ranks in the group
    int per_node = 1;  // ranks of the group inside one node
    int nodes = 1;     // nodes the group spans
    [[nodiscard]] bool crosses_nodes() const { return nodes > 1; }
};

// The span of a group of `size` ranks spaced `stride` apart, on nodes of `gpus_per_node`.
GroupSpan group_span(int size, int stride, int gpus_per_node);
// The span of a group over two axes (dp × cp): `size_a` ranks `stride_a` apart times
// `size_b` ranks `stride_b` apart.
GroupSpan group_span2(int size_a, int stride_a, int size_b, int stride_b, int gpus_per_node);

}  // namespace meshwork::cost
