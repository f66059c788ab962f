// Merging events into drawable items for a timeline window: runs of events narrower than a
// pixel fold into one item carrying a count, the way Tracy folds zones, and the result is
// guaranteed to hold at most the number of items asked for.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace meshwork::profiler {

// An event or an already merged group, sorted by start before merging.
struct MergeItem {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t count = 1;
    std::array<std::int64_t, 6> busy_ns{};  // per EventKind
    std::int64_t top_duration_ns = 0;       // longest event inside, for the name
    std::int64_t top_name_id = 0;
    std::int64_t event_id = 0;              // set while count == 1

    [[nodiscard]] int dominant_kind() const;
    [[nodiscard]] std::int64_t busy_total() const;
};

// Folds `items` (sorted by start) for a window [t0, t1) drawn `max_items` pixels wide.
// Narrow neighbours closer than a pixel merge; if that still leaves too many (deeply nested
// ranges), the pixel is widened, and as a last resort items are binned into max_items equal
// slots, which always fits.
std::vector<MergeItem> merge_for_drawing(std::vector<MergeItem> items, std::int64_t t0_ns,
                                         std::int64_t t1_ns, std::size_t max_items);

}  // namespace meshwork::profiler
