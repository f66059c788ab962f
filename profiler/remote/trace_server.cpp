#include "profiler/remote/trace_server.h"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>

#include "core/common/error.h"
#include "profiler/analysis/rank_step_bound.h"
#include "profiler/analysis/timeline_queries.h"
#include "profiler/analysis/trace_stats.h"
#include "profiler/remote/peer_json.h"
#include "profiler/remote/trace_protocol.h"

namespace meshwork::profiler::remote {

namespace {

using nlohmann::json;

// A request the server refuses; its message goes back as the answer's error.
struct Refusal : std::runtime_error {
    using std::runtime_error::runtime_error;
};

bool write_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// Reads newline-terminated lines from a descriptor; a line longer than kMaxRequestBytes is
// skipped to its end and reported as too long.
class LineReader {
public:
    explicit LineReader(int fd) : fd_(fd) {}

    enum class Status { Line, TooLong, End };
    Status next(std::string& line) {
        line.clear();
        bool too_long = false;
        for (;;) {
            const auto nl = buffer_.find('\n', scanned_);
            if (nl != std::string::npos) {
                if (!too_long) line.assign(buffer_, 0, nl);
                buffer_.erase(0, nl + 1);
                scanned_ = 0;
                return too_long || line.size() > kMaxRequestBytes ? Status::TooLong : Status::Line;
            }
            if (buffer_.size() > kMaxRequestBytes) {
                too_long = true;
                buffer_.clear();
            }
            scanned_ = buffer_.size();
            char chunk[16384];
            const ssize_t n = ::read(fd_, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return Status::End;  // an unterminated last line is dropped
            buffer_.append(chunk, static_cast<std::size_t>(n));
        }
    }

private:
    int fd_;
    std::string buffer_;
    std::size_t scanned_ = 0;
};

void check_keys(const json& request, std::initializer_list<const char*> allowed) {
    for (const auto& [key, value] : request.items()) {
        if (key == "id" || key == "op") continue;
        bool known = false;
        for (const char* a : allowed) known = known || key == a;
        if (!known) throw Refusal("unknown field \"" + key + "\" for op \"" + request["op"].get<std::string>() + "\"");
    }
}

std::int64_t int_field(const json& request, const char* key, std::int64_t lo, std::int64_t hi) {
    if (!request.contains(key)) throw Refusal(std::string("field \"") + key + "\" is missing");
    const auto& v = request[key];
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))) {
        throw Refusal(std::string("field \"") + key + "\" must be an integer");
    }
    const auto x = v.get<std::int64_t>();
    if (x < lo || x > hi) {
        throw Refusal(std::string("field \"") + key + "\" is " + std::to_string(x) + ", outside " + std::to_string(lo) +
                      ".." + std::to_string(hi));
    }
    return x;
}

constexpr std::int64_t kMinTime = std::numeric_limits<std::int64_t>::min() / 4;
constexpr std::int64_t kMaxTime = std::numeric_limits<std::int64_t>::max() / 4;

class Server {
public:
    Server(const TraceReader& reader, int out_fd)
        : reader_(reader), out_(out_fd), sent_(static_cast<std::size_t>(reader.string_count()) + 1, false) {}

    bool send(const json& answer, std::string_view binary = {}) {
        std::string line = answer.dump(-1, ' ', false, json::error_handler_t::replace);
        line += '\n';
        if (binary.empty()) return write_all(out_, line);
        line.append(binary);
        return write_all(out_, line);
    }

