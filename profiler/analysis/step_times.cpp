#include "profiler/analysis/step_times.h"

#include <utility>

namespace meshwork::profiler {

bool is_device_work(EventKind k) {
    return k == EventKind::Compute || k == EventKind::Communication || k == EventKind::Memcpy ||
           k == EventKind::Memset;
}

StepTimes step_times(std::vector<Interval> all, std::vector<Interval> compute, std::vector<Interval> comm) {
    StepTimes t;
    const auto a = union_of(std::move(all));
    if (a.empty()) return t;
    const auto c = union_of(std::move(compute));
    const auto m = union_of(std::move(comm));
    t.span = a.back().second - a.front().first;
    t.compute = length_ns(c);
    t.comm = length_ns(m);
    t.exposed = t.comm - intersection_ns(c, m);
    t.idle = t.span - length_ns(a);
    return t;
}

}  // namespace meshwork::profiler
