#include "profiler/remote/ssh_command.h"

#include <utility>

namespace meshwork::profiler::remote {

namespace {

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_name_char(char c) { return is_alnum(c) || c == '.' || c == '_' || c == '-'; }

// A printable rendering of `s` for messages: control characters as \xNN.
std::string shown(const std::string& s) {
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (const char c : s.substr(0, 80)) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        } else {
            out += c;
        }
    }
    return s.size() > 80 ? out + "..." : out;
}

std::string host_part_problem(const std::string& h) {
    if (h.empty()) return "the host is empty";
    // IPv6: bare ("fe80::1%eth0") or bracketed as scp writes it ("[fe80::1]").
    std::string v6 = h;
    if (v6.front() == '[') {
        if (v6.size() < 3 || v6.back() != ']') return "an opening bracket without a closing one";
        v6 = v6.substr(1, v6.size() - 2);
    }
    if (v6.find(':') != std::string::npos || h.front() == '[') {
        const auto zone = v6.find('%');
        const std::string addr = v6.substr(0, zone);
        if (addr.empty()) return "an empty IPv6 address";
        for (const char c : addr) {
            if (!is_hex(c) && c != ':' && c != '.') return "a character other than hex digits, ':' and '.' in an IPv6 address";
        }
        if (zone != std::string::npos) {
            const std::string z = v6.substr(zone + 1);
            if (z.empty()) return "an empty IPv6 zone after '%'";
            for (const char c : z) {
                if (!is_name_char(c)) return "a character other than letters, digits, '.', '_' and '-' in an IPv6 zone";
            }
        }
        return "";
    }
    if (h.front() == '-') return "it starts with '-' and would read as an ssh option";
    if (h.front() == '.') return "it starts with '.'";
    for (const char c : h) {
        if (!is_name_char(c)) return "a character other than letters, digits, '.', '_' and '-' in the host name";
    }
    return "";
}

}  // namespace

std::string ssh_host_problem(const std::string& host) {
    if (host.size() > kMaxHostChars) return "longer than " + std::to_string(kMaxHostChars) + " characters";
    const auto at = host.rfind('@');
    if (at != std::string::npos) {
        const std::string user = host.substr(0, at);
        if (user.empty()) return "an empty user name before '@'";
        if (user.front() == '-') return "the user name starts with '-'";
        for (const char c : user) {
            if (!is_name_char(c)) return "a character other than letters, digits, '.', '_' and '-' in the user name";
        }
    }
    return host_part_problem(at == std::string::npos ? host : host.substr(at + 1));
}

std::string remote_word_problem(const std::string& text, const std::string& what) {
    if (text.empty()) return what + " is empty";
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
            return what + " \"" + shown(text) + "\" holds a control character (a newline or a NUL would end or cut the "
                   "remote shell's command)";
        }
    }
    return "";
}

std::string posix_shell_quote(const std::string& text) {
    std::string out = "'";
    for (const char c : text) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

std::vector<std::string> ssh_serve_command(const std::string& host, const std::string& path,
                                           const std::string& remote_cli) {
    if (const auto why = ssh_host_problem(host); !why.empty()) {
        throw BadRemoteSpec("\"" + shown(host) + "\" is not a host name ssh can take: " + why);
    }
    for (const auto& [text, what] : {std::pair{&path, "the remote path"}, std::pair{&remote_cli, "the remote command"}}) {
        if (const auto why = remote_word_problem(*text, what); !why.empty()) throw BadRemoteSpec(why);
    }
    // scp brackets an IPv6 host ("[fe80::1]:path"); ssh takes the address bare.
    std::string bare = host;
    const auto at = bare.rfind('@');
    const auto h = at == std::string::npos ? 0 : at + 1;
    if (bare.size() > h + 1 && bare[h] == '[' && bare.back() == ']') bare = bare.substr(0, h) + bare.substr(h + 1, bare.size() - h - 2);
    return {"ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20", "-T", "-x", "-e", "none", "--", bare,
            posix_shell_quote(remote_cli) + " serve-trace -- " + posix_shell_quote(path)};
}

}  // namespace meshwork::profiler::remote