    // Answers one request line; false when serving ends (bye) with `ok` telling whether
    // the answer could be written.
    bool handle(const std::string& line, bool& ok) {
        json id = nullptr;
        try {
            json request;
            try {
                // Bounded in depth: refusals quote values with dump(), which recurses.
                request = parse_peer_json(line, "request", kMaxRequestBytes);
            } catch (const PeerError& e) {
                throw Refusal(std::string(e.what()).find("not a JSON") != std::string::npos ? "not a JSON request line"
                                                                                             : e.what());
            }
            if (!request.is_object()) throw Refusal("a request is a JSON object");
            if (request.contains("id")) {
                if (!request["id"].is_number_integer()) throw Refusal("field \"id\" must be an integer");
                id = request["id"];
            }
            if (!request.contains("op") || !request["op"].is_string()) throw Refusal("field \"op\" (a string) is missing");
            for (const char* key : {"path", "file"}) {
                if (request.contains(key)) {
                    throw Refusal(std::string("serve-trace answers queries of its one trace only; requests name no "
                                              "file (\"") + key + "\" is refused)");
                }
            }
            const auto op = request["op"].get<std::string>();
            json answer = {{"id", id}, {"ok", true}};
            if (op == "bye") {
                check_keys(request, {});
                ok = send(answer);
                return false;
            }
            if (op == "window") {
                ok = window(request, answer);
                return true;
            }
            if (op == "hello") {
                check_keys(request, {"version"});
                const auto v = int_field(request, "version", 0, std::numeric_limits<int>::max());
                if (v != kProtocolVersion) {
                    throw Refusal("the client speaks protocol version " + std::to_string(v) +
                                  "; this meshwork-cli serves version " + std::to_string(kProtocolVersion));
                }
            } else if (op == "event") {
                check_keys(request, {"event"});
                const auto e = reader_.event(int_field(request, "event", 1, std::numeric_limits<std::int64_t>::max()));
                answer["event"] = e ? event_to_json(request["event"].get<std::int64_t>(), *e) : json(nullptr);
            } else if (op == "step_span") {
                check_keys(request, {"step", "micro_batch"});
                const auto step = int_field(request, "step", 0, std::numeric_limits<int>::max());
                const auto mb = request.contains("micro_batch")
                                    ? int_field(request, "micro_batch", -1, std::numeric_limits<int>::max())
                                    : -1;
                const auto span = reader_.step_span(step, mb);
                answer["span"] = span ? json::array({span->first, span->second}) : json(nullptr);
            } else if (op == "strings") {
                check_keys(request, {"ids"});
                answer["strings"] = strings(request);
            } else if (op == "stats") {
                check_keys(request, {"top"});
                const auto top = request.contains("top") ? int_field(request, "top", 0, 100000) : 20;
                answer["stats"] = stats_report_json(reader_, static_cast<std::size_t>(top));
            } else if (op == "rank_steps") {
                check_keys(request, {});
                // A binary part: a JSON array of 7 values a cell would pass the client's value
                // limit past ~1 M cells, while the bound allows 4 M and more.
                const RankStepMatrix m = compute_rank_steps_bounded(reader_);
                const std::string packed = encode_rank_steps(m);
                answer["rank_steps"] = {{"ranks", m.ranks.size()}, {"steps", m.steps.size()}};
                answer["binary"] = packed.size();
                ok = send(answer, packed);
                return ok;
            } else if (op == "range_stats") {
                check_keys(request, {"tracks", "t0_ns", "t1_ns"});
                const auto totals = range_totals(reader_, tracks(request), int_field(request, "t0_ns", kMinTime, kMaxTime),
                                                 int_field(request, "t1_ns", kMinTime, kMaxTime));
                answer["events"] = totals.events;
                answer["busy_ns"] = totals.busy_ns;
            } else if (op == "find_next") {
                check_keys(request, {"tracks", "text", "after_ns"});
                if (!request.contains("text") || !request["text"].is_string()) throw Refusal("field \"text\" (a string) is missing");
                answer["event"] = find_next_event(reader_, tracks(request), request["text"].get<std::string>(),
                                                  int_field(request, "after_ns", kMinTime, kMaxTime));
            } else {
                throw Refusal("unknown op \"" + op +
                              "\" (hello, window, event, step_span, strings, stats, rank_steps, range_stats, find_next, "
                              "bye)");
            }
            ok = send(answer);
            return ok;
        } catch (const Refusal& e) {
            ok = send({{"id", id}, {"ok", false}, {"error", e.what()}});
        } catch (const InputError& e) {
            // A part of the file that no earlier query touched is corrupt: say so, keep serving.
            ok = send({{"id", id}, {"ok", false}, {"error", e.what()}});
        }
        return ok;
    }

