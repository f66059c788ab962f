#include "profiler/remote/trace_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

extern char** environ;

namespace meshwork::profiler::remote {

namespace {

using nlohmann::json;

// A hello lists every track: a 1,024-rank trace's is well under a MiB.
constexpr std::size_t kMaxAnswerLine = std::size_t{64} << 20;
constexpr std::size_t kStderrKept = 8192;

std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (const char c : s) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

}  // namespace

std::vector<std::string> ssh_serve_command(const std::string& host, const std::string& path,
                                           const std::string& remote_cli) {
    return {"ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20", "-T", "-x", "-e", "none", "--", host,
            shell_quote(remote_cli) + " serve-trace -- " + shell_quote(path)};
}

std::string remote_cli_from_environment() {
    const char* v = std::getenv("MESHWORK_REMOTE_CLI");
    return v && *v ? std::string(v) : std::string("meshwork-cli");
}

TraceClient::TraceClient(std::vector<std::string> argv, std::string what, int timeout_ms)
    : what_(std::move(what)), timeout_ms_(timeout_ms) {
    start(argv);
    try {
        read_hello();
    } catch (...) {
        close_and_reap(false);
        throw;
    }
}

TraceClient::~TraceClient() { close_and_reap(broken_.empty()); }

void TraceClient::start(const std::vector<std::string>& argv) {
    if (argv.empty()) throw ServeUnavailable(what_ + ": no command to serve the trace");
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        throw RuntimeError(what_ + ": cannot create a socket pair: " + std::strerror(errno));
    }
    int ep[2];
    if (::pipe2(ep, O_CLOEXEC) != 0) {
        ::close(sv[0]);
        ::close(sv[1]);
        throw RuntimeError(what_ + ": cannot create a pipe: " + std::strerror(errno));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    // dup2 clears close-on-exec on the copies: the child gets its stdin, stdout and stderr
    // and nothing else of ours.
    posix_spawn_file_actions_adddup2(&actions, sv[1], 0);
    posix_spawn_file_actions_adddup2(&actions, sv[1], 1);
    posix_spawn_file_actions_adddup2(&actions, ep[1], 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int rc = ::posix_spawnp(&pid_, args[0], &actions, &attr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(sv[1]);
    ::close(ep[1]);
    if (rc != 0) {
        ::close(sv[0]);
        ::close(ep[0]);
        pid_ = -1;
        throw ServeUnavailable(what_ + ": cannot start " + argv[0] + ": " + std::strerror(rc) +
                               (rc == ENOENT ? " (install an OpenSSH client, Debian: openssh-client)" : ""));
    }
    sock_ = sv[0];
    err_ = ep[0];
    ::fcntl(err_, F_SETFL, ::fcntl(err_, F_GETFL) | O_NONBLOCK);
}

void TraceClient::read_hello() {
    std::string line;
    try {
        line = read_line();
    } catch (const RuntimeError& e) {
        // Nothing came: ssh failed, or the remote side has no meshwork-cli with serve-trace.
        const std::string how = ended_how();
        broken_.clear();
        const bool missing = how.find("not found") != std::string::npos || how.find("exit code 127") != std::string::npos;
        throw ServeUnavailable(what_ + ": " +
                               (missing ? "the remote meshwork-cli was not found (set MESHWORK_REMOTE_CLI to its path)"
                                        : "the remote side did not start serve-trace") +
                               " (" + (how.empty() ? std::string(e.what()) : how) + ")");
    }
    json hello;
    try {
        hello = json::parse(line);
    } catch (const json::parse_error&) {
    }
    if (!hello.is_object() || hello.value("protocol", "") != kProtocolName || !hello.contains("version")) {
        throw ServeUnavailable(what_ + ": the remote command does not speak the " + std::string(kProtocolName) +
                               " protocol (it said \"" + line.substr(0, 200) + "\")");
    }
    if (!hello["version"].is_number_integer() || hello["version"].get<std::int64_t>() != kProtocolVersion) {
        throw ServeUnavailable(what_ + ": the remote meshwork-cli speaks remote protocol version " +
                               hello["version"].dump() + "; this Meshwork speaks version " +
                               std::to_string(kProtocolVersion) + " (install the same Meshwork on both sides)");
    }
    if (!hello.value("ok", false)) {
        throw RuntimeError(what_ + ": " + (hello.contains("error") && hello["error"].is_string()
                                               ? hello["error"].get<std::string>()
                                               : std::string("the server refused the trace")));
    }
    if (!hello.contains("trace")) throw ServeUnavailable(what_ + ": the hello carries no trace");
    summary_ = summary_from_json(hello["trace"]);
    server_ = hello.value("server", "");
    names_.assign(static_cast<std::size_t>(summary_.string_count) + 1, std::string());
    have_name_.assign(names_.size(), false);
    // Say which version we speak, so that the server can refuse another one clearly too.
    try {
        call({{"op", "hello"}, {"version", kProtocolVersion}});
    } catch (const RuntimeError& e) {
        throw ServeUnavailable(e.what());
    }
    hello_done_ = true;
}

void TraceClient::fail(const std::string& why) {
    if (broken_.empty()) {
        const std::string how = ended_how();
        broken_ = "the connection to " + what_ + " was lost: " + why + (how.empty() ? "" : " (" + how + ")");
        close_and_reap(false);
    }
    throw RuntimeError(broken_);
}

std::string TraceClient::ended_how() {
    // The process's status, once it exited (waited for briefly), and its last words.
    std::string how;
    if (pid_ > 0) {
        int status = 0;
        pid_t r = 0;
        for (int i = 0; i < 50 && (r = ::waitpid(pid_, &status, WNOHANG)) == 0; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (r == pid_) {
            pid_ = -1;
            how = WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                    : "killed by signal " + std::to_string(WTERMSIG(status));
        }
    }
    if (err_ >= 0) {
        char buf[4096];
        ssize_t n;
        while ((n = ::read(err_, buf, sizeof buf)) > 0) stderr_.append(buf, static_cast<std::size_t>(n));
    }
    std::string tail = stderr_;
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
    if (!tail.empty()) how += (how.empty() ? "" : ": ") + tail;
    return how;
}

void TraceClient::close_and_reap(bool polite) {
    if (sock_ >= 0) {
        if (polite && hello_done_) {
            const std::string bye = "{\"id\":0,\"op\":\"bye\"}\n";
            (void)::send(sock_, bye.data(), bye.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        ::shutdown(sock_, SHUT_RDWR);
        ::close(sock_);
        sock_ = -1;
    }
    if (pid_ > 0) {
        // The server ends at the end of its input; ssh when its session does. Give it a
        // moment, then end it.
        int status = 0;
        pid_t r = 0;
        for (int i = 0; i < 100 && (r = ::waitpid(pid_, &status, WNOHANG)) == 0; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (r == 0) {
            ::kill(pid_, SIGTERM);
            for (int i = 0; i < 100 && (r = ::waitpid(pid_, &status, WNOHANG)) == 0; ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
            if (r == 0) {
                ::kill(pid_, SIGKILL);
                ::waitpid(pid_, &status, 0);
            }
        }
        pid_ = -1;
    }
    if (err_ >= 0) {
        ::close(err_);
        err_ = -1;
    }
}

void TraceClient::wait_readable() {
    auto last_byte = std::chrono::steady_clock::now();
    for (;;) {
        pollfd fds[2] = {{sock_, POLLIN, 0}, {err_, POLLIN, 0}};
        const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - last_byte);
        const int left = timeout_ms_ - static_cast<int>(waited.count());
        if (left <= 0) {
            if (!hello_done_) throw RuntimeError("no answer within " + std::to_string(timeout_ms_ / 1000) + " s");
            fail("no answer within " + std::to_string(timeout_ms_ / 1000) + " s");
        }
        const int n = ::poll(fds, err_ >= 0 ? 2 : 1, left);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail(std::string("poll: ") + std::strerror(errno));
        if (err_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP))) {
            char buf[4096];
            const ssize_t got = ::read(err_, buf, sizeof buf);
            if (got > 0) {
                stderr_.append(buf, static_cast<std::size_t>(got));
                if (stderr_.size() > kStderrKept) stderr_.erase(0, stderr_.size() - kStderrKept);
            } else if (got == 0) {
                ::close(err_);
                err_ = -1;
            }
        }
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) return;
    }
}

std::string TraceClient::read_line() {
    for (;;) {
        const auto nl = inbox_.find('\n');
        if (nl != std::string::npos) {
            std::string line = inbox_.substr(0, nl);
            inbox_.erase(0, nl + 1);
            return line;
        }
        if (inbox_.size() > kMaxAnswerLine) fail("an answer line longer than 64 MiB");
        wait_readable();
        char buf[65536];
        const ssize_t n = ::recv(sock_, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (!hello_done_) throw RuntimeError("the session ended");
            fail(n == 0 ? "the session ended" : std::string("recv: ") + std::strerror(errno));
        }
        inbox_.append(buf, static_cast<std::size_t>(n));
        bytes_received_ += static_cast<std::uint64_t>(n);
    }
}

void TraceClient::read_exact(std::string& out, std::size_t n) {
    while (inbox_.size() < n) {
        wait_readable();
        char buf[65536];
        const ssize_t got = ::recv(sock_, buf, sizeof buf, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) fail("the session ended in the middle of an answer");
        inbox_.append(buf, static_cast<std::size_t>(got));
        bytes_received_ += static_cast<std::uint64_t>(got);
    }
    out.assign(inbox_, 0, n);
    inbox_.erase(0, n);
}

void TraceClient::send_line(const std::string& line) {
    if (!broken_.empty()) throw RuntimeError(broken_);
    std::string_view rest(line);
    while (!rest.empty()) {
        const ssize_t n = ::send(sock_, rest.data(), rest.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail(std::string("cannot send a request: ") + std::strerror(errno));
        rest.remove_prefix(static_cast<std::size_t>(n));
    }
}

json TraceClient::read_answer(std::int64_t id, std::string* binary) {
    const std::string line = read_line();
    json answer;
    try {
        answer = json::parse(line);
    } catch (const json::parse_error&) {
        fail("a malformed answer (\"" + line.substr(0, 120) + "\")");
    }
    if (!answer.is_object()) fail("an answer that is not a JSON object");
    if (answer.contains("binary")) {
        const auto& b = answer["binary"];
        if (!b.is_number_unsigned() || b.get<std::uint64_t>() > (std::uint64_t{1} << 30)) fail("a bad binary length");
        std::string bytes;
        read_exact(bytes, static_cast<std::size_t>(b.get<std::uint64_t>()));
        if (binary) *binary = std::move(bytes);
    }
    // Answers come in request order; one for another request means the stream is out of step.
    if (!answer.contains("id") || (id >= 0 && !(answer["id"].is_null() || answer["id"] == id))) {
        fail("an answer to request " + answer.value("id", json()).dump() + " where " + std::to_string(id) + " was due");
    }
    return answer;
}

json TraceClient::call(json request) {
    const std::int64_t id = next_id_++;
    request["id"] = id;
    send_line(request.dump() + "\n");
    json answer = read_answer(id, nullptr);
    if (!answer.value("ok", false)) {
        throw RuntimeError(what_ + ": the server refused " + request["op"].dump() + ": " + answer.value("error", std::string("?")));
    }
    return answer;
}

void TraceClient::store_strings(const json& strings) {
    if (!strings.is_object()) return;
    for (const auto& [key, text] : strings.items()) {
        char* end = nullptr;
        const long long id = std::strtoll(key.c_str(), &end, 10);
        if (*end != '\0' || id < 1 || static_cast<std::size_t>(id) >= names_.size() || !text.is_string()) continue;
        names_[static_cast<std::size_t>(id)] = text.get<std::string>();
        have_name_[static_cast<std::size_t>(id)] = true;
    }
}

std::vector<DrawItem> TraceClient::window(int track, std::int64_t t0_ns, std::int64_t t1_ns, std::size_t max_items) {
    return std::move(windows({track}, t0_ns, t1_ns, max_items).front());
}

std::vector<std::vector<DrawItem>> TraceClient::windows(const std::vector<int>& tracks, std::int64_t t0_ns,
                                                        std::int64_t t1_ns, std::size_t max_items) {
    const std::int64_t first = next_id_;
    std::string requests;
    for (const int track : tracks) {
        requests += json{{"id", next_id_++}, {"op", "window"}, {"track", track}, {"t0_ns", t0_ns}, {"t1_ns", t1_ns},
                         {"max_items", max_items}}
                        .dump() +
                    "\n";
    }
    send_line(requests);
    std::vector<std::vector<DrawItem>> out;
    std::string failure;
    for (std::size_t i = 0; i < tracks.size(); ++i) {
        std::string packed;
        const json answer = read_answer(first + static_cast<std::int64_t>(i), &packed);
        if (!answer.value("ok", false)) {
            // Read the other answers first, so that the stream stays in step.
            if (failure.empty()) failure = answer.value("error", std::string("?"));
            out.emplace_back();
            continue;
        }
        if (!answer.contains("items") || !answer["items"].is_number_unsigned()) fail("a window answer without items");
        store_strings(answer.value("strings", json::object()));
        try {
            out.push_back(decode_window(packed, answer["items"].get<std::size_t>(), t0_ns));
        } catch (const RuntimeError& e) {
            fail(e.what());
        }
    }
    if (!failure.empty()) throw RuntimeError(what_ + ": the server refused a window: " + failure);
    return out;
}

std::optional<TraceEvent> TraceClient::event(std::int64_t id) {
    const json answer = call({{"op", "event"}, {"event", id}});
    if (answer.value("event", json()).is_null()) return std::nullopt;
    try {
        return event_from_json(answer["event"]);
    } catch (const RuntimeError& e) {
        fail(e.what());
    }
}

std::optional<std::pair<std::int64_t, std::int64_t>> TraceClient::step_span(std::int64_t step, std::int64_t micro_batch) {
    const json answer = call({{"op", "step_span"}, {"step", step}, {"micro_batch", micro_batch}});
    const json span = answer.value("span", json());
    if (span.is_null()) return std::nullopt;
    if (!span.is_array() || span.size() != 2 || !span[0].is_number_integer() || !span[1].is_number_integer()) {
        fail("a malformed step span");
    }
    return std::make_pair(span[0].get<std::int64_t>(), span[1].get<std::int64_t>());
}

bool TraceClient::has_string(std::int64_t id) const {
    return id >= 1 && static_cast<std::size_t>(id) < names_.size() && have_name_[static_cast<std::size_t>(id)];
}

const std::string& TraceClient::string(std::int64_t id) {
    static const std::string unknown = "?";
    if (id < 1 || static_cast<std::size_t>(id) >= names_.size()) return unknown;
    if (!have_name_[static_cast<std::size_t>(id)]) {
        store_strings(call({{"op", "strings"}, {"ids", {id}}}).value("strings", json::object()));
        if (!have_name_[static_cast<std::size_t>(id)]) return unknown;
    }
    return names_[static_cast<std::size_t>(id)];
}

json TraceClient::stats(std::size_t top_kernels) { return call({{"op", "stats"}, {"top", top_kernels}}).value("stats", json()); }

RankStepMatrix TraceClient::rank_steps() {
    const json answer = call({{"op", "rank_steps"}});
    try {
        return rank_steps_from_json(answer.value("rank_steps", json()));
    } catch (const RuntimeError& e) {
        fail(e.what());
    }
}

RangeTotals TraceClient::range_totals(const std::vector<int>& tracks, std::int64_t t0_ns, std::int64_t t1_ns) {
    const json answer = call({{"op", "range_stats"}, {"tracks", tracks}, {"t0_ns", t0_ns}, {"t1_ns", t1_ns}});
    RangeTotals totals;
    try {
        totals.events = answer.at("events").get<std::int64_t>();
        totals.busy_ns = answer.at("busy_ns").get<std::array<std::int64_t, 6>>();
    } catch (const json::exception&) {
        fail("a malformed range_stats answer");
    }
    return totals;
}

std::int64_t TraceClient::find_next(const std::vector<int>& tracks, const std::string& text, std::int64_t after_ns) {
    const json answer = call({{"op", "find_next"}, {"tracks", tracks}, {"text", text}, {"after_ns", after_ns}});
    if (!answer.contains("event") || !answer["event"].is_number_integer()) fail("a malformed find_next answer");
    return answer["event"].get<std::int64_t>();
}

json TraceClient::raw(json request) {
    const std::int64_t id = next_id_++;
    request["id"] = id;
    send_line(request.dump() + "\n");
    return read_answer(id, nullptr);
}

json TraceClient::raw_line(const std::string& line) {
    send_line(line + "\n");
    // A malformed line has no id the server could read: its answer carries id null.
    return read_answer(-1, nullptr);
}

}  // namespace meshwork::profiler::remote
