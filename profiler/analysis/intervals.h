// Unions and intersections of time intervals, the arithmetic under Holistic Trace
// Analysis' temporal breakdown (union of kernels, overlap of compute and communication).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace meshwork::profiler {

using Interval = std::pair<std::int64_t, std::int64_t>;  // [start_ns, end_ns)

// Sorts and merges overlapping or touching intervals.
std::vector<Interval> union_of(std::vector<Interval> intervals);
// Total length of disjoint sorted intervals.
std::int64_t length_ns(const std::vector<Interval>& disjoint);
// Length of the intersection of two disjoint sorted lists.
std::int64_t intersection_ns(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace meshwork::profiler
