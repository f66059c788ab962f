// Vector subscripts from the int sizes the model works in (rows, experts, ranks): one named
// conversion instead of a static_cast at every subscript, and row-major offsets of the
// host-side tables (tokens × experts, sequences × experts, ranks × experts).
#pragma once

#include <cstddef>

namespace meshwork::engine {

template <typename I>
[[nodiscard]] constexpr std::size_t ix(I i) noexcept {
    return static_cast<std::size_t>(i);
}

// Offset of (row, col) in a row-major table with `cols` columns.
template <typename R, typename C>
[[nodiscard]] constexpr std::size_t ix(R row, int cols, C col) noexcept {
    return static_cast<std::size_t>(row) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(col);
}

}  // namespace meshwork::engine
