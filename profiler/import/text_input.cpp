#include "import/text_input.h"

#include <zlib.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <regex>

#include "common/error.h"
#include "import/import_options.h"

namespace meshwork::profiler {

int rank_from_file_name(const std::string& path) {
    static const std::regex kRank(R"(rank[_\-]?(\d{1,7}))", std::regex::icase);
    const std::string name = std::filesystem::path(path).filename().string();
    std::smatch m;
    if (std::regex_search(name, m, kRank)) return std::stoi(m[1].str());
    return -1;
}

bool is_gzip_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::array<unsigned char, 2> head{};
    in.read(reinterpret_cast<char*>(head.data()), 2);
    return in.gcount() == 2 && head[0] == 0x1f && head[1] == 0x8b;
}

std::string read_text_maybe_gzip(const std::string& path, std::uint64_t max_bytes) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw InputError(path, "", "file not found");
    if (std::filesystem::is_directory(path, ec)) throw InputError(path, "", "is a directory");
    if (std::filesystem::file_size(path, ec) == 0) throw InputError(path, "", "file is empty");
    gzFile f = gzopen(path.c_str(), "rb");  // reads plain files through unchanged
    if (!f) throw InputError(path, "", "cannot open file for reading");
    gzbuffer(f, 1 << 20);
    std::string out;
    std::array<char, 1 << 16> buf{};
    for (;;) {
        const int n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()));
        if (n < 0) {
            int errnum = 0;
            const std::string msg = gzerror(f, &errnum);
            gzclose(f);
            throw InputError(path, "", "corrupt gzip data: " + msg);
        }
        if (n == 0) break;
        if (out.size() + static_cast<std::size_t>(n) > max_bytes) {
            gzclose(f);
            throw InputError(path, "", "more than " + std::to_string(max_bytes) +
                                           " bytes once decompressed; refusing to read it");
        }
        out.append(buf.data(), static_cast<std::size_t>(n));
    }
    // A gzip stream cut short reads as a clean end in some zlib versions: check the trailer.
    int errnum = 0;
    gzerror(f, &errnum);
    const int rc = gzclose(f);
    if (errnum != Z_OK && errnum != Z_STREAM_END) throw InputError(path, "", "corrupt gzip data");
    if (rc == Z_BUF_ERROR) throw InputError(path, "", "truncated gzip data");
    return out;
}

}  // namespace meshwork::profiler
