#include "core/export/stage_split.h"

#include <algorithm>

namespace meshwork {

SplitShape classify_split(const std::vector<int>& s) {
    SplitShape out;
    if (s.empty()) return out;
    if (std::all_of(s.begin(), s.end(), [&](int n) { return n == s.front(); })) {
        out.even = true;
        out.first = out.middle = out.last = s.front();
        return out;
    }
    if (s.size() < 2) return out;
    out.first = s.front();
    out.last = s.back();
    // With two chunks there is no middle; take the larger end so callers have a base count.
    out.middle = s.size() == 2 ? std::max(out.first, out.last) : s[1];
    for (std::size_t i = 1; i + 1 < s.size(); ++i) {
        if (s[i] != out.middle) return SplitShape{};
    }
    out.ends_form = true;
    return out;
}

std::vector<int> ends_split(int chunks, int first, int middle, int last) {
    if (chunks < 2 || first < 0 || middle < 0 || last < 0) return {};
    std::vector<int> out(static_cast<std::size_t>(chunks), middle);
    out.front() = first;
    out.back() = last;
    return out;
}

}  // namespace meshwork
