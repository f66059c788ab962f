// The ssh command line that runs `meshwork-cli serve-trace PATH` on another host, and the
// checks that keep a host or a path from becoming an ssh option or a remote shell command.
//
// ssh takes options before its destination and joins every argument after it into ONE
// command line that the remote login shell parses (`$SHELL -c "..."`). So:
// - the host must not read as an option ("-oProxyCommand=...") or carry shell or ssh_config
//   syntax: it is checked against [user@]host, host a DNS name, an ssh_config alias or an
//   IP address (IPv6 bare or in brackets), and passed after "--";
// - the path and the remote command are single-quoted for a POSIX remote shell (sh, bash,
//   dash, zsh, ksh), so `;`, `$(...)`, backquotes, spaces and quotes stay literal, and
//   control characters (a newline ends a shell command) are refused outright.
#pragma once

#include <string>
#include <vector>

#include "core/common/error.h"

namespace meshwork::profiler::remote {

// A host or path that could inject an option or a command: never a reason to fall back to
// copying the file (scp would be handed the same text).
class BadRemoteSpec : public RuntimeError {
public:
    using RuntimeError::RuntimeError;
};

// Longest host accepted: a DNS name is at most 253 characters (RFC 1035 section 2.3.4),
// plus a user name and '@'.
inline constexpr std::size_t kMaxHostChars = 253 + 1 + 64;

// Why `host` is not a [user@]host that ssh can take as its destination, or "" when it is.
// user: [A-Za-z0-9._-], not starting with '-'; host: [A-Za-z0-9._-] not starting with '-'
// or '.', or an IPv6 address ([0-9A-Fa-f:.], optionally "%zone", optionally in brackets).
std::string ssh_host_problem(const std::string& host);
// Why `text` (a remote path or command) cannot go to the remote shell, or "" when it can:
// empty, or a control character (U+0000..U+001F, U+007F).
std::string remote_word_problem(const std::string& text, const std::string& what);

// `text` single-quoted for a POSIX shell: 'it'\''s' for it's.
std::string posix_shell_quote(const std::string& text);

// `ssh -o BatchMode=yes ... -- HOST 'REMOTE_CLI' serve-trace -- 'PATH'`: batch mode (keys or
// an agent, never a prompt that would hang without a terminal), no tty, no X11, no escape
// character. Throws BadRemoteSpec when the host, the path or the remote command is refused
// (see above). The brackets of "[fe80::1]" are dropped: ssh takes the address bare.
std::vector<std::string> ssh_serve_command(const std::string& host, const std::string& path,
                                           const std::string& remote_cli = "meshwork-cli");

}  // namespace meshwork::profiler::remote
