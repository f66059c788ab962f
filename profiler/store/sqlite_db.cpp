#include "profiler/store/sqlite_db.h"

#include <sqlite3.h>

#include <array>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/common/error.h"
#include "core/common/utf8.h"
#include "profiler/store/unfinished_trace.h"

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

// The URI that opens `path` immutable: SQLite then takes no lock and never looks at, creates,
// replays or deletes a -journal, -wal or -shm file (https://sqlite.org/uri.html, "immutable").
// Every byte but unreserved ones and '/' is percent-encoded, so '?', '#' and '%' in a file
// name stay part of the name.
std::string immutable_uri(const std::string& path) {
    std::error_code ec;
    auto absolute = std::filesystem::absolute(path, ec);
    const std::string p = ec ? path : absolute.string();
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string uri = "file:";
    for (const char ch : p) {
        const auto c = static_cast<unsigned char>(ch);
        if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
            uri += ch;
        } else {
            uri += '%';
            uri += kHex[c >> 4];
            uri += kHex[c & 15];
        }
    }
    return uri + "?immutable=1";
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
    // Immutable, the connection would read the file as if nothing were beside it: pages a
    // killed writer left half-written, or commits still in its log, would be read as the
    // file's state. Say so instead; recover_trace() replays them on a copy.
    if (auto why = left_unfinished(path)) {
        throw InputError(path, "", *why + "; readers never repair a file (that would write beside it), "
                                   "recover it into a new trace with 'meshwork-cli recover-trace " +
                                       path + " --out NEW.sqlite'");
    }
    Database db;
    db.path_ = path;
    db.trust_ = Trust::Untrusted;
    const int rc = sqlite3_open_v2(immutable_uri(path).c_str(), &db.db_,
                                   SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) db.fail(rc, "cannot open database");
    // A hostile file must not be able to run code or corrupt memory through its schema.
    harden(db.db_);
    // Reading the schema here turns "file is not a database" and header corruption into an
    // error now instead of at the first query.
    Statement probe(db, "SELECT count(*) FROM sqlite_schema");
    probe.step();
    return db;
}

Database Database::open_private_copy(const std::string& path) {
    check_header(path);
    Database db;
    db.path_ = path;
    db.trust_ = Trust::Untrusted;
    const int rc = sqlite3_open_v2(path.c_str(), &db.db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) db.fail(rc, "cannot open database");
    harden(db.db_);
    Statement probe(db, "SELECT count(*) FROM sqlite_schema");  // replays the journal or log
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
// SQLite converts whatever a column holds to the type asked for ('abc' reads as 0); a file
// from elsewhere must hold the type the query expects, or it is refused naming the column.
void Statement::expect_type(int col, bool number_ok, const char* expected) const {
    if (db_->trust() != Trust::Untrusted) return;
    const int type = sqlite3_column_type(stmt_, col);
    if (type == SQLITE_INTEGER || type == SQLITE_NULL || (number_ok && type == SQLITE_FLOAT)) return;
    const char* column = sqlite3_column_name(stmt_, col);
    const char* sql = sqlite3_sql(stmt_);
    throw InputError(db_->path(), column ? column : "",
                     std::string("expected ") + expected + ", found " +
                         (type == SQLITE_FLOAT ? "a real number" : type == SQLITE_TEXT ? "text" : "a blob") +
                         ", read by \"" + std::string(sql ? sql : "").substr(0, 100) + "\"");
}

std::int64_t Statement::int64(int col) const {
    expect_type(col, false, "an integer");
    return sqlite3_column_int64(stmt_, col);
}

double Statement::real(int col) const {
    expect_type(col, true, "a number");
    return sqlite3_column_double(stmt_, col);
}

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
