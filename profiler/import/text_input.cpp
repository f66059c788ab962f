#include "profiler/import/text_input.h"

#include <libdeflate.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>

#include "core/common/error.h"
#include "profiler/import/import_options.h"

namespace meshwork::profiler {

namespace {

// Deflate cannot expand data by more than 1032:1, so a gzip trailer declaring a larger size
// is a lie; it is then ignored as a first guess for the output buffer.
constexpr std::uint64_t kMaxDeflateRatio = 1032;

std::string read_raw(const std::string& path, std::uint64_t size) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "", "cannot open file for reading");
    std::string raw;
    raw.reserve(size + kTextPaddingBytes);
    raw.resize(size);
    in.read(raw.data(), static_cast<std::streamsize>(size));
    if (static_cast<std::uint64_t>(in.gcount()) != size) throw InputError(path, "", "read error");
    return raw;
}

// Every gzip member of `raw`, concatenated (gzip -c a b > c writes two members).
std::string gunzip(const std::string& path, const std::string& raw, std::uint64_t max_bytes) {
    std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> d(
        libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
    if (!d) throw std::bad_alloc();
    std::string out;
    std::size_t in_pos = 0;
    while (in_pos < raw.size()) {
        const std::size_t in_left = raw.size() - in_pos;
        if (in_left < 18) throw InputError(path, "", "truncated gzip data");
        // ISIZE: the member's uncompressed size mod 2^32, a hint only.
        std::uint64_t guess = 0;
        if (in_pos == 0) {
            const auto* t = reinterpret_cast<const unsigned char*>(raw.data() + raw.size() - 4);
            guess = std::uint64_t{t[0]} | std::uint64_t{t[1]} << 8 | std::uint64_t{t[2]} << 16 |
                    std::uint64_t{t[3]} << 24;
            if (guess > kMaxDeflateRatio * in_left) guess = 0;
        }
        std::uint64_t avail = std::max<std::uint64_t>(guess + 1, 4 * in_left + 4096);
        for (;;) {
            avail = std::min(avail, max_bytes - out.size() + 1);
            const std::size_t base = out.size();
            out.reserve(base + avail + kTextPaddingBytes);
            out.resize(base + avail);
            std::size_t used_in = 0, produced = 0;
            const auto rc =
                libdeflate_gzip_decompress_ex(d.get(), raw.data() + in_pos, in_left,
                                              out.data() + base, avail, &used_in, &produced);
            if (rc == LIBDEFLATE_SUCCESS) {
                out.resize(base + produced);
                if (out.size() > max_bytes) break;
                in_pos += used_in;
                break;
            }
            out.resize(base);
            if (rc == LIBDEFLATE_INSUFFICIENT_SPACE) {
                if (base + avail > max_bytes) {
                    throw InputError(path, "",
                                     "more than " + std::to_string(max_bytes) +
                                         " bytes once decompressed (gzip); refusing to read it");
                }
                avail *= 2;
                continue;
            }
            throw InputError(path, "",
                             in_pos == 0 ? "corrupt or truncated gzip data"
                                         : "corrupt gzip data after the first member");
        }
        if (out.size() > max_bytes) {
            throw InputError(path, "",
                             "more than " + std::to_string(max_bytes) +
                                 " bytes once decompressed (gzip); refusing to read it");
        }
        // Trailing zero padding after the last member (some writers pad to a block) ends it.
        if (in_pos < raw.size() && raw[in_pos] != '\x1f') break;
    }
    if (out.capacity() < out.size() + kTextPaddingBytes)
        out.reserve(out.size() + kTextPaddingBytes);
    return out;
}

}  // namespace

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
    const std::uint64_t size = std::filesystem::file_size(path, ec);
    if (ec) throw InputError(path, "", "cannot read its size: " + ec.message());
    if (size == 0) throw InputError(path, "", "file is empty");
    if (!is_gzip_file(path)) {
        if (size > max_bytes) {
            throw InputError(
                path, "", "more than " + std::to_string(max_bytes) + " bytes; refusing to read it");
        }
        return read_raw(path, size);
    }
    if (size > max_bytes) {
        throw InputError(
            path, "",
            "more than " + std::to_string(max_bytes) + " bytes of gzip; refusing to read it");
    }
    return gunzip(path, read_raw(path, size), max_bytes);
}

}  // namespace meshwork::profiler
