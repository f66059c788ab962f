#include "profiler/store/trace_content_check.h"

#include <string>
#include <vector>

#include "core/common/error.h"
#include "profiler/store/sqlite_db.h"
#include "profiler/store/trace_schema.h"
#include "core/trace/memory_event.h"

namespace meshwork::profiler {

namespace {

// One column's rule: an SQL condition on the row that holds for every value the writer
// gives it (a NULL result counts as false), and what it expects, for the message. The
// conditions hold only numbers this file computes, never text read from the trace.
struct Rule {
    std::string column;
    std::string valid;
    std::string expected;
};

std::string integer_in(const std::string& column, std::int64_t lo, std::int64_t hi) {
    return "typeof(" + column + ") = 'integer' AND " + column + " BETWEEN " + std::to_string(lo) + " AND " +
           std::to_string(hi);
}

std::string optional_integer_in(const std::string& column, std::int64_t lo, std::int64_t hi) {
    return column + " IS NULL OR (" + integer_in(column, lo, hi) + ")";
}

std::string range(std::int64_t lo, std::int64_t hi) {
    return "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
}

std::string all_valid(const std::vector<Rule>& rules) {
    std::string sql;
    for (const auto& r : rules) sql += (sql.empty() ? "" : " AND ") + ("coalesce((" + r.valid + "), 0)");
    return sql;
}

// The first rule row `rowid` of `table` breaks, as an InputError naming the row and column.
[[noreturn]] void refuse_row(const sql::Database& db, const std::string& table, const std::string& row_name,
                             std::int64_t rowid, const std::vector<Rule>& rules) {
    for (const auto& r : rules) {
        sql::Statement st(db, "SELECT coalesce((" + r.valid + "), 0), typeof(" + r.column + "), " +
                                  "CASE WHEN typeof(" + r.column + ") IN ('text', 'blob') THEN quote(substr(" +
                                  r.column + ", 1, 24)) ELSE CAST(" + r.column + " AS TEXT) END FROM " + table +
                                  " WHERE rowid = ?");
        st.bind(1, rowid);
        if (!st.step() || st.int64(0) != 0) continue;
        const std::string type = st.text(1);
        const std::string value = st.is_null(2) ? "NULL" : st.text(2);
        throw InputError(db.path(), table + "[" + row_name + "=" + std::to_string(rowid) + "]." + r.column,
                         "expected " + r.expected + ", found " + (type == "null" ? "NULL" : type + " " + value));
    }
    throw InputError(db.path(), table + "[" + row_name + "=" + std::to_string(rowid) + "]", "invalid row");
}

// One scan of `table`: the smallest rowid breaking a rule, refused. `extra` is appended to
// the select list (an aggregate over the same scan); its value comes back in `extra_out`.
void check_table(const sql::Database& db, const std::string& table, const std::string& row_name,
                 const std::vector<Rule>& rules, const char* extra = nullptr, double* extra_out = nullptr) {
    std::string sql = "SELECT min(CASE WHEN NOT (" + all_valid(rules) + ") THEN rowid END)";
    if (extra) sql += std::string(", ") + extra;
    sql::Statement st(db, sql + " FROM " + table);
    st.step();
    if (!st.is_null(0)) refuse_row(db, table, row_name, st.int64(0), rules);
    if (extra && extra_out) *extra_out = st.real(1);
}

}  // namespace

void check_trace_contents(const sql::Database& db, const ContentLimits& limits) {
    constexpr std::int64_t T = kMaxTraceTimeNs;
    constexpr std::int64_t kMaxRank = std::int64_t{1} << 24;
    constexpr std::int64_t kMaxSmall = 2147483647;  // step, micro-batch, layer: an int
    const std::string times = range(-T, T);
    const std::string name_ids = range(1, limits.string_count) + " (a row of the strings table)";

    check_table(db, "strings", "id", {{"value", "typeof(value) = 'text'", "text"}});
    check_table(db, "ranks", "rank",
                {{"rank", integer_in("rank", 0, kMaxRank), range(0, kMaxRank)},
                 {"device", "typeof(device) = 'text'", "text"},
                 {"clock_offset_ns", integer_in("clock_offset_ns", -T, T), times}});
    check_table(db, "tracks", "id",
                {{"id", integer_in("id", 0, kMaxSmall), range(0, kMaxSmall)},
                 {"rank", integer_in("rank", 0, kMaxRank), range(0, kMaxRank)},
                 {"kind", integer_in("kind", 0, 3), range(0, 3)},
                 {"idx", integer_in("idx", -kMaxSmall, kMaxSmall), range(-kMaxSmall, kMaxSmall)},
                 {"name", "typeof(name) = 'text'", "text"},
                 {"event_count", integer_in("event_count", 0, std::int64_t{1} << 48), range(0, std::int64_t{1} << 48)},
                 {"start_ns", optional_integer_in("start_ns", -T, T), "NULL or " + times},
                 {"end_ns", optional_integer_in("end_ns", -T, T), "NULL or " + times},
                 {"max_duration_ns", integer_in("max_duration_ns", 0, 2 * T), range(0, 2 * T)},
                 {"lod_base_level", optional_integer_in("lod_base_level", kLodMinLevel, kLodMaxLevel),
                  "NULL or " + range(kLodMinLevel, kLodMaxLevel)}});
    // The summed duration comes from the same scan: a busy total past 2^62 ns (146 years)
    // would overflow the sums the statistics make.
    double busy_ns = 0;
    check_table(db, "events", "id",
                {{"track", "typeof(track) = 'integer' AND track IN (SELECT id FROM tracks)",
                  "the id of a row of the tracks table"},
                 {"kind", integer_in("kind", 0, 5), range(0, 5)},
                 {"name_id", integer_in("name_id", 1, limits.string_count), name_ids},
                 {"start_ns", integer_in("start_ns", -T, T), times},
                 {"end_ns", "typeof(end_ns) = 'integer' AND end_ns BETWEEN start_ns AND " + std::to_string(T),
                  "an integer from start_ns to " + std::to_string(T) + " (an event ends at or after its start)"},
                 {"bytes", "typeof(bytes) = 'integer' AND bytes >= 0", "an integer of 0 or more"},
                 {"flops", "typeof(flops) IN ('integer', 'real') AND flops BETWEEN 0 AND 1e30",
                  "a number from 0 to 1e30"},
                 {"step", optional_integer_in("step", 0, kMaxSmall), "NULL or " + range(0, kMaxSmall)},
                 {"micro_batch", optional_integer_in("micro_batch", 0, kMaxSmall), "NULL or " + range(0, kMaxSmall)},
                 {"layer", optional_integer_in("layer", 0, kMaxSmall), "NULL or " + range(0, kMaxSmall)},
                 {"correlation_id", "typeof(correlation_id) = 'integer'", "an integer"},
                 {"group_size", integer_in("group_size", 0, kMaxRank), range(0, kMaxRank)}},
                "total(end_ns - start_ns)", &busy_ns);
    if (busy_ns > static_cast<double>(T)) {
        throw InputError(db.path(), "events",
                         "the events' durations add up to " + std::to_string(busy_ns) +
                             " ns, more than the 2^62 ns a trace may hold");
    }
    check_table(db, "counters", "rowid",
                {{"track", "typeof(track) = 'integer' AND track IN (SELECT id FROM tracks)",
                  "the id of a row of the tracks table"},
                 {"name_id", integer_in("name_id", 1, limits.string_count), name_ids},
                 {"time_ns", integer_in("time_ns", -T, T), times},
                 {"value", "typeof(value) IN ('integer', 'real') AND value BETWEEN -1e300 AND 1e300",
                  "a finite number"}});
    if (!limits.memory_tables) return;
    // Byte counts are below 2^62 so that totals and differences of two stay in 64 bits.
    constexpr std::int64_t kMaxBytes = (std::int64_t{1} << 62) - 1;
    check_table(db, "memory_stacks", "id", {{"frames", "typeof(frames) = 'text'", "text"}});
    check_table(db, "memory_events", "id",
                {{"rank", integer_in("rank", 0, kMaxRank), range(0, kMaxRank)},
                 {"device", integer_in("device", -1, 65535), range(-1, 65535)},
                 {"time_ns", integer_in("time_ns", -T, T), times},
                 {"action", integer_in("action", 0, kMemoryActionCount - 1), range(0, kMemoryActionCount - 1)},
                 {"addr", "typeof(addr) = 'integer'", "an integer"},
                 {"bytes", integer_in("bytes", 0, kMaxBytes), range(0, kMaxBytes)},
                 {"stream", "typeof(stream) = 'integer'", "an integer"},
                 {"allocated_bytes", integer_in("allocated_bytes", 0, kMaxBytes), range(0, kMaxBytes)},
                 {"reserved_bytes", integer_in("reserved_bytes", 0, kMaxBytes), range(0, kMaxBytes)},
                 {"stack_id", "stack_id IS NULL OR (typeof(stack_id) = 'integer' AND stack_id IN (SELECT id FROM memory_stacks))",
                  "NULL or the id of a row of the memory_stacks table"}});
}

}  // namespace meshwork::profiler
