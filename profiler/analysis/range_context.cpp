#include "profiler/analysis/range_context.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <string>

namespace meshwork::profiler {

namespace {

// Looking back this many ranges (by start) is enough for any real nesting depth and keeps a
// lookup cheap however many ranges a thread has.
constexpr std::size_t kMaxLookBack = 256;

// The number right after `key` plus one optional separator (' ', '=', '#', '_', '.', ':').
std::int64_t number_after_64(std::string_view name, std::string_view key) {
    std::size_t pos = 0;
    while ((pos = name.find(key, pos)) != std::string_view::npos) {
        const bool word_start = pos == 0 || !std::isalpha(static_cast<unsigned char>(name[pos - 1]));
        std::size_t p = pos + key.size();
        if (p < name.size() && std::string_view(" =#_.:").find(name[p]) != std::string_view::npos) ++p;
        std::int64_t v = -1;
        if (word_start && p < name.size()) {
            const auto r = std::from_chars(name.data() + p, name.data() + name.size(), v);
            if (r.ec == std::errc() && v >= 0) return v;
        }
        pos += key.size();
    }
    return -1;
}

int number_after(std::string_view name, std::string_view key) {
    const std::int64_t v = number_after_64(name, key);
    return v > std::numeric_limits<int>::max() ? -1 : static_cast<int>(v);
}

}  // namespace

RangeContext parse_range_context(std::string_view name) {
    RangeContext c;
    c.step = number_after(name, "ProfilerStep");
    if (c.step < 0) c.step = number_after(name, "step");
    c.micro_batch = number_after(name, "microbatch");
    if (c.micro_batch < 0) c.micro_batch = number_after(name, "micro_batch");
    if (c.micro_batch < 0) c.micro_batch = number_after(name, "mb");
    c.layer = number_after(name, "layer");
    if (c.layer < 0) c.layer = number_after(name, "block");
    c.bytes = number_after_64(name, "bytes=");
    if (c.bytes >= 0) c.group_size = std::max(0, number_after(name, "group="));
    return c;
}

void RangeContextMap::add_range(std::int64_t thread, std::int64_t start_ns, std::int64_t end_ns,
                                std::string_view name, std::int64_t process) {
    const RangeContext c = parse_range_context(name);
    if (c.step < 0 && c.micro_batch < 0 && c.layer < 0 && c.bytes < 0) return;
    by_thread_[thread].push_back({start_ns, end_ns, c});
    by_process_[process].push_back({start_ns, end_ns, c});
    if (c.step >= 0) steps_by_process_[process].push_back({start_ns, end_ns, c});
}

void RangeContextMap::finalize() {
    auto by_start = [](const Range& a, const Range& b) { return a.start_ns < b.start_ns; };
    for (auto* m : {&by_thread_, &by_process_, &steps_by_process_}) {
        for (auto& [key, v] : *m) std::stable_sort(v.begin(), v.end(), by_start);
    }
}

RangeContext RangeContextMap::lookup_in(const std::vector<Range>& v, std::int64_t t) {
    RangeContext out;
    auto it = std::upper_bound(v.begin(), v.end(), t,
                               [](std::int64_t x, const Range& r) { return x < r.start_ns; });
    // Walk back from the latest range starting at or before t: later starts are inner ranges.
    for (std::size_t n = 0; it != v.begin() && n < kMaxLookBack; ++n) {
        --it;
        if (it->end_ns <= t) continue;
        if (out.step < 0) out.step = it->ctx.step;
        if (out.micro_batch < 0) out.micro_batch = it->ctx.micro_batch;
        if (out.layer < 0) out.layer = it->ctx.layer;
        if (out.bytes < 0) {
            out.bytes = it->ctx.bytes;
            out.group_size = it->ctx.group_size;
        }
    }
    return out;
}

RangeContext RangeContextMap::lookup(std::int64_t thread, std::int64_t time_ns) const {
    auto it = by_thread_.find(thread);
    return it == by_thread_.end() ? RangeContext{} : lookup_in(it->second, time_ns);
}

RangeContext RangeContextMap::lookup_any(std::int64_t time_ns, std::int64_t process) const {
    auto it = by_process_.find(process);
    return it == by_process_.end() ? RangeContext{} : lookup_in(it->second, time_ns);
}

RangeContext RangeContextMap::launch_context(std::int64_t thread, std::int64_t time_ns, std::int64_t process) const {
    RangeContext c = lookup(thread, time_ns);
    if (c.step < 0) {
        auto it = steps_by_process_.find(process);
        if (it != steps_by_process_.end()) c.step = lookup_in(it->second, time_ns).step;
    }
    return c;
}

}  // namespace meshwork::profiler
