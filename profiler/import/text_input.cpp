#include "profiler/import/text_input.h"

#include <libdeflate.h>

#include <algorithm>
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
//
// The output goes to a buffer that is never zero-filled and grows by doubling; each member
// is inflated into the room left at its end. Work is linear in the input and output: a file
// of 200,000 empty members costs 200,000 small calls, where sizing each member's room from
// the input left (and zero-filling it, as std::string::resize does) cost 4x the remaining
// input per member, quadratic in the file's size (21 s for 4 MB, issue 36).
std::string gunzip(const std::string& path, const std::string& raw, std::uint64_t max_bytes) {
    std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> d(
        libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
    if (!d) throw std::bad_alloc();
    const auto too_big = [&] {
        return InputError(path, "", "more than " + std::to_string(max_bytes) +
                                        " bytes once decompressed (gzip); refusing to read it");
    };
    // The first member's ISIZE (its size mod 2^32) is a hint for the first allocation, unless
    // it claims more than deflate can expand the file to.
    std::uint64_t guess = 0;
    if (raw.size() >= 18) {
        const auto* t = reinterpret_cast<const unsigned char*>(raw.data() + raw.size() - 4);
        guess = std::uint64_t{t[0]} | std::uint64_t{t[1]} << 8 | std::uint64_t{t[2]} << 16 | std::uint64_t{t[3]} << 24;
        if (guess > kMaxDeflateRatio * raw.size()) guess = 0;
    }
    std::uint64_t capacity = std::min<std::uint64_t>(std::max<std::uint64_t>(guess + 1, 4 * raw.size() + 4096),
                                                      max_bytes + 1);
    auto buffer = std::make_unique_for_overwrite<char[]>(capacity);
    std::uint64_t size = 0;
    const auto grow = [&] {
        if (capacity > max_bytes) throw too_big();
        const std::uint64_t bigger = std::min<std::uint64_t>(capacity * 2, max_bytes + 1);
        auto larger = std::make_unique_for_overwrite<char[]>(bigger);
        std::copy(buffer.get(), buffer.get() + size, larger.get());
        buffer = std::move(larger);
        capacity = bigger;
    };
    std::size_t in_pos = 0;
    while (in_pos < raw.size()) {
        const std::size_t in_left = raw.size() - in_pos;
        if (in_left < 18) throw InputError(path, "", "truncated gzip data");
        for (;;) {
            std::size_t used_in = 0, produced = 0;
            const auto rc = libdeflate_gzip_decompress_ex(d.get(), raw.data() + in_pos, in_left, buffer.get() + size,
                                                          capacity - size, &used_in, &produced);
            if (rc == LIBDEFLATE_SUCCESS) {
                size += produced;
                in_pos += used_in;
                break;
            }
            if (rc == LIBDEFLATE_INSUFFICIENT_SPACE) {
                grow();
                continue;
            }
            throw InputError(path, "",
                             in_pos == 0 ? "corrupt or truncated gzip data" : "corrupt gzip data after the first member");
        }
        if (size > max_bytes) throw too_big();
        // Trailing zero padding after the last member (some writers pad to a block) ends it.
        if (in_pos < raw.size() && raw[in_pos] != '\x1f') break;
    }
    std::string out;
    out.reserve(size + kTextPaddingBytes);
    out.assign(buffer.get(), size);
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
