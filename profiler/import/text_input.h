// Reading a text input that may be gzip-compressed, with a cap on the decompressed size so a
// compression bomb is refused instead of filling memory.
#pragma once

#include <cstdint>
#include <string>

namespace meshwork::profiler {

inline constexpr std::uint64_t kMaxTraceTextBytes = std::uint64_t{2} << 30;  // 2 GiB

// The file's bytes, gunzipped (every member) when it starts with the gzip magic. The string's
// capacity exceeds its size by at least kTextPaddingBytes, so simdjson can parse it in place.
// InputError naming the file when it is missing, empty, corrupt or larger than max_bytes once
// decompressed.
inline constexpr std::size_t kTextPaddingBytes = 64;  // >= SIMDJSON_PADDING
std::string read_text_maybe_gzip(const std::string& path,
                                 std::uint64_t max_bytes = kMaxTraceTextBytes);
bool is_gzip_file(const std::string& path);

}  // namespace meshwork::profiler
