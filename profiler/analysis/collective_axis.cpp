// The axis of a Meshwork communication event name (collective_axis.h).
#include "profiler/analysis/collective_axis.h"

#include <string>

namespace meshwork::profiler {

std::optional<Axis> axis_of_name(std::string_view event_name) {
    const auto open = event_name.find('(');
    if (open == std::string_view::npos) return std::nullopt;
    const auto close = event_name.find(')', open);
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view inside = event_name.substr(open + 1, close - open - 1);
    for (std::size_t a = 0; a < kAxisCount; ++a) {
        if (to_string(static_cast<Axis>(a)) == inside) return static_cast<Axis>(a);
    }
    return std::nullopt;
}

}  // namespace meshwork::profiler
