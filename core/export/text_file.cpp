#include "core/export/text_file.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "core/common/error.h"
#include "core/common/utf8.h"

namespace meshwork {

std::string read_text_input(const std::string& path) {
    std::string text;
    if (path == "-") {
        std::ostringstream buffer;
        buffer << std::cin.rdbuf();
        text = buffer.str();
    } else {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec)) {
            // /dev/zero, a FIFO or a directory would be read without end or not at all.
            throw InputError(path, "", std::filesystem::exists(path, ec) ? "not a regular file" : "no such file");
        }
        const auto size = std::filesystem::file_size(path, ec);
        if (ec) throw InputError(path, "", "cannot read the file: " + ec.message());
        if (size > kMaxImportBytes) {
            throw InputError(path, "", std::to_string(size) + " bytes, more than the " +
                                           std::to_string(kMaxImportBytes) + " allowed");
        }
        std::ifstream in(path, std::ios::binary);
        if (!in) throw InputError(path, "", "cannot open the file");
        text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (text.size() > kMaxImportBytes) {
        throw InputError(path == "-" ? "<stdin>" : path, "",
                         "more than " + std::to_string(kMaxImportBytes) + " bytes");
    }
    // Command lines, TOML and JSON configs are text; bytes that are not UTF-8 would reach the
    // messages (and the terminal) that name an argument, so they are refused first.
    // ('\n' never occurs inside a multi-byte sequence, so lines can be checked one by one.)
    const std::string_view all(text);
    std::size_t line = 1;
    for (std::size_t begin = 0; begin < all.size(); ++line) {
        const std::size_t end = std::min(all.find('\n', begin), all.size());
        if (!is_valid_utf8(all.substr(begin, end - begin))) {
            throw InputError(path == "-" ? "<stdin>" : path, "",
                             "line " + std::to_string(line) + ": not valid UTF-8 text");
        }
        begin = end + 1;
    }
    return text;
}

void save_text_file(const std::string& text, const std::string& path) {
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw RuntimeError("cannot write " + tmp);
        out << text;
        out.flush();
        if (!out) {
            std::filesystem::remove(tmp);
            throw RuntimeError("cannot write " + tmp + " (disk full?)");
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp);
        throw RuntimeError("cannot rename " + tmp + " to " + path + ": " + ec.message());
    }
}

}  // namespace meshwork
