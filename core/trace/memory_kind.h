// What a block of device memory holds, in the kinds the cost model predicts memory by
// (core/cost/estimate.h StageMemory: weights, gradients, optimizer state, activations,
// buffers; its sixth figure, the reserve, is not a kind of tensor). The one owner of their
// names: the engines record their allocations with them (run --profile), memory_stats reads
// them back from the stack frame they write, compare and calibrate match them to the
// prediction.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace meshwork {

enum class MemoryKind { Weights = 0, Gradients, Optimizer, Activations, Buffers };
inline constexpr int kMemoryKindCount = 5;

inline constexpr std::array<std::string_view, kMemoryKindCount> kMemoryKindNames = {
    "weights", "gradients", "optimizer", "activations", "buffers"};

inline std::string_view memory_kind_name(MemoryKind k) { return kMemoryKindNames[static_cast<std::size_t>(k)]; }

// The kind of that name ("activations"), or nothing.
inline std::optional<MemoryKind> memory_kind_of_name(std::string_view name) {
    for (int i = 0; i < kMemoryKindCount; ++i)
        if (kMemoryKindNames[static_cast<std::size_t>(i)] == name) return static_cast<MemoryKind>(i);
    return std::nullopt;
}

// The stack frame an engine writes on its allocations ("meshwork:activations"): a frame no
// framework writes, so memory_stats can tell an engine's own kinds from categories it derives
// from a real stack.
inline constexpr std::string_view kMemoryKindFramePrefix = "meshwork:";
inline std::string memory_kind_frame(MemoryKind k) {
    return std::string(kMemoryKindFramePrefix) + std::string(memory_kind_name(k));
}
// The kind a stack's innermost frame names, or nothing when it is not such a frame.
inline std::optional<MemoryKind> memory_kind_of_frames(std::string_view frames) {
    if (frames.substr(0, kMemoryKindFramePrefix.size()) != kMemoryKindFramePrefix) return std::nullopt;
    std::string_view rest = frames.substr(kMemoryKindFramePrefix.size());
    return memory_kind_of_name(rest.substr(0, rest.find('\n')));
}

}  // namespace meshwork
