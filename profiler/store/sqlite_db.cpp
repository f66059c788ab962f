#include "profiler/store/sqlite_db.h"

#include <sqlite3.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/common/error.h"
#include "core/common/utf8.h"

namespace meshwork::profiler::sql {

namespace {

// The 16 bytes every SQLite 3 database file starts with.
constexpr std::array<char, 16> kSqliteMagic = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                               'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};

void check_header(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw InputError(path, "", "file not found");
    if (std::filesystem::is_directory(path, ec)) throw InputError(path, "", "is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "", "cannot open file for reading");
    std::array<char, 16> head{};
    in.read(head.data(), head.size());
    if (in.gcount() == 0) throw InputError(path, "", "file is empty");
    if (in.gcount() < static_cast<std::streamsize>(head.size()) || head != kSqliteMagic) {
        throw InputError(path, "", "not an SQLite database (wrong file header)");
    }
}

// Turns off what a hostile file could use to run code or change what queries read.
void harden(sqlite3* db) {
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
}

// A writer killed inside a rollback-journal transaction (a trace being closed leaves WAL
// for that) leaves a hot journal beside the file. Only a connection that may write can roll
// it back, and until it does no read-only connection can read the file ("attempt to write a
// readonly database"). Rolling back restores the file as its writer last committed it, what
// any SQLite program does on opening it; it is done here once, on a hardened connection,
// before the read-only open.
void roll_back_hot_journal(const std::string& path) {
    std::error_code ec;
    const std::string journal = path + "-journal";
    if (!std::filesystem::exists(journal, ec) || std::filesystem::file_size(journal, ec) == 0 || ec) return;
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc == SQLITE_OK) {
        harden(db);
        rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_schema", nullptr, nullptr, nullptr);
    }
    const std::string why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    if (rc != SQLITE_OK) {
        throw InputError(path, "",
                         "its writer was killed in the middle of a transaction and the journal "
                         "beside it (" + journal + ") cannot be rolled back: " + why +
                             " (make the file and its folder writable and open it again)");
    }
}

}  // namespace

Database Database::create(const std::string& path) {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
        std::filesystem::remove(path + suffix, ec);
    }
    Database db;
    db.path_ = path;
    db.trust_ = Trust::Own;
    const int rc = sqlite3_open_v2(path.c_str(), &db.db_,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                   nullptr);
    if (rc != SQLITE_OK) db.fail(rc, "cannot create database");
    sqlite3_db_config(db.db_, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
    return db;
}

Database Database::open_untrusted(const std::string& path) {
    check_header(path);
    roll_back_hot_journal(path);
    Database db;
    db.path_ = path;
    db.trust_ = Trust::Untrusted;
    const int rc = sqlite3_open_v2(path.c_str(), &db.db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                                   nullptr);
    if (rc != SQLITE_OK) db.fail(rc, "cannot open database");
    // A hostile file must not be able to run code or corrupt memory through its schema.
    harden(db.db_);
    // Reading the schema here turns "file is not a database" and header corruption into an
    // error now instead of at the first query.
    Statement probe(db, "SELECT count(*) FROM sqlite_schema");
    probe.step();
    return db;
}

Database::Database(Database&& other) noexcept
    : db_(other.db_), path_(std::move(other.path_)), trust_(other.trust_) {
    other.db_ = nullptr;
}

Database& Database::operator=(Database&& other) noexcept {
    if (this != &other) {
        close();
        db_ = other.db_;
        path_ = std::move(other.path_);
        trust_ = other.trust_;
        other.db_ = nullptr;
    }
    return *this;
}

Database::~Database() { close(); }

void Database::close() {
    if (db_) sqlite3_close_v2(db_);
    db_ = nullptr;
}

void Database::fail(int rc, std::string_view what) const {
    std::string msg(what);
    msg += ": ";
    msg += db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    const int primary = rc & 0xff;
    if (trust_ == Trust::Untrusted) {
        if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) {
            throw InputError(path_, "", "corrupt or truncated SQLite file (" + msg + ")");
        }
        throw InputError(path_, "", msg);
    }
    throw RuntimeError(path_ + ": " + msg);
}

void Database::exec(const char* sql) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
    if (rc != SQLITE_OK) {
        std::string msg = err ? err : sqlite3_errstr(rc);
        sqlite3_free(err);
        fail(rc, std::string("cannot run \"") + std::string(sql).substr(0, 60) + "\": " + msg);
    }
}

bool Database::has_table(const std::string& name) const {
    Statement st(*this, "SELECT 1 FROM sqlite_schema WHERE type IN ('table','view') AND name = ?");
    st.bind(1, name);
    return st.step();
}

bool Database::has_column(const std::string& table, const std::string& column) const {
    Statement st(*this, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?");
    st.bind(1, table);
    st.bind(2, column);
    return st.step();
}

Statement::Statement(const Database& db, std::string_view sql) : db_(&db) {
    const int rc = sqlite3_prepare_v3(db.handle(), sql.data(), static_cast<int>(sql.size()),
                                      SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
    if (rc != SQLITE_OK) db.fail(rc, "cannot prepare query");
}

Statement::Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) {
    other.stmt_ = nullptr;
}

Statement::~Statement() {
    if (stmt_) sqlite3_finalize(stmt_);
}

void Statement::bind(int index, std::int64_t value) {
    const int rc = sqlite3_bind_int64(stmt_, index, value);
    if (rc != SQLITE_OK) db_->fail(rc, "cannot bind a value");
}

void Statement::bind(int index, double value) {
    const int rc = sqlite3_bind_double(stmt_, index, value);
    if (rc != SQLITE_OK) db_->fail(rc, "cannot bind a value");
}

void Statement::bind(int index, std::string_view text) {
    const int rc = sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT,
                                       SQLITE_UTF8);
    if (rc != SQLITE_OK) db_->fail(rc, "cannot bind a value");
}

void Statement::bind_blob(int index, std::string_view bytes) {
    const int rc = sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) db_->fail(rc, "cannot bind a value");
}

void Statement::bind_null(int index) {
    const int rc = sqlite3_bind_null(stmt_, index);
    if (rc != SQLITE_OK) db_->fail(rc, "cannot bind a value");
}

bool Statement::step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    db_->fail(rc, "query failed");
}

void Statement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

void Statement::rewind() { sqlite3_reset(stmt_); }

bool Statement::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
std::int64_t Statement::int64(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::real(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Statement::text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    const int n = sqlite3_column_bytes(stmt_, col);
    std::string out = p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n))
                        : std::string();
    // SQLite stores whatever bytes it is given as TEXT; a file from elsewhere may hold names
    // that are not UTF-8, which would fail far from here (in JSON output, in the GUI).
    if (db_->trust() == Trust::Untrusted && !is_valid_utf8(out)) {
        const char* column = sqlite3_column_name(stmt_, col);
        const char* sql = sqlite3_sql(stmt_);  // names the table the column was read from
        throw InputError(db_->path(), column ? column : "",
                         "text that is not valid UTF-8 (a name written by another program?), read by \"" +
                             std::string(sql ? sql : "").substr(0, 100) + "\"");
    }
    return out;
}

}  // namespace meshwork::profiler::sql

namespace meshwork::profiler::sql {
std::string_view Statement::blob(int col) const {
    const void* p = sqlite3_column_blob(stmt_, col);
    const int n = sqlite3_column_bytes(stmt_, col);
    return p ? std::string_view(static_cast<const char*>(p), static_cast<std::size_t>(n))
             : std::string_view();
}
}  // namespace meshwork::profiler::sql
