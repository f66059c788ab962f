// Whether an SQLite file was left unfinished by its writer: a hot rollback journal or a
// write-ahead log beside it. Readers never act on either (docs/RELIABILITY.md, "Readers never
// write"): recovering them writes the database, and a journal planted by someone else can
// name any file for SQLite to delete (its "super-journal") or truncate the database. Only
// recover_trace() replays them, on a private copy.
#pragma once

#include <optional>
#include <string>

namespace meshwork::profiler::sql {

// Why `path` was left unfinished, naming the file beside it, or nullopt when nothing
// beside it holds data SQLite would replay.
std::optional<std::string> left_unfinished(const std::string& path);

// True when the rollback journal `journal` ends with a super-journal record (a journal of a
// transaction over several attached databases). Meshwork never writes one; replaying such a
// journal makes SQLite delete the file it names.
bool names_super_journal(const std::string& journal);

}  // namespace meshwork::profiler::sql
