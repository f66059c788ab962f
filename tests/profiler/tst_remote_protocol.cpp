// The remote trace protocol end to end: the client (profiler/remote/trace_client) starts
// `ssh HOST meshwork-cli serve-trace PATH` with the ssh stand-in first on PATH
// (tests/support/ssh-standin/ssh, which runs the remote command here), and every answer
// is checked against the local TraceReader; then the server's refusals, a remote side
// that has no meshwork-cli, one that speaks another version, one that stops answering and
// a session that dies in the middle.
#include <QtTest>

#include <QProcess>

#include <nlohmann/json.hpp>

#include "profiler/analysis/rank_step_bound.h"
#include "profiler/analysis/timeline_queries.h"
#include "profiler/remote/trace_client.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_writer.h"
#include "tests/profiler/trace_test_util.h"
#include "tests/support/run_cli.h"

using namespace meshwork;
using namespace meshwork::profiler;
using namespace meshwork::profiler::remote;
using nlohmann::json;

class TstRemoteProtocol : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string trace_;
    QByteArray original_path_;

    std::unique_ptr<TraceClient> connect(const std::string& path, int timeout_ms = 20000) {
        return std::make_unique<TraceClient>(ssh_serve_command("node01", path, MESHWORK_CLI_PATH), "node01:" + path,
                                             timeout_ms);
    }

    // An executable script in the test folder (a fake remote meshwork-cli).
    QString write_script(const QString& name, const QByteArray& body) {
        const QString path = dir_.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly)) return {};
        f.write("#!/bin/sh\n" + body);
        f.close();
        f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        return path;
    }

    // Two ranks, three tracks, 60,000 events of 40 names, steps and micro-batches, events
    // of very different lengths (so that windows merge at every zoom).
    static void write_trace(const std::string& path) {
        auto writer = TraceWriter::create(path);
        TraceRunInfo info;
        info.source = "meshwork-cpu";
        info.world_size = 2;
        info.cluster = "test";
        writer->set_run_info(info);
        const int tracks[3] = {writer->add_track({0, TrackKind::ComputeStream, 0, "compute"}),
                               writer->add_track({0, TrackKind::CommStream, 0, "comm:tp"}),
                               writer->add_track({1, TrackKind::ComputeStream, 0, "compute"})};
        for (int t = 0; t < 3; ++t) {
            std::int64_t now = 1000 * t;
            for (int i = 0; i < 20000; ++i) {
                const std::int64_t len = 50 + (i * 7919 % 97) * ((i % 500 == 0) ? 10000 : 13);
                auto e = test::make_event(tracks[t], t == 1 ? EventKind::Communication : EventKind::Compute,
                                          (t == 1 ? "all_reduce(tp)#" : "block.mlp.fwd#") + std::to_string(i % 20),
                                          now, now + len);
                e.rank = t == 2 ? 1 : 0;
                e.step = i / 5000;
                e.micro_batch = (i / 1000) % 5;
                e.bytes = t == 1 ? 1 << 20 : 0;
                e.group_size = t == 1 ? 2 : 0;
                writer->add_event(e);
                now += len + (i % 3 == 0 ? 400 : 20);
            }
        }
        writer->close();
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        original_path_ = qgetenv("PATH");
        qputenv("PATH", QByteArray(MESHWORK_SSH_STANDIN_DIR) + ":" + original_path_);
        // A name with a space and a quote: the remote command is quoted for the remote shell.
        trace_ = test::temp_path(dir_, "run it's.sqlite");
        write_trace(trace_);
    }

    void cleanup() {
        qputenv("PATH", QByteArray(MESHWORK_SSH_STANDIN_DIR) + ":" + original_path_);
        qunsetenv("MESHWORK_TEST_SSH_DIE_AFTER");
        qunsetenv("MESHWORK_TEST_SSH_LOG");
        qunsetenv("MESHWORK_TEST_SSH_HANG_ON");
    }

    void hello_describes_the_trace() {
        const QString log = dir_.filePath("ssh-args.txt");
        qputenv("MESHWORK_TEST_SSH_LOG", log.toLocal8Bit());
        const auto local = TraceReader::open(trace_);
        auto client = connect(trace_);
        const auto& s = client->summary();
        QCOMPARE(s.path, trace_);
        QCOMPARE(s.event_count, local.event_count());
        QCOMPARE(s.start_ns, local.start_ns());
        QCOMPARE(s.end_ns, local.end_ns());
        QCOMPARE(s.string_count, local.string_count());
        QCOMPARE(s.run_info.source, std::string("meshwork-cpu"));
        QCOMPARE(s.run_info.world_size, 2);
        QCOMPARE(s.tracks.size(), local.tracks().size());
        for (std::size_t i = 0; i < s.tracks.size(); ++i) {
            QCOMPARE(s.tracks[i].id, local.tracks()[i].id);
            QCOMPARE(s.tracks[i].info.rank, local.tracks()[i].info.rank);
            QCOMPARE(s.tracks[i].info.name, local.tracks()[i].info.name);
            QCOMPARE(s.tracks[i].event_count, local.tracks()[i].event_count);
        }
        QCOMPARE(timeline_track_order(s.tracks), timeline_track_order(local.tracks()));
        QFile f(log);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray args = f.readAll();
        QVERIFY2(args.contains("BatchMode=yes\n"), args.constData());  // never a password prompt
        QVERIFY2(args.contains("\n--\nnode01\n"), args.constData());
    }

    void windows_match_the_local_reader() {
        const auto local = TraceReader::open(trace_);
        auto client = connect(trace_);
        const std::int64_t span = local.end_ns() - local.start_ns();
        const std::pair<std::int64_t, std::int64_t> windows[] = {
            {local.start_ns(), local.end_ns() + 1},
            {local.start_ns() + span / 3, local.start_ns() + span / 3 + span / 50},
            {local.start_ns() + span / 2, local.start_ns() + span / 2 + 5000},
            {local.end_ns() + 10, local.end_ns() + 1000},
        };
        int compared = 0;
        for (const auto& track : local.tracks()) {
            for (const auto& [t0, t1] : windows) {
                for (const std::size_t pixels : {std::size_t{1}, std::size_t{37}, std::size_t{1600}, std::size_t{1'000'000}}) {
                    const auto want = local.window(track.id, t0, t1, pixels);
                    const auto got = client->window(track.id, t0, t1, pixels);
                    QCOMPARE(got.size(), want.size());
                    for (std::size_t i = 0; i < want.size(); ++i) {
                        QCOMPARE(got[i].start_ns, want[i].start_ns);
                        QCOMPARE(got[i].end_ns, want[i].end_ns);
                        QCOMPARE(got[i].count, want[i].count);
                        QCOMPARE(got[i].busy_ns, want[i].busy_ns);
                        QCOMPARE(got[i].kind, want[i].kind);
                        QCOMPARE(got[i].name_id, want[i].name_id);
                        QCOMPARE(got[i].event_id, want[i].event_id);
                        // Names came with the windows: no further request is needed.
                        QVERIFY(client->has_string(got[i].name_id));
                        QCOMPARE(client->string(got[i].name_id), local.string(want[i].name_id));
                    }
                    compared += static_cast<int>(want.size());
                }
            }
        }
        QVERIFY(compared > 60000);  // the unmerged windows hold every event
        // Several windows in one round trip give the same as one at a time.
        std::vector<int> ids;
        for (const auto& t : local.tracks()) ids.push_back(t.id);
        const auto batch = client->windows(ids, windows[1].first, windows[1].second, 800);
        for (std::size_t i = 0; i < ids.size(); ++i) {
            QCOMPARE(batch[i].size(), local.window(ids[i], windows[1].first, windows[1].second, 800).size());
        }
    }

    void window_items_are_compact() {
        auto client = connect(trace_);
        const auto local = TraceReader::open(trace_);
        const json answer = client->raw({{"op", "window"}, {"track", local.tracks()[0].id}, {"t0_ns", local.start_ns()},
                                         {"t1_ns", local.end_ns() + 1}, {"max_items", 1'000'000}});
        QVERIFY(answer.value("ok", false));
        const auto items = answer["items"].get<double>(), bytes = answer["binary"].get<double>();
        QCOMPARE(items, 20000.0);
        qInfo("window of %.0f items: %.0f bytes, %.1f bytes an item", items, bytes, bytes / items);
        QVERIFY2(bytes / items <= 12, qPrintable(QString::number(bytes / items)));
    }

    void events_steps_totals_and_search_match() {
        const auto local = TraceReader::open(trace_);
        auto client = connect(trace_);
        for (const std::int64_t id : {1, 2, 777, 20001, 59999}) {
            const auto want = local.event(id);
            const auto got = client->event(id);
            QVERIFY(want && got);
            QCOMPARE(got->name, want->name);
            QCOMPARE(got->start_ns, want->start_ns);
            QCOMPARE(got->end_ns, want->end_ns);
            QCOMPARE(got->track, want->track);
            QCOMPARE(got->rank, want->rank);
            QCOMPARE(got->step, want->step);
            QCOMPARE(got->micro_batch, want->micro_batch);
            QCOMPARE(got->bytes, want->bytes);
            QCOMPARE(got->collective, want->collective);
        }
        QVERIFY(!client->event(10'000'000));
        QCOMPARE(client->step_span(2, -1), local.step_span(2, -1));
        QCOMPARE(client->step_span(1, 3), local.step_span(1, 3));
        QVERIFY(!client->step_span(99, -1));
        const auto order = timeline_track_order(local.tracks());
        const std::int64_t mid = (local.start_ns() + local.end_ns()) / 2;
        const auto want = range_totals(local, order, mid, mid + 2'000'000);
        const auto got = client->range_totals(order, mid, mid + 2'000'000);
        QVERIFY(want.events > 0);
        QCOMPARE(got.events, want.events);
        QCOMPARE(got.busy_ns, want.busy_ns);
        for (const char* text : {"ALL_REDUCE(tp)#7", "mlp.fwd#19", "no such name"}) {
            QCOMPARE(client->find_next(order, text, mid), find_next_event(local, order, text, mid));
        }
        // The rank overview's matrix, computed on the server.
        const auto want_steps = compute_rank_steps(local);
        const auto got_steps = client->rank_steps();
        QCOMPARE(got_steps.ranks, want_steps.ranks);
        QCOMPARE(got_steps.steps, want_steps.steps);
        QCOMPARE(got_steps.cells.size(), want_steps.cells.size());
        QVERIFY(!got_steps.cells.empty());
        for (std::size_t i = 0; i < want_steps.cells.size(); ++i) {
            QCOMPARE(got_steps.cells[i].present, want_steps.cells[i].present);
            QCOMPARE(got_steps.cells[i].step_s, want_steps.cells[i].step_s);
            QCOMPARE(got_steps.cells[i].compute_s, want_steps.cells[i].compute_s);
            QCOMPARE(got_steps.cells[i].exposed_comm_s, want_steps.cells[i].exposed_comm_s);
            QCOMPARE(got_steps.cells[i].collective_wait_s, want_steps.cells[i].collective_wait_s);
            QCOMPARE(got_steps.cells[i].waited_for_rank, want_steps.cells[i].waited_for_rank);
        }
        // stats: what `meshwork-cli stats --json` prints.
        const auto cli = test::run_cli({"stats", QString::fromStdString(trace_), "--json", "--top", "5"});
        QCOMPARE(cli.exit_code, 0);
        QCOMPARE(client->stats(5), json::parse(cli.out.toStdString()));
    }

    void rank_steps_past_a_million_cells() {
        // 1,100 ranks × 1,000 steps = 1.1 M cells from 2,200 events: within the 4 M cells
        // that rank_step_cell_bound allows any trace, so stats --stragglers and the Ranks view
        // hold it locally. Protocol 1 sent it as JSON, 8 values a cell, which the client's
        // 8 Mi-value limit refused; the binary part carries it whole.
        const std::string path = test::temp_path(dir_, "wide.sqlite");
        {
            auto writer = TraceWriter::create(path);
            TraceRunInfo info;
            info.source = "meshwork-cpu";
            info.world_size = 1100;
            writer->set_run_info(info);
            for (int r = 0; r < 1100; ++r) {
                const int track = writer->add_track({r, TrackKind::ComputeStream, 0, "compute"});
                const int first = r % 500;  // steps first and first + 500: in time order
                for (int k = 0; k < 2; ++k) {
                    const int step = first + 500 * k;
                    auto e = test::make_event(track, EventKind::Compute, "block.mlp.fwd", 1000 * step + r,
                                              1000 * step + r + 300 + k);
                    e.rank = r;
                    e.step = step;
                    writer->add_event(e);
                }
            }
            writer->close();
        }
        const auto local = TraceReader::open(path);
        const auto want = compute_rank_steps_bounded(local);
        QCOMPARE(want.cells.size(), std::size_t{1100} * 1000);
        auto client = connect(path);
        const auto got = client->rank_steps();
        QCOMPARE(got.ranks, want.ranks);
        QCOMPARE(got.steps, want.steps);
        QCOMPARE(got.cells.size(), want.cells.size());
        std::size_t present = 0;
        for (std::size_t i = 0; i < want.cells.size(); ++i) {
            const auto& a = got.cells[i];
            const auto& b = want.cells[i];
            if (a.present != b.present || a.step_s != b.step_s || a.compute_s != b.compute_s ||
                a.compute_on_cpu_s != b.compute_on_cpu_s || a.exposed_comm_s != b.exposed_comm_s ||
                a.collective_wait_s != b.collective_wait_s || a.waited_for_rank != b.waited_for_rank) {
                QFAIL(qPrintable(QString("cell %1 differs").arg(i)));
            }
            present += a.present ? 1 : 0;
        }
        QCOMPARE(present, std::size_t{2200});
        // The session goes on after the binary part.
        QVERIFY(client->step_span(3, -1).has_value());
    }

    void bad_requests_are_refused_and_serving_goes_on() {
        auto client = connect(trace_);
        const int track = client->summary().tracks[0].id;
        const json refused[] = {
            {{"op", "open"}, {"path", "/etc/passwd"}},
            {{"op", "window"}, {"path", "/etc/passwd"}, {"track", track}, {"t0_ns", 0}, {"t1_ns", 10}, {"max_items", 5}},
            {{"op", "unknown-op"}},
            {{"op", "window"}, {"track", 99999}, {"t0_ns", 0}, {"t1_ns", 10}, {"max_items", 5}},
            {{"op", "window"}, {"track", track}, {"t0_ns", 0}, {"t1_ns", 10}, {"max_items", 0}},
            {{"op", "window"}, {"track", track}, {"t0_ns", 0}, {"t1_ns", 10}, {"max_items", 1LL << 40}},
            {{"op", "window"}, {"track", track}, {"t0_ns", "zero"}, {"t1_ns", 10}, {"max_items", 5}},
            {{"op", "window"}, {"track", track}, {"t0_ns", 0}, {"t1_ns", 10}},
            {{"op", "strings"}, {"ids", {0}}},
            {{"op", "strings"}, {"ids", {client->summary().string_count + 1}}},
            {{"op", "event"}, {"event", -4}},
            {{"op", "range_stats"}, {"tracks", {-1}}, {"t0_ns", 0}, {"t1_ns", 10}},
            {{"op", "stats"}, {"top", 5}, {"write", true}},
            {{"op", "rank_steps"}, {"rank", 3}},
            {{"op", "hello"}, {"version", kProtocolVersion + 1}},
        };
        for (const auto& r : refused) {
            const json answer = client->raw(r);
            QVERIFY2(!answer.value("ok", true), qPrintable(QString::fromStdString(r.dump())));
            QVERIFY(answer["error"].is_string() && !answer["error"].get<std::string>().empty());
        }
        QVERIFY(client->raw(refused[0])["error"].get<std::string>().find("\"path\" is refused") != std::string::npos);
        QVERIFY(client->raw(refused[14])["error"].get<std::string>().find("version " + std::to_string(kProtocolVersion + 1)) !=
                std::string::npos);
        // An older client (version 1 read rank_steps as JSON) is refused in words.
        const std::string older = client->raw({{"op", "hello"}, {"version", 1}})["error"].get<std::string>();
        QVERIFY2(older.find("the client speaks protocol version 1; this meshwork-cli serves version " +
                            std::to_string(kProtocolVersion)) != std::string::npos,
                 older.c_str());
        for (const char* line : {"not json", "[1,2]", "{\"id\": \"x\", \"op\": \"bye\"}", "{}"}) {
            const json answer = client->raw_line(line);
            QVERIFY2(!answer.value("ok", true), line);
        }
        const json too_long = client->raw_line(std::string(kMaxRequestBytes + 100, 'x'));
        QVERIFY(too_long["error"].get<std::string>().find("longer than") != std::string::npos);
        // Still serving, and nothing was broken.
        QVERIFY(!client->broken());
        QCOMPARE(client->window(track, 0, client->summary().end_ns + 1, 10).size() > 0, true);
    }

    void only_a_trace_is_served() {
        // A file that is not a trace, and one that does not exist: the hello says why and
        // serve-trace exits 2; the client reports it (it is no reason to copy the file).
        const QString text = dir_.filePath("notes.txt");
        {
            QFile f(text);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("hello\n");
        }
        for (const QString& path : {text, dir_.filePath("missing.sqlite")}) {
            const auto cli = test::run_cli({"serve-trace", path});
            QCOMPARE(cli.exit_code, 2);
            const json hello = json::parse(cli.out.toStdString());
            QCOMPARE(hello["ok"], false);
            QVERIFY(hello["error"].get<std::string>().find(QFileInfo(path).fileName().toStdString()) != std::string::npos);
            try {
                connect(path.toStdString());
                QFAIL("connected to a non-trace");
            } catch (const ServeUnavailable&) {
                QFAIL("a bad file is not a reason to copy it");
            } catch (const RuntimeError& e) {
                QVERIFY2(std::string(e.what()).find(QFileInfo(path).fileName().toStdString()) != std::string::npos, e.what());
            }
        }
        // Input is read, nothing is written: the trace is unchanged after a session.
        const QByteArray before = [&] { QFile f(QString::fromStdString(trace_)); f.open(QIODevice::ReadOnly); return f.readAll(); }();
        connect(trace_)->window(1, 0, 1'000'000, 10);
        QFile after(QString::fromStdString(trace_));
        QVERIFY(after.open(QIODevice::ReadOnly));
        QVERIFY(after.readAll() == before);
        QVERIFY(!QFileInfo::exists(QString::fromStdString(trace_) + "-wal"));
    }

    void missing_remote_cli_is_serve_unavailable() {
        try {
            TraceClient client(ssh_serve_command("node01", trace_, "/nonexistent/meshwork-cli"), "node01:" + trace_);
            QFAIL("connected without a meshwork-cli");
        } catch (const ServeUnavailable& e) {
            QVERIFY2(std::string(e.what()).find("remote meshwork-cli was not found") != std::string::npos, e.what());
            QVERIFY2(std::string(e.what()).find("MESHWORK_REMOTE_CLI") != std::string::npos, e.what());
        }
        // No ssh at all (cleanup() puts the stand-in back on PATH).
        qputenv("PATH", dir_.path().toLocal8Bit() + "/empty-bin");
        try {
            TraceClient client(ssh_serve_command("node01", trace_, MESHWORK_CLI_PATH), "node01:" + trace_);
            QFAIL("connected without ssh");
        } catch (const ServeUnavailable& e) {
            QVERIFY2(std::string(e.what()).find("cannot start ssh") != std::string::npos, e.what());
        }
    }

    void other_protocol_version_is_serve_unavailable() {
        // An older or newer meshwork-cli: its hello names another version. Version 1 sent
        // rank_steps as JSON, which this client would misread as a missing binary part.
        for (const int other : {1, 99}) {
            const QString fake = write_script(QString("meshwork-cli-v%1").arg(other),
                                              QString("echo '{\"protocol\":\"meshwork-trace\",\"version\":%1,\"ok\":true}'\n"
                                                      "read line\n")
                                                  .arg(other)
                                                  .toUtf8());
            try {
                TraceClient client(ssh_serve_command("node01", trace_, fake.toStdString()), "node01:" + trace_);
                QFAIL(qPrintable(QString("accepted version %1").arg(other)));
            } catch (const ServeUnavailable& e) {
                const std::string why = e.what();
                QVERIFY2(why.find("speaks remote protocol version " + std::to_string(other) + ";") != std::string::npos, e.what());
                QVERIFY2(why.find("this Meshwork speaks version " + std::to_string(kProtocolVersion)) != std::string::npos,
                         e.what());
            }
        }
        // Something that is no serve-trace at all (a login banner, another program).
        const QString other = write_script("not-meshwork", "echo 'Welcome to node01'\nsleep 1\n");
        try {
            TraceClient client(ssh_serve_command("node01", trace_, other.toStdString()), "node01:" + trace_);
            QFAIL("accepted a banner");
        } catch (const ServeUnavailable& e) {
            QVERIFY2(std::string(e.what()).find("does not speak") != std::string::npos, e.what());
        }
    }

    void silent_server_times_out() {
        const QString hangs = write_script("meshwork-cli-hangs", "exec sleep 30\n");
        try {
            TraceClient client(ssh_serve_command("node01", trace_, hangs.toStdString()), "node01:" + trace_, 1000);
            QFAIL("no hello, yet connected");
        } catch (const ServeUnavailable& e) {
            QVERIFY2(std::string(e.what()).find("no answer within 1 s") != std::string::npos, e.what());
        }
    }

    void session_that_stops_answering_times_out() {
        // Connected, then a request the other side never answers (the network stalls).
        qputenv("MESHWORK_TEST_SSH_HANG_ON", "step_span");
        auto client = connect(trace_, 1000);
        QVERIFY(!client->window(client->summary().tracks[0].id, 0, 1'000'000, 10).empty());
        try {
            client->step_span(0, -1);
            QFAIL("a stalled session answered");
        } catch (const RuntimeError& e) {
            QVERIFY2(std::string(e.what()).find("no answer within 1 s") != std::string::npos, e.what());
        }
        QVERIFY(client->broken());
    }

    void session_that_dies_is_reported_and_stays_failed() {
        // The hello request, then one window; the second window finds the session gone.
        qputenv("MESHWORK_TEST_SSH_DIE_AFTER", "2");
        auto client = connect(trace_);
        const int track = client->summary().tracks[0].id;
        QVERIFY(!client->window(track, 0, client->summary().end_ns + 1, 100).empty());
        try {
            client->window(track, 0, client->summary().end_ns / 2, 100);
            QFAIL("the session should have died");
        } catch (const RuntimeError& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("connection to node01:") != std::string::npos, e.what());
            QVERIFY2(what.find("was lost") != std::string::npos, e.what());
            QVERIFY2(what.find("closed by remote host") != std::string::npos, e.what());
        }
        QVERIFY(client->broken());
        // Later calls fail at once with the same message.
        try {
            client->step_span(0, -1);
            QFAIL("a broken client answered");
        } catch (const RuntimeError& e) {
            QCOMPARE(std::string(e.what()), client->failure());
        }
    }
};

QTEST_GUILESS_MAIN(TstRemoteProtocol)
#include "tst_remote_protocol.moc"
