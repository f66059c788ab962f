// The remote trace protocol against hostile input (docs/remote-protocol.md, "Limits"; issues
// 31 and 36): a host or path that would inject an ssh option or a remote shell command is
// refused before anything starts; a server that lies (huge counts, more items than asked,
// huge or truncated binary parts, wrong types, deep nesting, a layout naming a local file)
// is refused with a message in words, within the memory it was allowed; and serve-trace
// answers no request that names a file or SQL.
//
// The hostile server is a socket pair: its bytes are written in full before the client
// reads, then the write side is closed, so that no test waits on a timeout.
#include <QtTest>

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/common/resources.h"
#include "profiler/remote/ssh_command.h"
#include "profiler/remote/trace_client.h"
#include "profiler/remote/trace_protocol.h"
#include "profiler/store/trace_writer.h"
#include "tests/profiler/trace_test_util.h"
#include "tests/support/run_cli.h"

using namespace meshwork;
using namespace meshwork::profiler;
using namespace meshwork::profiler::remote;
using nlohmann::json;

namespace {

// A server that says `bytes` and nothing else; owns its end of the socket pair.
class FakeServer {
public:
    explicit FakeServer(std::string bytes) {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) throw std::runtime_error("socketpair");
        client_fd = sv[0];
        peer_ = sv[1];
        writer_ = std::thread([this, bytes = std::move(bytes)] {
            std::string_view rest(bytes);
            while (!rest.empty()) {
                const ssize_t n = ::send(peer_, rest.data(), rest.size(), MSG_NOSIGNAL);
                if (n <= 0) break;
                rest.remove_prefix(static_cast<std::size_t>(n));
            }
            ::shutdown(peer_, SHUT_WR);
        });
    }
    ~FakeServer() {
        writer_.join();
        ::close(peer_);
    }
    FakeServer(const FakeServer&) = delete;
    FakeServer& operator=(const FakeServer&) = delete;

    int client_fd = -1;  // the client takes it over

private:
    int peer_ = -1;
    std::thread writer_;
};

json good_trace() {
    return {{"path", "/scratch/run.sqlite"},
            {"format_version", 1},
            {"complete", true},
            {"event_count", 10},
            {"dropped_events", 0},
            {"start_ns", 0},
            {"end_ns", 1000},
            {"string_count", 3},
            {"run_info",
             {{"tool_version", "t"},
              {"source", "meshwork-sim"},
              {"layout_json", ""},
              {"cluster", ""},
              {"start_time_unix_ns", 0},
              {"clock_domain", "simulated"},
              {"world_size", 1},
              {"extra", json::object()}}},
            {"tracks",
             {{{"id", 1}, {"rank", 0}, {"kind", 0}, {"index", 0}, {"name", "compute"}, {"event_count", 10},
               {"start_ns", 0}, {"end_ns", 1000}}}},
            {"ranks", {{{"rank", 0}, {"device", "cpu"}, {"clock_offset_ns", 0}}}}};
}

std::string hello_line(const json& trace) {
    return json{{"protocol", "meshwork-trace"}, {"version", kProtocolVersion}, {"ok", true}, {"server", "fake"}, {"trace", trace}}.dump() +
           "\n";
}

// The hello, the answer to the client's hello request (id 1), then `rest`.
std::string session(const json& trace, const std::string& rest = {}) {
    return hello_line(trace) + "{\"id\":1,\"ok\":true}\n" + rest;
}

// A rank_steps answer (request id 2): the counts, then `binary` announced and `bytes` sent.
std::string rank_steps_answer(std::int64_t ranks, std::int64_t steps, const std::string& bytes, std::size_t binary) {
    return json{{"id", 2}, {"ok", true}, {"rank_steps", {{"ranks", ranks}, {"steps", steps}}}, {"binary", binary}}.dump() +
           "\n" + bytes;
}

long max_rss_kib() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

// The message of what `f` throws (RuntimeError), or "" when it throws nothing.
template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const RuntimeError& e) {
        return e.what();
    }
    return "";
}

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

}  // namespace