    void refuse(const std::string& message, bool& ok) { ok = send({{"id", nullptr}, {"ok", false}, {"error", message}}); }

private:
    bool window(const json& request, json& answer) {
        check_keys(request, {"track", "t0_ns", "t1_ns", "max_items"});
        const auto track = int_field(request, "track", 0, std::numeric_limits<int>::max());
        if (!reader_.track(static_cast<int>(track))) throw Refusal("the trace has no track " + std::to_string(track));
        const auto t0 = int_field(request, "t0_ns", kMinTime, kMaxTime);
        const auto t1 = int_field(request, "t1_ns", kMinTime, kMaxTime);
        const auto max_items = int_field(request, "max_items", 1, static_cast<std::int64_t>(kMaxWindowItems));
        const auto items = t1 > t0 ? reader_.window(static_cast<int>(track), t0, t1, static_cast<std::size_t>(max_items))
                                   : std::vector<DrawItem>{};
        // Each name goes over the connection once: the first window that draws it carries it.
        json fresh = json::object();
        for (const auto& d : items) {
            const auto n = static_cast<std::size_t>(d.name_id);
            if (n >= 1 && n < sent_.size() && !sent_[n]) {
                sent_[n] = true;
                fresh[std::to_string(n)] = reader_.string(d.name_id);
            }
        }
        const std::string packed = encode_window(items, t0);
        answer["items"] = items.size();
        answer["strings"] = std::move(fresh);
        answer["binary"] = packed.size();
        return send(answer, packed);
    }

    json strings(const json& request) {
        if (!request.contains("ids") || !request["ids"].is_array()) throw Refusal("field \"ids\" (an array) is missing");
        if (request["ids"].size() > kMaxIdsPerRequest) throw Refusal("more than " + std::to_string(kMaxIdsPerRequest) + " ids");
        json out = json::object();
        for (const auto& v : request["ids"]) {
            if (!v.is_number_integer()) throw Refusal("string ids are integers");
            const auto id = v.get<std::int64_t>();
            if (id < 1 || id > reader_.string_count()) {
                throw Refusal("string id " + std::to_string(id) + " outside 1.." + std::to_string(reader_.string_count()));
            }
            sent_[static_cast<std::size_t>(id)] = true;
            out[std::to_string(id)] = reader_.string(id);
        }
        return out;
    }

    std::vector<int> tracks(const json& request) const {
        if (!request.contains("tracks") || !request["tracks"].is_array()) throw Refusal("field \"tracks\" (an array) is missing");
        if (request["tracks"].size() > kMaxIdsPerRequest) throw Refusal("more than " + std::to_string(kMaxIdsPerRequest) + " tracks");
        std::vector<int> out;
        for (const auto& v : request["tracks"]) {
            const auto id = v.is_number_integer() ? v.get<std::int64_t>() : -1;
            if (id < 0 || id > std::numeric_limits<int>::max() || !reader_.track(static_cast<int>(id))) {
                throw Refusal("\"tracks\" names a track the trace lacks (" + v.dump() + ")");
            }
            out.push_back(static_cast<int>(id));
        }
        return out;
    }

    const TraceReader& reader_;
    int out_;
    std::vector<bool> sent_;  // string id -> already sent on this connection
};

}  // namespace

void write_refusal_hello(int out_fd, const std::string& message) {
    const json hello = {{"protocol", kProtocolName}, {"version", kProtocolVersion}, {"ok", false}, {"error", message}};
    write_all(out_fd, hello.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
}

int serve_trace(const TraceReader& reader, int in_fd, int out_fd) {
    Server server(reader, out_fd);
    const json hello = {{"protocol", kProtocolName},
                        {"version", kProtocolVersion},
                        {"ok", true},
                        {"server", "meshwork-cli " MESHWORK_VERSION},
                        {"trace", summary_to_json(reader)}};
    if (!server.send(hello)) return 1;
    LineReader lines(in_fd);
    std::string line;
    for (;;) {
        const auto status = lines.next(line);
        if (status == LineReader::Status::End) return 0;
        bool ok = true;
        if (status == LineReader::Status::TooLong) {
            server.refuse("request line longer than " + std::to_string(kMaxRequestBytes) + " bytes", ok);
            if (!ok) return 1;
            continue;
        }
        if (line.empty() || line == "\r") continue;
        const bool go_on = server.handle(line, ok);
        if (!ok) return 1;
        if (!go_on) return 0;
    }
}

}  // namespace meshwork::profiler::remote
