// Thin RAII wrappers over SQLite's C API: a connection and prepared statements. Every query
// in the profiler goes through Statement, so nothing is ever spliced into SQL text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace meshwork::profiler::sql {

// How failures are reported: files we write ourselves fail as RuntimeError (exit 1);
// files handed to us (traces to read, exports to import) fail as InputError naming the file.
enum class Trust { Own, Untrusted };

class Database {
public:
    // Creates (truncating any existing file) a database for writing.
    static Database create(const std::string& path);
    // Opens a file handed to us: read-only and immutable (no lock, no -journal/-wal/-shm read,
    // created or deleted: nothing on disk changes), in defensive mode with extension loading,
    // triggers and views off. Checks the header first so that "not an SQLite file" gets its
    // own message, and refuses a file its writer left unfinished (unfinished_trace.h).
    static Database open_untrusted(const std::string& path);
    // Opens read-write, hardened as above, a copy that recover_trace() made in a folder of its
    // own, so that SQLite replays the journal or log beside it there. Nothing else may call it.
    static Database open_private_copy(const std::string& path);

    Database() = default;
    Database(Database&& other) noexcept;
    Database& operator=(Database&& other) noexcept;
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    void exec(const char* sql);  // for fixed DDL/PRAGMA text only, never for values
    [[nodiscard]] sqlite3* handle() const { return db_; }
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] Trust trust() const { return trust_; }
    [[nodiscard]] bool has_table(const std::string& name) const;
    [[nodiscard]] bool has_column(const std::string& table, const std::string& column) const;
    // Throws the right error type for a failed call with SQLite result `rc`.
    [[noreturn]] void fail(int rc, std::string_view what) const;
    void close();

private:
    sqlite3* db_ = nullptr;
    std::string path_;
    Trust trust_ = Trust::Own;
};

class Statement {
public:
    Statement(const Database& db, std::string_view sql);
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&&) = delete;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement();

    // Binds are 1-based like SQLite's.
    void bind(int index, std::int64_t value);
    void bind(int index, int value) { bind(index, static_cast<std::int64_t>(value)); }
    void bind(int index, double value);
    void bind(int index, std::string_view text);  // copied (SQLITE_TRANSIENT)
    void bind_null(int index);
    void bind_blob(int index, std::string_view bytes);  // copied
    // Advances; true while a row is available.
    bool step();
    void reset();  // also clears bindings
    // Resets for the next step keeping the bindings: for hot loops that rebind every parameter.
    void rewind();

    [[nodiscard]] bool is_null(int col) const;
    // On an untrusted file, a value of another type (text, a blob, a real where an integer
    // belongs) is an InputError naming the column; NULL reads as 0.
    [[nodiscard]] std::int64_t int64(int col) const;
    [[nodiscard]] double real(int col) const;
    [[nodiscard]] std::string text(int col) const;
    // The column's bytes, valid until the next step/reset.
    [[nodiscard]] std::string_view blob(int col) const;

private:
    void expect_type(int col, bool number_ok, const char* expected) const;

    const Database* db_;
    sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace meshwork::profiler::sql
