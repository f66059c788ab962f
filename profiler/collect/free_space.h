// The free-space check of `run --profile`: a profile is not started on a disk that cannot
// hold it (docs/RELIABILITY.md, "Writers"). The query (the file system's answer) and the
// decision (what that answer allows) are apart, so that a test can check the decision at
// any free space without filling a disk, and the query against statvfs(3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace meshwork::profiler {

// Free space a profile needs to start: below it the run is refused before any step. A
// short CPU-engine run's profile (tiny model, 20 steps) takes about 1 MiB (docs/RELIABILITY.md,
// "Writers"); 64 MiB leaves room for runs fifty times longer, and a run that still fills the
// disk stops at the next event (TraceWriter throws once its thread failed).
inline constexpr std::uintmax_t kMinProfileFreeBytes = std::uintmax_t{64} << 20;

// Bytes an unprivileged writer may still use on the disk that will hold `path` (its folder;
// "." for a bare name), as std::filesystem::space reports them; nullopt when the file system
// gives no answer (a missing folder, an unusual file system).
std::optional<std::uintmax_t> free_bytes_for(const std::string& path);

// Throws RuntimeError naming `path` and both figures in MiB when `available` is under
// kMinProfileFreeBytes; nothing when it is enough or unknown (nullopt: the writer reports a
// full disk itself when it meets one).
void check_free_space(const std::string& path, std::optional<std::uintmax_t> available);

// Both: the check of `path` with the file system's answer.
inline void check_free_space(const std::string& path) { check_free_space(path, free_bytes_for(path)); }

}  // namespace meshwork::profiler
