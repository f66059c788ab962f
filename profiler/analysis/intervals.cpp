#include "profiler/analysis/intervals.h"

#include <algorithm>

namespace meshwork::profiler {

std::vector<Interval> union_of(std::vector<Interval> v) {
    std::sort(v.begin(), v.end());
    std::vector<Interval> out;
    for (const auto& iv : v) {
        if (iv.second <= iv.first) continue;
        if (!out.empty() && iv.first <= out.back().second) {
            out.back().second = std::max(out.back().second, iv.second);
        } else {
            out.push_back(iv);
        }
    }
    return out;
}

std::int64_t length_ns(const std::vector<Interval>& disjoint) {
    std::int64_t t = 0;
    for (const auto& [s, e] : disjoint) t += e - s;
    return t;
}

std::int64_t intersection_ns(const std::vector<Interval>& a, const std::vector<Interval>& b) {
    std::int64_t t = 0;
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const auto lo = std::max(a[i].first, b[j].first);
        const auto hi = std::min(a[i].second, b[j].second);
        if (hi > lo) t += hi - lo;
        if (a[i].second < b[j].second) ++i; else ++j;
    }
    return t;
}

}  // namespace meshwork::profiler
