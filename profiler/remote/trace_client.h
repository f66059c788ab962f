// The client side of the remote trace protocol (docs/remote-protocol.md): starts a command
// that runs `meshwork-cli serve-trace PATH` (normally `ssh HOST meshwork-cli serve-trace
// PATH`, see ssh_serve_command) with its stdin/stdout on a socket pair, no port opened, and
// asks it the timeline's questions. No Qt: the GUI's RemoteTraceSource and the protocol
// tests use it alike.
//
// Failures: before the hello is accepted, ServeUnavailable (ssh or the remote meshwork-cli
// missing, another protocol version, a session that ends at once: the caller may copy the
// file instead); a server that cannot open its trace, RuntimeError with its reason; after
// that, any failure (the session died, no byte for `timeout_ms`, a malformed answer) is a
// RuntimeError, and the client is broken: every later call throws the same message at once.
// One client is used by one thread at a time.
//
// The server is not trusted (docs/remote-protocol.md, "Limits"): every answer is parsed
// within kMaxAnswerLineBytes and kMaxAnswerValues, every field is type- and range-checked
// (a wrong one is named in words: "the server's hello: field 'trace.string_count' should be
// an integer in 0..4294967295 (it is a string)"), a window may hold no more items than were
// asked and no more bytes than they can take, names are kept as they arrive (never
// allocated by a count the server claims) up to kMaxNameBytesPerConnection, and the layout
// the hello carries may name bundled presets only: no path it names is ever opened.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "profiler/analysis/timeline_queries.h"
#include "profiler/remote/peer_json.h"
#include "profiler/analysis/trace_layout.h"
#include "profiler/remote/ssh_command.h"
#include "profiler/remote/trace_protocol.h"

namespace meshwork::profiler::remote {

class ServeUnavailable : public RuntimeError {
public:
    using RuntimeError::RuntimeError;
};

// The remote meshwork-cli to run: $MESHWORK_REMOTE_CLI, else "meshwork-cli" (on the
// remote PATH).
std::string remote_cli_from_environment();

class TraceClient {
public:
    // Starts `argv` (argv[0] found on PATH) and reads its hello. `what` names the trace in
    // messages ("node01:/scratch/run.sqlite").
    TraceClient(std::vector<std::string> argv, std::string what, int timeout_ms = 20000);
    // Talks over `connected_fd` (a socket whose other end is the server; the client owns and
    // closes it) and reads its hello: no process (the protocol's tests and fuzz target).
    TraceClient(int connected_fd, std::string what, int timeout_ms);
    ~TraceClient();  // says bye, closes the connection and reaps the process
    TraceClient(const TraceClient&) = delete;
    TraceClient& operator=(const TraceClient&) = delete;

    [[nodiscard]] const TraceSummary& summary() const { return summary_; }
    [[nodiscard]] const std::string& server() const { return server_; }
    [[nodiscard]] const std::string& what() const { return what_; }
    // The mesh of the layout the hello carries (profiler::trace_mesh), read with preset
    // names only: a model, cluster or GPU it names by path is refused (`error` says so),
    // never opened here.
    [[nodiscard]] TraceMesh mesh() const;
    [[nodiscard]] bool broken() const { return !broken_.empty(); }
    [[nodiscard]] const std::string& failure() const { return broken_; }
    void set_timeout_ms(int ms) { timeout_ms_ = ms; }
    // Bytes received from the server so far, hello included (what crossed the network).
    [[nodiscard]] std::uint64_t bytes_received() const { return bytes_received_; }

    std::vector<DrawItem> window(int track, std::int64_t t0_ns, std::int64_t t1_ns, std::size_t max_items);
    // Several windows in one round trip: the requests go out together, then the answers
    // are read in order.
    std::vector<std::vector<DrawItem>> windows(const std::vector<int>& tracks, std::int64_t t0_ns, std::int64_t t1_ns,
                                               std::size_t max_items);
    std::optional<TraceEvent> event(std::int64_t id);
    std::optional<std::pair<std::int64_t, std::int64_t>> step_span(std::int64_t step, std::int64_t micro_batch);
    // A name by its id: those that windows carried are known, others are asked for.
    // Ids outside 1..string_count give "?".
    const std::string& string(std::int64_t id);
    [[nodiscard]] bool has_string(std::int64_t id) const;
    nlohmann::json stats(std::size_t top_kernels);
    // compute_rank_steps of the trace, computed on the server (the rank overview's data).
    RankStepMatrix rank_steps();
    RangeTotals range_totals(const std::vector<int>& tracks, std::int64_t t0_ns, std::int64_t t1_ns);
    std::int64_t find_next(const std::vector<int>& tracks, const std::string& text, std::int64_t after_ns);

    // Sends `request` as it is (an "id" is added) and returns the answer, ok or not; for
    // tests of the server's refusals. A window's binary part is read and dropped.
    nlohmann::json raw(nlohmann::json request);
    // Sends one line as it is (malformed requests in tests) and returns the answer.
    nlohmann::json raw_line(const std::string& line);

private:
    void start(const std::vector<std::string>& argv);
    void read_hello();
    void send_line(const std::string& line);
    // Reads the answer to request `id` (-1: any) to `op`; a binary part of at most
    // `max_binary` bytes is allowed (0: none) and returned in `binary`. `limit_of`, when
    // given, checks the answer's other fields first and returns the limit they allow (a
    // rank_steps answer's counts), throwing PeerError when they are out of range.
    nlohmann::json read_answer(std::int64_t id, const std::string& op, std::string* binary, std::size_t max_binary,
                               const std::function<std::size_t(const PeerObject&)>& limit_of = {});
    nlohmann::json call(nlohmann::json request);  // throws RuntimeError when not ok
    // The session cannot go on: the server sent what the protocol does not allow.
    [[noreturn]] void fail_protocol(const std::string& why);
    std::string read_line();
    void read_exact(std::string& out, std::size_t n);
    // Waits for the socket to be readable, draining stderr; throws on timeout.
    void wait_readable();
    [[noreturn]] void fail(const std::string& why);
    [[nodiscard]] std::string ended_how();
    // Keeps the names of a `strings` object (`asked`: the only ids it may hold, or null for
    // any id of the trace); a malformed one breaks the session.
    void store_strings(const nlohmann::json& strings, const std::string& where, const std::vector<std::int64_t>* asked);
    void close_and_reap(bool polite);

    std::string what_;
    int timeout_ms_;
    pid_t pid_ = -1;
    int sock_ = -1;
    int err_ = -1;
    std::string inbox_;   // bytes read past what was consumed
    std::string stderr_;  // the process's stderr (its last 8 KiB)
    std::string broken_;
    bool hello_done_ = false;
    std::int64_t next_id_ = 1;
    std::uint64_t bytes_received_ = 0;
    TraceSummary summary_;
    std::string server_;
    std::unordered_map<std::int64_t, std::string> names_;  // string id -> text, as received
    std::size_t name_bytes_ = 0;                            // their total, under the cap
};

}  // namespace meshwork::profiler::remote
