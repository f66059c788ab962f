// Reading an input text file (or stdin) with a size limit, and writing text atomically.
#pragma once

#include <string>

namespace meshwork {

// Inputs larger than this are refused: command lines and configs are kilobytes.
inline constexpr std::size_t kMaxImportBytes = 4u << 20;

// "-" reads standard input. A missing, unreadable or oversized file is an InputError.
std::string read_text_input(const std::string& path);
// Temporary file + rename, as save_json_file: no half-written file is ever left behind.
void save_text_file(const std::string& text, const std::string& path);

}  // namespace meshwork