class TstRemoteHostile : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QByteArray original_path_;
    QString original_cwd_;

    std::unique_ptr<TraceClient> connect_fake(FakeServer& server) {
        return std::make_unique<TraceClient>(server.client_fd, "node01:/scratch/run.sqlite", 5000);
    }

    static void write_small_trace(const std::string& path) {
        auto writer = TraceWriter::create(path);
        TraceRunInfo info;
        info.source = "meshwork-cpu";
        info.world_size = 1;
        writer->set_run_info(info);
        const int track = writer->add_track({0, TrackKind::ComputeStream, 0, "compute"});
        for (int i = 0; i < 100; ++i) {
            auto e = test::make_event(track, EventKind::Compute, "kernel#" + std::to_string(i % 5), i * 100, i * 100 + 50);
            e.step = i / 10;
            writer->add_event(e);
        }
        writer->close();
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        original_path_ = qgetenv("PATH");
        qputenv("PATH", QByteArray(MESHWORK_SSH_STANDIN_DIR) + ":" + original_path_);
        original_cwd_ = QDir::currentPath();
        // The ssh stand-in runs the remote command in this folder: anything an injected
        // command made would land here.
        QVERIFY(QDir::setCurrent(dir_.path()));
    }

    void cleanupTestCase() { QDir::setCurrent(original_cwd_); }

    void hosts_that_would_inject_are_refused() {
        for (const char* host : {"-oProxyCommand=touch PWNED", "-x", "node01;touch PWNED", "$(touch PWNED)",
                                 "`touch PWNED`", "node 01", "node01\ntouch PWNED", "me@-node01", "-me@node01",
                                 "me@", "@node01", "node01%x", "[::1", "node'01", "node01/x", "", ".node01",
                                 "[::1];x", "fe80::1%eth0;x", "user@host@x;y"}) {
            const std::string why = error_of([&] { ssh_serve_command(host, "/scratch/run.sqlite"); });
            QVERIFY2(has(why, "is not a host name ssh can take"), host);
            QVERIFY2(!ssh_host_problem(host).empty(), host);
        }
        for (const char* host : {"node01", "me@node01", "node-01.cluster.example.org", "10.0.0.1", "[fe80::1]",
                                 "fe80::1%eth0", "me@[::1]", "my_alias"}) {
            QVERIFY2(ssh_host_problem(host).empty(), ssh_host_problem(host).c_str());
            const auto argv = ssh_serve_command(host, "/scratch/run.sqlite");
            // The destination follows "--", so it can never be read as an option.
            const auto dashes = std::find(argv.begin(), argv.end(), "--");
            QVERIFY(dashes != argv.end() && dashes + 2 == argv.end() - 1);
            QVERIFY2(dashes[1].find('[') == std::string::npos, dashes[1].c_str());  // ssh takes IPv6 bare
        }
        // Paths and remote commands with control characters (a newline ends the remote
        // command and starts another) are refused; every other character is quoted.
        for (const std::string& path : {std::string("/x\ntouch PWNED"), std::string("/x\rb"), std::string("/x\0y", 4),
                                       std::string(""), std::string("/x\x1b]0;title\x07")}) {
            QVERIFY(has(error_of([&] { ssh_serve_command("node01", path); }), "the remote path"));
        }
        QVERIFY(has(error_of([&] { ssh_serve_command("node01", "/x", "meshwork-cli\ntouch PWNED"); }), "remote command"));
        QCOMPARE(posix_shell_quote("it's $(x) `y`; z"), std::string("'it'\\''s $(x) `y`; z'"));
        // A refused spec is no reason to copy the file with scp instead.
        try {
            ssh_serve_command("-oProxyCommand=x", "/p");
            QFAIL("accepted an option as the host");
        } catch (const ServeUnavailable&) {
            QFAIL("a refused host must not fall back to scp");
        } catch (const BadRemoteSpec&) {
        }
    }

    void hostile_paths_reach_serve_trace_literally() {
        // Real traces whose names hold shell syntax, quotes and a leading '-': the remote shell
        // (sh -c, through the stand-in) hands each to serve-trace as one literal argument.
        for (const std::string& name : {std::string("a;b $(touch PWNED) `touch PWNED2` \"q\" 'r' \\ & | > x.sqlite"),
                                       std::string("-oProxyCommand=touch PWNED.sqlite"), std::string("--help")}) {
            write_small_trace(test::temp_path(dir_, name));
            for (const std::string& path : {test::temp_path(dir_, name), name}) {  // absolute and relative
                TraceClient client(ssh_serve_command("node01", path, MESHWORK_CLI_PATH), "node01:" + path);
                QCOMPARE(client.summary().event_count, std::int64_t{100});
                QVERIFY2(client.summary().path.ends_with(name), client.summary().path.c_str());
            }
        }
        QVERIFY(!QFileInfo::exists(dir_.filePath("PWNED")));
        QVERIFY(!QFileInfo::exists(dir_.filePath("PWNED2")));
        QVERIFY(!QFileInfo::exists(dir_.filePath("x.sqlite")));
    }

    void huge_string_count_costs_nothing_until_names_arrive() {
        // 2^27 names claimed: a table of that many strings would be 4.3 GB.
        json trace = good_trace();
        trace["string_count"] = std::int64_t{1} << 27;
        FakeServer server(session(trace, "{\"id\":2,\"ok\":true,\"strings\":{\"99999999\":\"late\"}}\n"));
        const long before = max_rss_kib();
        auto client = connect_fake(server);
        QVERIFY2(max_rss_kib() - before < 64 * 1024, qPrintable(QString::number(max_rss_kib() - before)));
        QCOMPARE(client->string(99999999), std::string("late"));
        QVERIFY(client->has_string(99999999));
        QCOMPARE(client->string(std::int64_t{1} << 28), std::string("?"));  // outside the trace: not asked
        // Over what a 32-bit name id can hold: refused in words.
        trace["string_count"] = std::int64_t{1} << 32;
        FakeServer over(session(trace));
        const std::string why = error_of([&] { connect_fake(over); });
        QVERIFY2(has(why, "the server's hello: field 'trace.string_count' should be an integer in 0..4294967295"), why.c_str());
    }

    void window_with_more_items_than_asked_is_refused() {
        FakeServer server(session(good_trace(), "{\"id\":2,\"ok\":true,\"items\":4194304,\"strings\":{},\"binary\":0}\n"));
        auto client = connect_fake(server);
        const long before = max_rss_kib();
        const std::string why = error_of([&] { client->window(1, 0, 1000, 859); });
        QVERIFY2(has(why, "field 'items' should be an integer in 0..859"), why.c_str());
        QVERIFY2(has(why, "(it is 4194304)"), why.c_str());
        QVERIFY(client->broken());
        QVERIFY2(max_rss_kib() - before < 64 * 1024, qPrintable(QString::number(max_rss_kib() - before)));
        // Every later call fails at once with the same message.
        QCOMPARE(error_of([&] { client->step_span(0, -1); }), client->failure());
    }

    void huge_or_truncated_binary_parts_are_refused() {
        {
            // 2^40 bytes announced for one item: refused before a byte is read.
            FakeServer server(session(good_trace(), "{\"id\":2,\"ok\":true,\"items\":1,\"binary\":1099511627776}\n"));
            auto client = connect_fake(server);
            const std::string why = error_of([&] { client->window(1, 0, 1000, 10); });
            QVERIFY2(has(why, "field 'binary' should be an integer in 0..700"), why.c_str());
        }
        {
            // 40 bytes announced, 5 sent, then the session ends: a truncated frame.
            FakeServer server(session(good_trace(), "{\"id\":2,\"ok\":true,\"items\":2,\"binary\":40}\n12345"));
            auto client = connect_fake(server);
            const std::string why = error_of([&] { client->window(1, 0, 1000, 10); });
            QVERIFY2(has(why, "ended in the middle of an answer"), why.c_str());
        }
        {
            // A binary part where none is allowed, and items that do not decode.
            FakeServer server(session(good_trace(), "{\"id\":2,\"ok\":true,\"binary\":3}\nabc"));
            auto client = connect_fake(server);
            const std::string why = error_of([&] { client->step_span(0, -1); });
            QVERIFY2(has(why, "field 'binary' should be absent"), why.c_str());
        }
        {
            const std::string items("\x02\x02\x01\x09\x01\x02\x00", 7);  // kind 9 does not exist
            FakeServer server(session(good_trace(), "{\"id\":2,\"ok\":true,\"items\":1,\"binary\":7}\n" + items));
            auto client = connect_fake(server);
            const std::string why = error_of([&] { client->window(1, 0, 1000, 10); });
            QVERIFY2(has(why, "event kind of 9"), why.c_str());
        }
    }

    void wrong_types_are_named_in_words() {
        struct Case {
            const char* field;
            json value;
            const char* expected;
        };
        const Case cases[] = {
            {"string_count", "many", "the server's hello: field 'trace.string_count' should be an integer"},
            {"complete", 1, "field 'trace.complete' should be true or false (it is 1)"},
            {"tracks", json::object(), "field 'trace.tracks' should be an array (it is an object)"},
            {"event_count", -5, "field 'trace.event_count' should be an integer in 0.."},
            {"path", nullptr, "field 'trace.path' should be a string (it is null)"},
        };
        for (const auto& c : cases) {
            json trace = good_trace();
            trace[c.field] = c.value;
            FakeServer server(session(trace));
            const std::string why = error_of([&] { connect_fake(server); });
            QVERIFY2(has(why, c.expected), why.c_str());
            QVERIFY2(!has(why, "json.exception"), why.c_str());
        }
        {
            json trace = good_trace();
            trace["tracks"][0]["rank"] = "zero";
            FakeServer server(session(trace));
            const std::string why = error_of([&] { connect_fake(server); });
            QVERIFY2(has(why, "field 'trace.tracks[0].rank' should be an integer"), why.c_str());
            QVERIFY2(has(why, "(it is the string \"zero\")"), why.c_str());
        }
        {
            // A track id past int: was silently narrowed.
            json trace = good_trace();
            trace["tracks"][0]["id"] = std::int64_t{1} << 40;
            FakeServer server(session(trace));
            QVERIFY(has(error_of([&] { connect_fake(server); }), "field 'trace.tracks[0].id' should be an integer in 0..2147483647"));
        }
        {
            // The hello's own fields: "ok" as a string was "[json.exception.type_error.302]".
            FakeServer server("{\"protocol\":\"meshwork-trace\",\"version\":" + std::to_string(kProtocolVersion) +
                              ",\"ok\":\"yes\"}\n");
            const std::string why = error_of([&] { connect_fake(server); });
            QVERIFY2(has(why, "the server's hello: field 'ok' should be true or false (it is the string \"yes\")"), why.c_str());
        }
        {
            // An answer whose "ok" is a number, then one whose id is another request's.
            FakeServer server(session(good_trace(), "{\"id\":2,\"ok\":1}\n"));
            auto client = connect_fake(server);
            const std::string why = error_of([&] { client->step_span(0, -1); });
            QVERIFY2(has(why, "the server's answer to step_span: field 'ok' should be true or false"), why.c_str());
        }
        {
            FakeServer server(session(good_trace(), "{\"id\":7,\"ok\":true}\n"));
            auto client = connect_fake(server);
            const std::string why = error_of([&] { client->event(3); });
            QVERIFY2(has(why, "field 'id' should be null or 2"), why.c_str());
        }
        {
            FakeServer server(session(good_trace(), "{\"id\":2,\"ok\":true,\"event\":{\"rank\":0}}\n"));
            auto client = connect_fake(server);
            const std::string why = error_of([&] { client->event(3); });
            QVERIFY2(has(why, "the server's event answer: field 'event.track' should be an integer"), why.c_str());
        }
        {
            // rank_steps (a binary part since protocol 2): counts over the bound that the
            // hello's event count allows (10 events: rank_step_cell_bound = 4 M cells) are
            // refused before a byte of the matrix is read.
            FakeServer server(session(good_trace(), rank_steps_answer(3000, 3000, "", 1)));
            auto client = connect_fake(server);
            const std::string why = error_of([&] { client->rank_steps(); });
            QVERIFY2(has(why, "field 'rank_steps.steps' should be at most 1398 for 3000 ranks"), why.c_str());
        }
        {
            // A byte count past what the counts can pack into.
            FakeServer server(session(good_trace(), rank_steps_answer(2, 1, "", std::size_t{1} << 40)));
            auto client = connect_fake(server);
            const std::string why = error_of([&] { client->rank_steps(); });
            QVERIFY2(has(why, "field 'binary' should be an integer in 0.."), why.c_str());
        }
        {
            // Fewer bytes than cells; a flag that is not 0..2; a NaN; ranks not ascending.
            RankStepMatrix m;
            m.ranks = {0, 1};
            m.steps = {0};
            m.cells = {RankStepCell{.present = true, .step_s = 1}, RankStepCell{.present = true, .step_s = 2}};
            std::string good = encode_rank_steps(m);
            std::string flag = good;
            flag[3] = 7;  // after ranks (2 bytes) and steps (1): the first cell's flag
            m.cells[1].step_s = std::nan("");
            const std::pair<std::string, const char*> matrices[] = {
                {good.substr(0, 15), "ends in cell 0"},  // the flag, one double and 3 bytes
                {flag, "cell 0 has flag 7"},
                {encode_rank_steps(m), "cell 1 holds a value that is not finite"},
                {std::string("\x02\x01\x00", 3) + good.substr(3), "rank 1 is 0, not an int above the previous one"},
                {good + "x", "followed by stray bytes"},
            };
            for (const auto& [bytes, why_part] : matrices) {
                FakeServer server(session(good_trace(), rank_steps_answer(2, 1, bytes, bytes.size())));
                auto client = connect_fake(server);
                const std::string why = error_of([&] { client->rank_steps(); });
                QVERIFY2(has(why, why_part), why.c_str());
            }
        }
        {
            // Names for ids that were not asked for.
            FakeServer server(session(good_trace(), "{\"id\":2,\"ok\":true,\"strings\":{\"3\":\"x\"}}\n"));
            auto client = connect_fake(server);
            const std::string why = error_of([&] { (void)client->string(2); });
            QVERIFY2(has(why, "not an id that was asked for"), why.c_str());
        }
    }

    void deep_nesting_and_garbage_are_refused() {
        std::string deep = std::string(100000, '[') + std::string(100000, ']');
        {
            json trace = good_trace();
            std::string line = hello_line(trace);
            line.insert(line.find("\"server\""), "\"x\":" + deep + ",");
            FakeServer server(line);
            const std::string why = error_of([&] { connect_fake(server); });
            QVERIFY2(has(why, "does not speak"), why.c_str());  // not a hello of this protocol
        }
        {
            FakeServer server(session(good_trace(), "{\"id\":2,\"ok\":true,\"span\":" + deep + "}\n"));
            auto client = connect_fake(server);
            const std::string why = error_of([&] { client->step_span(0, -1); });
            QVERIFY2(has(why, "nested deeper than 32 levels"), why.c_str());
        }
        {
            FakeServer server(session(good_trace(), std::string("\x01\x02garbage\n")));
            auto client = connect_fake(server);
            const std::string why = error_of([&] { client->step_span(0, -1); });
            QVERIFY2(has(why, "the server's answer to step_span: not a JSON line"), why.c_str());
        }
    }

    void layout_naming_a_local_file_is_not_opened() {
        // A layout whose model is a real model file by path: read, it would give a mesh.
        const QString model = dir_.filePath("my-model.json");
        QVERIFY(QFile::copy(QString::fromStdString(resource_dir()) + "/models/tiny.json", model));
        QFile preset(QString::fromStdString(resource_dir()) + "/layouts/tiny-cpu.json");
        QVERIFY(preset.open(QIODevice::ReadOnly));
        json layout = json::parse(preset.readAll().toStdString());
        {
            json trace = good_trace();
            trace["run_info"]["layout_json"] = layout.dump();  // names presets: read
            FakeServer server(session(trace));
            const auto mesh = connect_fake(server)->mesh();
            QVERIFY2(mesh.get() != nullptr, mesh.error.c_str());
        }
        for (const auto& [key, value] : {std::pair{"model", model.toStdString()}, std::pair{"model", std::string("/etc/shadow")},
                                         std::pair{"cluster", std::string("/etc/passwd")}}) {
            json trace = good_trace();
            json named = layout;
            named[key] = value;
            trace["run_info"]["layout_json"] = named.dump();
            FakeServer server(session(trace));
            const auto mesh = connect_fake(server)->mesh();
            QVERIFY(mesh.get() == nullptr);
            QVERIFY2(has(mesh.error, "may name bundled presets only"), mesh.error.c_str());
        }
        // A nested reference (the cluster's GPU) is refused the same way.
        QFile cluster(QString::fromStdString(resource_dir()) + "/clusters/cpu-local.json");
        QVERIFY(cluster.open(QIODevice::ReadOnly));
        json named = layout;
        named["cluster"] = json::parse(cluster.readAll().toStdString());
        named["cluster"]["gpu"] = "/etc/passwd";
        json trace = good_trace();
        trace["run_info"]["layout_json"] = named.dump();
        FakeServer server(session(trace));
        const auto mesh = connect_fake(server)->mesh();
        QVERIFY(mesh.get() == nullptr);
        QVERIFY2(has(mesh.error, "'/etc/passwd' is not a bundled gpu preset"), mesh.error.c_str());
    }

    void serve_trace_answers_no_file_and_no_sql() {
        const std::string path = test::temp_path(dir_, "served.sqlite");
        write_small_trace(path);
        TraceClient client(ssh_serve_command("node01", path, MESHWORK_CLI_PATH), "node01:" + path);
        const std::string attach = "x'; ATTACH DATABASE 'attached.db' AS a; CREATE TABLE a.t(x); --";
        // Text is text: a name search, never SQL.
        const int track = client.summary().tracks.at(0).id;
        QCOMPARE(client.find_next({track}, attach, -1), std::int64_t{-1});
        for (const json& request : {json{{"op", "stats"}, {"path", "/etc/passwd"}}, json{{"op", "stats"}, {"file", "x"}},
                                    json{{"op", "stats"}, {"sql", attach}}, json{{"op", "attach"}, {"db", "attached.db"}},
                                    json{{"op", "window"}, {"track", 1}, {"t0_ns", 0}, {"t1_ns", 10}, {"max_items", 1},
                                         {"path", "../../etc/passwd"}}}) {
            const json answer = client.raw(request);
            QCOMPARE(answer["ok"], false);
        }
        // Nesting past the bound: refused, serving goes on.
        const json deep = client.raw_line("{\"op\":\"strings\",\"ids\":" + std::string(20000, '[') + std::string(20000, ']') + "}");
        QCOMPARE(deep["ok"], false);
        QVERIFY2(has(deep["error"].get<std::string>(), "nested deeper"), deep.dump().c_str());
        QVERIFY(!client.window(track, 0, 100000, 100).empty());
        QVERIFY(!QFileInfo::exists(dir_.filePath("attached.db")));
        QVERIFY(!QFileInfo::exists(QDir(original_cwd_).filePath("attached.db")));
    }
};

QTEST_GUILESS_MAIN(TstRemoteHostile)
#include "tst_remote_hostile.moc"
