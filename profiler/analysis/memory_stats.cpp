#include "profiler/analysis/memory_stats.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/trace/memory_kind.h"
#include "profiler/store/trace_reader.h"

namespace meshwork::profiler {

namespace {

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// What an event changes the allocated total by (as the importers computed the totals).
std::int64_t allocated_before(const MemoryEvent& m, std::int64_t after, std::int64_t previous_after, bool first,
                              bool frees_at_completed) {
    // The total just before the event: the previous event's total, or for the first event of
    // a device the history's start, which its own total and change give back.
    if (!first) return previous_after;
    switch (m.action) {
        case MemoryAction::Alloc: return after - m.bytes;
        case MemoryAction::FreeRequested: return after + m.bytes;
        case MemoryAction::FreeCompleted: return frees_at_completed ? after + m.bytes : after;
        default: return after;
    }
}

}  // namespace

std::string memory_category(const std::string& frames) {
    if (frames.empty()) return "no stack recorded";
    // A Meshwork engine's own allocation names its kind (core/trace/memory_kind.h).
    if (const auto kind = memory_kind_of_frames(frames)) return std::string(memory_kind_name(*kind));
    const std::string f = lower(frames);
    // In order: the first rule that matches any frame wins.
    if (f.find("nccl") != std::string::npos || f.find("c10d") != std::string::npos ||
        f.find("distributed_c10d") != std::string::npos) {
        return "NCCL buffers";
    }
    if (f.find("torch/optim/") != std::string::npos || f.find("optimizer.step") != std::string::npos ||
        f.find("_multi_tensor_adam") != std::string::npos || f.find("_single_tensor_adam") != std::string::npos ||
        f.find("zero_grad") != std::string::npos) {
        return "optimizer step";
    }
    if (f.find("autograd::engine") != std::string::npos || f.find("backward") != std::string::npos) {
        return "backward (gradients)";
    }
    if (f.find("forward") != std::string::npos) return "forward (activations, autograd saved tensors)";
    return "other";
}

MemoryStats memory_stats(const TraceReader& trace) {
    MemoryStats out;
    struct Key {
        int rank, device;
        bool operator==(const Key&) const = default;
    };
    std::vector<std::pair<MemoryEvent, std::int64_t>> events;
    trace.for_each_memory_event([&](const MemoryEvent& m, std::int64_t stack) { events.emplace_back(m, stack); });
    std::unordered_map<std::int64_t, std::string> category_of_stack;
    const auto category = [&](std::int64_t stack) -> const std::string& {
        auto it = category_of_stack.find(stack);
        if (it == category_of_stack.end()) it = category_of_stack.emplace(stack, memory_category(trace.memory_stack(stack))).first;
        return it->second;
    };
    // Events arrive by rank, device, time: one run of them per device.
    for (std::size_t begin = 0; begin < events.size();) {
        const Key key{events[begin].first.rank, events[begin].first.device};
        std::size_t end = begin;
        while (end < events.size() && Key{events[end].first.rank, events[end].first.device} == key) ++end;
        // Histories without free_requested (older PyTorch) free a block at free_completed.
        const bool frees_at_completed = std::none_of(events.begin() + static_cast<std::ptrdiff_t>(begin),
                                                     events.begin() + static_cast<std::ptrdiff_t>(end), [](const auto& e) {
                                                         return e.first.action == MemoryAction::FreeRequested;
                                                     });
        const MemoryAction free_action = frees_at_completed ? MemoryAction::FreeCompleted : MemoryAction::FreeRequested;
        DeviceMemoryStats d;
        d.rank = key.rank;
        d.device = key.device;
        d.events = static_cast<std::int64_t>(end - begin);
        // The peak: the largest total before or after any event; -1 = before the first.
        std::size_t peak_index = 0;
        bool peak_before_first = false;
        for (std::size_t i = begin; i < end; ++i) {
            const auto& m = events[i].first;
            const std::int64_t before =
                allocated_before(m, m.allocated_bytes, i > begin ? events[i - 1].first.allocated_bytes : 0, i == begin,
                                 frees_at_completed);
            if (i == begin && before > d.allocated_peak_bytes) {
                d.allocated_peak_bytes = before;
                peak_before_first = true;
            }
            if (m.allocated_bytes > d.allocated_peak_bytes) {
                d.allocated_peak_bytes = m.allocated_bytes;
                d.allocated_peak_time_ns = m.time_ns;
                peak_index = i;
                peak_before_first = false;
            }
            d.reserved_peak_bytes = std::max(d.reserved_peak_bytes, m.reserved_bytes);
        }
        if (peak_before_first) d.allocated_peak_time_ns = events[begin].first.time_ns;
        // The live blocks at the peak: replay the allocations up to it by address.
        std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>> live;  // addr -> bytes, stack
        std::int64_t reserved_at_peak = events[begin].first.reserved_bytes;
        if (!peak_before_first) {
            for (std::size_t i = begin; i <= peak_index; ++i) {
                const auto& [m, stack] = events[i];
                if (m.action == MemoryAction::Alloc) live[m.addr] = {m.bytes, stack};
                if (m.action == free_action) live.erase(m.addr);
                reserved_at_peak = m.reserved_bytes;
            }
        }
        d.cache_at_peak_bytes = std::max<std::int64_t>(0, reserved_at_peak - d.allocated_peak_bytes);
        d.live_at_peak_bytes = d.allocated_peak_bytes;
        std::int64_t attributed = 0;
        for (const auto& [addr, block] : live) {
            d.at_peak_by_category[category(block.second)] += block.first;
            attributed += block.first;
        }
        if (d.allocated_peak_bytes > attributed) {
            d.at_peak_by_category["allocated before the history"] += d.allocated_peak_bytes - attributed;
        }
        out.devices.push_back(std::move(d));
        begin = end;
    }
    return out;
}

nlohmann::json memory_stats_json(const MemoryStats& stats) {
    auto devices = nlohmann::json::array();
    for (const auto& d : stats.devices) {
        devices.push_back({{"rank", d.rank},
                           {"device", d.device},
                           {"events", d.events},
                           {"allocated_peak_bytes", d.allocated_peak_bytes},
                           {"allocated_peak_time_ns", d.allocated_peak_time_ns},
                           {"reserved_peak_bytes", d.reserved_peak_bytes},
                           {"cache_at_peak_bytes", d.cache_at_peak_bytes},
                           {"at_peak_by_category", d.at_peak_by_category}});
    }
    return devices;
}

}  // namespace meshwork::profiler
