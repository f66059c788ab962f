#include "tests/reliability/crash_check.h"

#include <algorithm>
#include <fstream>

#include <sqlite3.h>

#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_recover.h"
#include "profiler/store/unfinished_trace.h"

namespace meshwork::reliability {

std::string integrity_check(const std::string& path) {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        const std::string message = db ? sqlite3_errmsg(db) : "cannot open";
        sqlite3_close(db);
        return message;
    }
    std::string result = "no answer";
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
        result = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    } else {
        result = sqlite3_errmsg(db);
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return result;
}

std::string readable_trace(const std::string& path) {
    if (!profiler::sql::left_unfinished(path)) return path;
    const std::string recovered = path + ".recovered.sqlite";
    profiler::recover_trace(path, recovered);
    return recovered;
}

std::vector<std::int64_t> event_numbers(const std::string& path, bool* complete) {
    const auto reader = profiler::TraceReader::open(readable_trace(path));
    if (complete) *complete = reader.complete();
    std::vector<std::int64_t> numbers;
    numbers.reserve(static_cast<std::size_t>(reader.event_count()));
    reader.for_each_event([&](const TraceEvent& e) { numbers.push_back(e.correlation_id); });
    std::sort(numbers.begin(), numbers.end());
    return numbers;
}

bool is_unbroken_prefix(const std::vector<std::int64_t>& numbers) {
    for (std::size_t i = 0; i < numbers.size(); ++i) {
        if (numbers[i] != static_cast<std::int64_t>(i)) return false;
    }
    return true;
}

std::vector<Progress> read_progress(const std::string& path) {
    std::vector<Progress> progress;
    std::ifstream in(path);
    Progress p;
    while (in >> p.count >> p.time_ns) progress.push_back(p);
    return progress;
}

std::int64_t added_by(const std::vector<Progress>& progress, std::int64_t time_ns) {
    std::int64_t count = 0;
    for (const auto& p : progress) {
        if (p.time_ns <= time_ns) count = std::max(count, p.count);
    }
    return count;
}

}  // namespace meshwork::reliability
