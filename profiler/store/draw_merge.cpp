#include "profiler/store/draw_merge.h"

#include <algorithm>

namespace meshwork::profiler {

int MergeItem::dominant_kind() const {
    return static_cast<int>(std::max_element(busy_ns.begin(), busy_ns.end()) - busy_ns.begin());
}

std::int64_t MergeItem::busy_total() const {
    std::int64_t t = 0;
    for (auto b : busy_ns) t += b;
    return t;
}

namespace {

void absorb(MergeItem& into, const MergeItem& from) {
    into.start_ns = std::min(into.start_ns, from.start_ns);
    into.end_ns = std::max(into.end_ns, from.end_ns);
    into.count += from.count;
    for (std::size_t k = 0; k < into.busy_ns.size(); ++k) into.busy_ns[k] += from.busy_ns[k];
    if (from.top_duration_ns > into.top_duration_ns) {
        into.top_duration_ns = from.top_duration_ns;
        into.top_name_id = from.top_name_id;
    }
    into.event_id = 0;
}

// One pass: an item narrower than `px` joins the previous item when that one is narrow too
// (or already merged) and starts less than a pixel after it ends.
std::vector<MergeItem> fold_pass(const std::vector<MergeItem>& in, std::int64_t px) {
    std::vector<MergeItem> out;
    out.reserve(in.size());
    for (const auto& it : in) {
        if (!out.empty()) {
            MergeItem& last = out.back();
            const bool narrow = it.end_ns - it.start_ns < px;
            const bool last_narrow = last.count > 1 || last.end_ns - last.start_ns < px;
            if (narrow && last_narrow && it.start_ns < last.end_ns + px &&
                last.end_ns - last.start_ns < 2 * px) {
                absorb(last, it);
                continue;
            }
        }
        out.push_back(it);
    }
    return out;
}

// Last resort: max_items equal slots, each item going to the slot of its (clipped) start.
std::vector<MergeItem> bin(const std::vector<MergeItem>& in, std::int64_t t0, std::int64_t t1,
                           std::size_t max_items) {
    const std::int64_t width = std::max<std::int64_t>(
        1, (t1 - t0 + static_cast<std::int64_t>(max_items) - 1) /
               static_cast<std::int64_t>(max_items));
    std::vector<MergeItem> out;
    std::int64_t current_slot = -1;
    for (const auto& it : in) {
        const std::int64_t slot =
            std::min<std::int64_t>(static_cast<std::int64_t>(max_items) - 1,
                                   (std::max(it.start_ns, t0) - t0) / width);
        if (!out.empty() && slot == current_slot) {
            absorb(out.back(), it);
        } else {
            out.push_back(it);
            current_slot = slot;
        }
    }
    return out;
}

}  // namespace

std::vector<MergeItem> merge_for_drawing(std::vector<MergeItem> items, std::int64_t t0_ns,
                                         std::int64_t t1_ns, std::size_t max_items) {
    if (max_items == 0 || t1_ns <= t0_ns) return {};
    const auto n = static_cast<std::int64_t>(max_items);
    std::int64_t px = std::max<std::int64_t>(1, (t1_ns - t0_ns + n - 1) / n);
    std::vector<MergeItem> out = fold_pass(items, px);
    // Widening the pixel a few times handles bursts; nested ranges that all span the window
    // never fold this way, hence the binning below.
    for (int round = 0; out.size() > max_items && round < 4; ++round) {
        px *= 2;
        out = fold_pass(out, px);
    }
    if (out.size() > max_items) out = bin(out, t0_ns, t1_ns, max_items);
    return out;
}

}  // namespace meshwork::profiler
