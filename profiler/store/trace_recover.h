// Recovers a trace its writer left unfinished (killed with a rollback journal or a
// write-ahead log beside it) into a new trace, without writing the input or anything beside
// it: the file and its journal or log are copied under the output's temporary name, SQLite
// replays them there (the copy is this writer's own file), and the result is validated as
// any trace is and renamed into place.
#pragma once

#include <cstdint>
#include <string>

namespace meshwork::profiler {

struct RecoverResult {
    std::string replayed;      // the journal or log replayed ("" when there was none)
    std::int64_t events = 0;   // events in the recovered trace
    bool complete = false;     // its writer had closed it (only the closing transaction was lost)
};

// Throws InputError for an input that is not a trace, or a journal naming a super-journal
// (a multi-database transaction: Meshwork never writes one, and replaying it would delete the
// file it names); RuntimeError when the output cannot be written.
RecoverResult recover_trace(const std::string& input, const std::string& output);

}  // namespace meshwork::profiler
