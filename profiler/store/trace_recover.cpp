#include "profiler/store/trace_recover.h"

#include <unistd.h>

#include <filesystem>

#include "core/common/error.h"
#include "profiler/store/sqlite_db.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/unfinished_trace.h"

namespace meshwork::profiler {

namespace {

constexpr const char* kSidecars[] = {"-journal", "-wal", "-shm"};

void remove_with_sidecars(const std::string& path) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    for (const char* s : kSidecars) std::filesystem::remove(path + s, ec);
}

// Copies `from` to `to` (replacing it); false when `from` does not exist.
bool copy_if_present(const std::string& from, const std::string& to) {
    std::error_code ec;
    if (!std::filesystem::exists(from, ec)) return false;
    std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) throw RuntimeError("cannot copy " + from + " to " + to + ": " + ec.message());
    return true;
}

}  // namespace

RecoverResult recover_trace(const std::string& input, const std::string& output) {
    std::error_code ec;
    if (!std::filesystem::exists(input, ec)) throw InputError(input, "", "file not found");
    if (std::filesystem::exists(output, ec) && std::filesystem::equivalent(input, output, ec)) {
        throw InputError(output, "--out", "is the input; recovery writes a new file and never the input");
    }
    const std::string journal = input + "-journal";
    RecoverResult result;
    if (const auto why = sql::left_unfinished(input)) {
        if (std::filesystem::exists(journal, ec) && std::filesystem::file_size(journal, ec) > 0 &&
            sql::names_super_journal(journal)) {
            throw InputError(journal, "",
                             "names a super-journal (a transaction over several databases, which Meshwork "
                             "never writes); replaying it would delete the file it names, so it is refused");
        }
        result.replayed = std::filesystem::exists(input + "-wal", ec) ? input + "-wal" : journal;
    }
    // The copy lives under the output's temporary name, so SQLite finds the copied journal
    // or log beside it (name + "-journal", "-wal") and replays them into the copy only.
    const std::string copy = output + ".partial." + std::to_string(::getpid());
    remove_with_sidecars(copy);
    try {
        copy_if_present(input, copy);
        copy_if_present(journal, copy + "-journal");
        copy_if_present(input + "-wal", copy + "-wal");
        {
            auto db = sql::Database::open_private_copy(copy);
            // Back to one self-contained file: the log copied into it, no journal left.
            db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
            db.exec("PRAGMA journal_mode = DELETE");
        }
        const auto reader = TraceReader::open(copy);  // every check a reader makes
        result.events = reader.event_count();
        result.complete = reader.complete();
    } catch (...) {
        remove_with_sidecars(copy);
        throw;
    }
    std::filesystem::rename(copy, output, ec);
    if (ec) {
        remove_with_sidecars(copy);
        throw RuntimeError("cannot rename " + copy + " to " + output + ": " + ec.message());
    }
    return result;
}

}  // namespace meshwork::profiler
