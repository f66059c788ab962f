#include "gui/compare/step_origin.h"

#include <limits>

namespace meshwork::gui {

std::optional<std::int64_t> first_step_start_ns(const profiler::TraceReader& trace) {
    int first_step = std::numeric_limits<int>::max();
    std::int64_t start = std::numeric_limits<std::int64_t>::max();
    trace.for_each_event([&](const TraceEvent& e) {
        if (e.step < 0) return;
        if (e.step < first_step) {
            first_step = e.step;
            start = e.start_ns;
        } else if (e.step == first_step && e.start_ns < start) {
            start = e.start_ns;
        }
    });
    if (first_step == std::numeric_limits<int>::max()) return std::nullopt;
    return start;
}

}  // namespace meshwork::gui
