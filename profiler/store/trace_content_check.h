// The value checks a trace's rows must pass before anything reads them: every column of
// events, counters, tracks, ranks, strings and the memory tables has the type and range the writer gives it
// (docs/trace-format.md). A crafted file (a time of 9e18, 'abc' where an integer belongs,
// NULL where a value is required, a name id the strings table lacks) is refused naming the
// table, the row and the column, instead of being read as 0 or overflowing a span later.
// One SQL scan per table; TraceReader::open runs them, so every reader (CLI, GUI, serve-trace)
// sees the same verdict.
#pragma once

#include <cstdint>
#include <string>

namespace meshwork::profiler::sql {
class Database;
}

namespace meshwork::profiler {

struct ContentLimits {
    std::int64_t string_count = 0;  // valid name ids are 1..string_count
    bool memory_tables = false;     // memory_events and memory_stacks are there (format 2)
};

// Throws InputError(file, "table[rowid=N].column", what is wrong) for the first bad row.
void check_trace_contents(const sql::Database& db, const ContentLimits& limits);

}  // namespace meshwork::profiler
