#include "profiler/remote/trace_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <limits>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/common/resources.h"
#include "profiler/analysis/rank_step_bound.h"
#include "profiler/remote/peer_json.h"

extern char** environ;

namespace meshwork::profiler::remote {

namespace {

using nlohmann::json;

constexpr std::size_t kStderrKept = 8192;

// The answer's "error", when it is a string; "?" otherwise.
std::string error_of(const json& answer) {
    const auto it = answer.find("error");
    return it != answer.end() && it->is_string() ? it->get<std::string>().substr(0, 4096) : std::string("?");
}

}  // namespace

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

TraceClient::TraceClient(int connected_fd, std::string what, int timeout_ms)
    : what_(std::move(what)), timeout_ms_(timeout_ms), sock_(connected_fd) {
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
    const std::string where = "the server's hello";
    json hello;
    try {
        hello = parse_peer_json(line, where, kMaxAnswerValues);
    } catch (const PeerError&) {
    }
    const auto protocol = hello.is_object() ? hello.find("protocol") : hello.end();
    if (!hello.is_object() || protocol == hello.end() || !protocol->is_string() || *protocol != kProtocolName ||
        !hello.contains("version")) {
        std::string said = line.substr(0, 200);
        for (char& c : said) {
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
        }
        throw ServeUnavailable(what_ + ": the remote command does not speak the " + std::string(kProtocolName) +
                               " protocol (it said \"" + said + "\")");
    }
    const json& version = hello["version"];
    if (!version.is_number_integer() || version.get<std::int64_t>() != kProtocolVersion) {
        throw ServeUnavailable(what_ + ": the remote meshwork-cli speaks remote protocol version " +
                               (version.is_number() ? version.dump() : json_type_words(version)) +
                               "; this Meshwork speaks version " + std::to_string(kProtocolVersion) +
                               " (install the same Meshwork on both sides)");
    }
    try {
        const PeerObject h(hello, where, "");
        if (!h.boolean("ok")) {
            const auto error = hello.find("error");
            throw RuntimeError(what_ + ": " + (error != hello.end() && error->is_string()
                                                   ? error->get<std::string>().substr(0, 4096)
                                                   : std::string("the server refused the trace")));
        }
        summary_ = summary_from_json(h.raw("trace"), where);
        server_ = h.has("server") ? h.text("server") : std::string();
    } catch (const PeerError& e) {
        throw RuntimeError(what_ + ": " + e.what());
    }
    // Say which version we speak, so that the server can refuse another one clearly too.
    try {
        call({{"op", "hello"}, {"version", kProtocolVersion}});
    } catch (const RuntimeError& e) {
        if (!broken_.empty()) throw;  // the server broke the protocol: no reason to copy
        throw ServeUnavailable(e.what());
    }
    hello_done_ = true;
}

TraceMesh TraceClient::mesh() const {
    const PresetNamesOnly names_only("a layout sent by a remote serve-trace");
    return trace_mesh(what_, summary_.run_info);
}

void TraceClient::fail_protocol(const std::string& why) {
    if (broken_.empty()) {
        broken_ = what_ + ": the server broke the remote trace protocol, so the session was closed: " + why;
        close_and_reap(false);
    }
    throw RuntimeError(broken_);
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
        if (inbox_.size() > kMaxAnswerLineBytes) {
            const std::string why = "an answer line longer than " + std::to_string(kMaxAnswerLineBytes >> 20) + " MiB";
            if (!hello_done_) throw RuntimeError(why);
            fail_protocol(why);
        }
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

json TraceClient::read_answer(std::int64_t id, const std::string& op, std::string* binary, std::size_t max_binary,
                              const std::function<std::size_t(const PeerObject&)>& limit_of) {
    const std::string line = read_line();
    const std::string where = "the server's answer to " + op;
    json answer;
    try {
        answer = parse_peer_json(line, where, kMaxAnswerValues);
        const PeerObject a(answer, where, "");
        if (a.has("binary")) {
            if (max_binary == 0 && !limit_of) a.wrong("binary", "absent (only window and rank_steps answers carry bytes)");
            if (limit_of) max_binary = limit_of(a);
            const auto n = static_cast<std::size_t>(a.integer("binary", 0, static_cast<std::int64_t>(max_binary)));
            std::string bytes;
            read_exact(bytes, n);
            if (binary) *binary = std::move(bytes);
        }
        // Answers come in request order; one for another request means the stream is out of step.
        const json& got = a.raw("id");
        if (id >= 0 && !(got.is_null() || (got.is_number_integer() && got == id))) {
            a.wrong("id", "null or " + std::to_string(id) + ", the request due");
        }
        (void)a.boolean("ok");  // present and true or false
    } catch (const PeerError& e) {
        fail_protocol(e.what());
    }
    return answer;
}

json TraceClient::call(json request) {
    const std::int64_t id = next_id_++;
    request["id"] = id;
    const std::string op = request["op"].get<std::string>();
    send_line(request.dump() + "\n");
    json answer = read_answer(id, op, nullptr, 0);
    if (!answer["ok"].get<bool>()) throw RuntimeError(what_ + ": the server refused " + op + ": " + error_of(answer));
    return answer;
}

void TraceClient::store_strings(const json& strings, const std::string& where, const std::vector<std::int64_t>* asked) {
    try {
        const PeerObject names(strings, where, "strings");
        for (const auto& [key, text] : strings.items()) {
            // A decimal id in 1..string_count, and (for a strings request) one that was asked.
            std::int64_t id = 0;
            bool decimal = !key.empty() && key.size() <= 10 && key[0] != '0';
            for (const char c : key) {
                decimal = decimal && c >= '0' && c <= '9';
                if (decimal) id = id * 10 + (c - '0');
            }
            if (!decimal || id < 1 || id > summary_.string_count ||
                (asked && std::find(asked->begin(), asked->end(), id) == asked->end())) {
                std::string shown = key.substr(0, 24);
                for (char& c : shown) {
                    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
                }
                throw PeerError(where + ": field 'strings' names string \"" + shown + "\", not " +
                                (asked ? std::string("an id that was asked for") : "an id in 1.." + std::to_string(summary_.string_count)));
            }
            const std::string& value = names.text(key.c_str());
            auto [it, fresh] = names_.try_emplace(id);
            if (!fresh) continue;  // sent twice: the first text stays
            name_bytes_ += value.size();
            if (name_bytes_ > kMaxNameBytesPerConnection) {
                throw PeerError(where + ": more than " + std::to_string(kMaxNameBytesPerConnection >> 20) +
                                " MiB of names on one connection");
            }
            it->second = value;
        }
    } catch (const PeerError& e) {
        fail_protocol(e.what());
    }
}

std::vector<DrawItem> TraceClient::window(int track, std::int64_t t0_ns, std::int64_t t1_ns, std::size_t max_items) {
    return std::move(windows({track}, t0_ns, t1_ns, max_items).front());
}

std::vector<std::vector<DrawItem>> TraceClient::windows(const std::vector<int>& tracks, std::int64_t t0_ns,
                                                        std::int64_t t1_ns, std::size_t max_items) {
    if (!broken_.empty()) throw RuntimeError(broken_);
    // The server refuses more (kMaxWindowItems); asking more could not be checked below.
    max_items = std::min(max_items, kMaxWindowItems);
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
    const std::string where = "the server's answer to window";
    for (std::size_t i = 0; i < tracks.size(); ++i) {
        std::string packed;
        const json answer = read_answer(first + static_cast<std::int64_t>(i), "window", &packed,
                                        max_items * kMaxPackedItemBytes);
        if (!answer["ok"].get<bool>()) {
            // Read the other answers first, so that the stream stays in step.
            if (failure.empty()) failure = error_of(answer);
            out.emplace_back();
            continue;
        }
        std::size_t items = 0;
        try {
            // Never more items than were asked: the count sizes what is decoded.
            items = static_cast<std::size_t>(
                PeerObject(answer, where, "").integer("items", 0, static_cast<std::int64_t>(max_items)));
            out.push_back(decode_window(packed, items, t0_ns, summary_.string_count));
        } catch (const PeerError& e) {
            fail_protocol(e.what());
        }
        if (answer.contains("strings")) store_strings(answer["strings"], where, nullptr);
    }
    if (!failure.empty()) throw RuntimeError(what_ + ": the server refused a window: " + failure);
    return out;
}

std::optional<TraceEvent> TraceClient::event(std::int64_t id) {
    const json answer = call({{"op", "event"}, {"event", id}});
    const auto e = answer.find("event");
    if (e == answer.end() || e->is_null()) return std::nullopt;
    try {
        return event_from_json(*e);
    } catch (const PeerError& err) {
        fail_protocol(err.what());
    }
}

std::optional<std::pair<std::int64_t, std::int64_t>> TraceClient::step_span(std::int64_t step, std::int64_t micro_batch) {
    const json answer = call({{"op", "step_span"}, {"step", step}, {"micro_batch", micro_batch}});
    const auto span = answer.find("span");
    if (span == answer.end() || span->is_null()) return std::nullopt;
    if (!span->is_array() || span->size() != 2) {
        fail_protocol("the server's answer to step_span: field 'span' should be null or two integers (it is " +
                      json_type_words(*span) + ")");
    }
    // A parsed non-negative integer is nlohmann's unsigned kind: peer_integer takes both kinds
    // and refuses what does not fit the range.
    constexpr auto lo = std::numeric_limits<std::int64_t>::min();
    constexpr auto hi = std::numeric_limits<std::int64_t>::max();
    try {
        return std::make_pair(peer_integer((*span)[0], "the server's answer to step_span", "span[0]", lo, hi),
                              peer_integer((*span)[1], "the server's answer to step_span", "span[1]", lo, hi));
    } catch (const PeerError& e) {
        fail_protocol(e.what());
    }
}

bool TraceClient::has_string(std::int64_t id) const { return names_.contains(id); }

const std::string& TraceClient::string(std::int64_t id) {
    static const std::string unknown = "?";
    if (id < 1 || id > summary_.string_count) return unknown;
    if (const auto it = names_.find(id); it != names_.end()) return it->second;
    const std::vector<std::int64_t> asked{id};
    const json answer = call({{"op", "strings"}, {"ids", asked}});
    if (answer.contains("strings")) store_strings(answer["strings"], "the server's answer to strings", &asked);
    const auto it = names_.find(id);
    return it == names_.end() ? unknown : it->second;
}

json TraceClient::stats(std::size_t top_kernels) {
    const json answer = call({{"op", "stats"}, {"top", top_kernels}});
    const auto s = answer.find("stats");
    return s == answer.end() ? json() : *s;
}

RankStepMatrix TraceClient::rank_steps() {
    if (!broken_.empty()) throw RuntimeError(broken_);
    const std::int64_t id = next_id_++;
    send_line(json{{"id", id}, {"op", "rank_steps"}}.dump() + "\n");
    // The server computes the matrix only within rank_step_cell_bound of its trace's event
    // count, which the hello told: the same bound here, checked on the counts before a byte
    // of the matrix is read.
    const std::int64_t max_cells = rank_step_cell_bound(summary_.event_count);
    std::int64_t ranks = 0, steps = 0;
    std::string packed;
    const json answer = read_answer(id, "rank_steps", &packed, 0, [&](const PeerObject& a) {
        const PeerObject counts = a.object("rank_steps");
        ranks = counts.integer("ranks", 0, max_cells);
        steps = counts.integer("steps", 0, max_cells);
        if (steps > 0 && ranks > max_cells / steps) {
            counts.wrong("steps", "at most " + std::to_string(max_cells / std::max<std::int64_t>(ranks, 1)) + " for " +
                                      std::to_string(ranks) + " ranks (rank_step_cell_bound of the hello's " +
                                      std::to_string(summary_.event_count) + " events: " + std::to_string(max_cells) +
                                      " cells)");
        }
        return max_rank_steps_bytes(ranks * steps + ranks + steps);
    });
    if (!answer["ok"].get<bool>()) throw RuntimeError(what_ + ": the server refused rank_steps: " + error_of(answer));
    try {
        if (!answer.contains("binary")) {
            PeerObject(answer, "the server's answer to rank_steps", "").wrong("binary", "the byte count of the matrix");
        }
        return decode_rank_steps(packed, ranks, steps, max_cells);
    } catch (const PeerError& e) {
        fail_protocol(e.what());
    }
}

RangeTotals TraceClient::range_totals(const std::vector<int>& tracks, std::int64_t t0_ns, std::int64_t t1_ns) {
    const json answer = call({{"op", "range_stats"}, {"tracks", tracks}, {"t0_ns", t0_ns}, {"t1_ns", t1_ns}});
    const std::string where = "the server's answer to range_stats";
    RangeTotals totals;
    try {
        const PeerObject a(answer, where, "");
        totals.events = a.integer("events", 0, std::numeric_limits<std::int64_t>::max());
        const json& busy = a.array("busy_ns");
        if (busy.size() != totals.busy_ns.size()) a.wrong("busy_ns", "an array of 6 integers");
        for (std::size_t k = 0; k < totals.busy_ns.size(); ++k) {
            totals.busy_ns[k] = peer_integer(busy[k], where, "busy_ns[" + std::to_string(k) + "]",
                                             std::numeric_limits<std::int64_t>::min(),
                                             std::numeric_limits<std::int64_t>::max());
        }
    } catch (const PeerError& e) {
        fail_protocol(e.what());
    }
    return totals;
}

std::int64_t TraceClient::find_next(const std::vector<int>& tracks, const std::string& text, std::int64_t after_ns) {
    const json answer = call({{"op", "find_next"}, {"tracks", tracks}, {"text", text}, {"after_ns", after_ns}});
    try {
        return PeerObject(answer, "the server's answer to find_next", "")
            .integer("event", -1, std::numeric_limits<std::int64_t>::max());
    } catch (const PeerError& e) {
        fail_protocol(e.what());
    }
}

json TraceClient::raw(json request) {
    const std::int64_t id = next_id_++;
    request["id"] = id;
    const std::string op = request.contains("op") && request["op"].is_string() ? request["op"].get<std::string>() : "?";
    send_line(request.dump() + "\n");
    return read_answer(id, op, nullptr, op == "window" ? kMaxWindowItems * kMaxPackedItemBytes : 0);
}

json TraceClient::raw_line(const std::string& line) {
    send_line(line + "\n");
    // A malformed line has no id the server could read: its answer carries id null.
    return read_answer(-1, "a raw line", nullptr, 0);
}

}  // namespace meshwork::profiler::remote
