// Human-readable numbers for the CLI's tables.
#pragma once

#include <cstdint>
#include <string>

namespace meshwork::cli {

std::string human_count(double n);      // 8.03B, 70.6M, 512
std::string human_bytes(double bytes);  // 80.0 GiB
std::string human_flops(double flops);  // 1.23 TFLOP
std::string human_seconds(double s);    // 12.3 ms
std::string pad_right(const std::string& s, std::size_t width);
std::string pad_left(const std::string& s, std::size_t width);

}  // namespace meshwork::cli
