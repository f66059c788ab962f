#include "core/search/ranking.h"

#include <algorithm>

namespace meshwork::search {

bool ranks_before(const Scored& a, const Scored& b) {
    if (a.tokens_per_s != b.tokens_per_s) return a.tokens_per_s > b.tokens_per_s;
    if (a.peak_bytes != b.peak_bytes) return a.peak_bytes < b.peak_bytes;
    return a.ordinal < b.ordinal;
}

bool closer_to_fitting(const Scored& a, const Scored& b) {
    if (a.overflow_bytes != b.overflow_bytes) return a.overflow_bytes < b.overflow_bytes;
    return a.ordinal < b.ordinal;
}

void TopK::insert(const Scored& s) {
    if (capacity_ == 0 || !would_keep(s)) return;
    const auto at = std::upper_bound(items_.begin(), items_.end(), s, before_);
    items_.insert(at, s);
    if (items_.size() > capacity_) items_.pop_back();
}

void TopK::merge(const TopK& other) {
    for (const auto& s : other.items_) insert(s);
}

}  // namespace meshwork::search
