#include "profiler/store/unfinished_trace.h"

#include <array>
#include <filesystem>
#include <fstream>

namespace meshwork::profiler::sql {

namespace {

// The 8 bytes that start every rollback journal header and end a super-journal record
// (SQLite's pager.c, aJournalMagic; file format page, "The Rollback Journal").
constexpr std::array<unsigned char, 8> kJournalMagic = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};

std::uintmax_t size_of(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec) || ec) return 0;
    const auto size = std::filesystem::file_size(path, ec);
    return ec ? 0 : size;
}

}  // namespace

std::optional<std::string> left_unfinished(const std::string& path) {
    // A journal is hot (SQLite's hasHotJournal) when it is not empty and its first byte is
    // not zero; a zeroed one (journal_mode=PERSIST) holds nothing to replay.
    const std::string journal = path + "-journal";
    if (size_of(journal) > 0) {
        std::ifstream in(journal, std::ios::binary);
        char first = 0;
        if (!in || !in.get(first) || first != 0) {
            return "left unfinished: its writer was killed in the middle of a transaction (a rollback "
                   "journal, " + journal + ", is beside it)";
        }
    }
    // A write-ahead log that is not empty holds commits not yet copied into the file.
    const std::string wal = path + "-wal";
    if (size_of(wal) > 0) {
        return "left unfinished: its writer was killed or is still writing (a write-ahead log, " + wal +
               ", is beside it)";
    }
    return std::nullopt;
}

bool names_super_journal(const std::string& journal) {
    const auto size = size_of(journal);
    if (size < kJournalMagic.size()) return false;
    std::ifstream in(journal, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(size - kJournalMagic.size()));
    std::array<unsigned char, 8> tail{};
    in.read(reinterpret_cast<char*>(tail.data()), static_cast<std::streamsize>(tail.size()));
    // Unreadable: treat as naming one (refuse rather than replay blind).
    return !in || tail == kJournalMagic;
}

}  // namespace meshwork::profiler::sql
