// Exit codes of meshwork-cli (CLI.md): scripts depend on these values.
#pragma once

namespace meshwork::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntimeFailure = 1;  // the work failed (I/O, a rank died, ...)
inline constexpr int kExitBadInput = 2;        // bad file, field or flag; the message names it
inline constexpr int kExitCheckFailed = 3;     // a check ran and did not hold

}  // namespace meshwork::cli
