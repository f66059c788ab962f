// Trace store: writing a real trace and reading it back, window queries, bad files.
#include <QTemporaryDir>
#include <QtTest>

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/common/error.h"
#include "profiler/store/draw_merge.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_schema.h"
#include "profiler/store/trace_recover.h"
#include "profiler/store/trace_writer.h"
#include "tests/profiler/trace_test_util.h"

using namespace meshwork;
using namespace meshwork::profiler;
using meshwork::test::make_event;
using meshwork::test::temp_path;

namespace {

// Runs raw SQL against a file, to forge hostile traces.
void exec_sql(const std::string& path, const char* sql) {
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
    const std::string msg = err ? err : "";
    sqlite3_free(err);
    sqlite3_close(db);
    QVERIFY2(rc == SQLITE_OK, msg.c_str());
}

std::string open_error(const std::string& path) {
    try {
        TraceReader::open(path);
    } catch (const InputError& e) {
        return e.issues().front().to_string();
    }
    return "";
}

}  // namespace

class TraceStoreTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;

    // Two ranks, a compute and a comm track each, 1000 events per track.
    std::string write_small(const std::string& name) {
        const std::string path = temp_path(dir_, name);
        auto w = TraceWriter::create(path);
        TraceRunInfo info;
        info.tool_version = "test";
        info.source = "meshwork-sim";
        info.clock_domain = "simulated";
        info.world_size = 2;
        info.extra["run_id"] = "abc";
        w->set_run_info(info);
        for (int rank = 0; rank < 2; ++rank) {
            const int c = w->add_track({rank, TrackKind::ComputeStream, 0, "compute"});
            const int m = w->add_track({rank, TrackKind::CommStream, 0, "comm:dp"});
            for (int i = 0; i < 1000; ++i) {
                auto e = make_event(c, EventKind::Compute, "gemm", i * 1000, i * 1000 + 700);
                e.rank = rank;
                e.flops = 1e9;
                e.step = i / 100;
                e.layer = i % 10;
                w->add_event(e);
                auto x = make_event(m, EventKind::Communication, "all_reduce(dp)", i * 1000 + 500,
                                    i * 1000 + 900);
                x.rank = rank;
                x.bytes = 4096;
                x.group_size = 2;
                w->add_event(x);
            }
            w->add_counter(rank, c, "memory_bytes", 10, 123.0);
        }
        w->close();
        return path;
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    // A run's writer (yield_cores) runs its thread at nice 19, the producers keep theirs: at
    // nice 0 its bursts took up to a core of a 2-core host from the CPU engine's ranks
    // (docs/BENCHMARKS.md). Read back from /proc/self/task/*/stat (field 19, nice).
    void run_writer_yields_the_cores() {
#ifndef __linux__
        QSKIP("a thread's own nice is Linux's");
#else
        auto niced_threads = [] {
            int n = 0;
            for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
                std::ifstream in(task.path() / "stat");
                std::string line;
                std::getline(in, line);
                // Fields after the command's closing parenthesis: state is field 3, nice 19.
                std::istringstream rest(line.substr(line.rfind(')') + 2));
                std::string field;
                for (int i = 3; i <= 19 && rest >> field; ++i) {
                }
                if (std::stoi(field) == 19) ++n;
            }
            return n;
        };
        if (niced_threads() > 0) QSKIP("this test process already runs threads at nice 19");
        for (const bool yield : {false, true}) {
            TraceWriterOptions o;
            o.yield_cores = yield;
            auto w = TraceWriter::create(temp_path(dir_, yield ? "yield.sqlite" : "plain.sqlite"), o);
            w->flush();  // the writer thread has run
            QCOMPARE(niced_threads(), yield ? 1 : 0);
            w->close();
        }
#endif
    }

    void writes_and_reads_back() {
        const auto path = write_small("small.sqlite");
        // Closed: a single file, no WAL left over.
        QVERIFY(!std::filesystem::exists(path + "-wal"));
        auto r = TraceReader::open(path);
        QVERIFY(r.complete());
        QCOMPARE(r.format_version(), kTraceFormatVersion);
        QCOMPARE(r.event_count(), std::int64_t{4000});
        QCOMPARE(r.run_info().source, std::string("meshwork-sim"));
        QCOMPARE(r.run_info().world_size, 2);
        QCOMPARE(r.run_info().extra.at("run_id"), std::string("abc"));
        QCOMPARE(r.tracks().size(), std::size_t{4});
        QCOMPARE(r.tracks()[2].info.rank, 1);
        QCOMPARE(r.tracks()[3].info.kind, TrackKind::CommStream);
        QCOMPARE(r.tracks()[0].event_count, std::int64_t{1000});
        QCOMPARE(r.tracks()[0].start_ns, std::int64_t{0});
        QCOMPARE(r.tracks()[0].end_ns, std::int64_t{999700});
        QVERIFY(r.tracks()[0].lod_base_level >= 10);
        QCOMPARE(r.ranks().size(), std::size_t{2});
        std::int64_t n = 0, bytes = 0;
        double flops = 0;
        r.for_each_event([&](const TraceEvent& e) {
            ++n;
            bytes += e.bytes;
            flops += e.flops;
            if (e.kind == EventKind::Compute) {
                QCOMPARE(e.name, std::string("gemm"));
                QVERIFY(e.step >= 0 && e.layer >= 0);
                QCOMPARE(e.micro_batch, -1);
            } else {
                QCOMPARE(e.group_size, 2);
            }
        });
        QCOMPARE(n, std::int64_t{4000});
        QCOMPARE(bytes, std::int64_t{2000} * 4096);
        QCOMPARE(flops, 2000 * 1e9);
        int counters = 0;
        r.for_each_counter([&](const CounterSample& c) {
            ++counters;
            QCOMPARE(c.name, std::string("memory_bytes"));
            QCOMPARE(c.value, 123.0);
        });
        QCOMPARE(counters, 2);
        std::int64_t last = -1;
        r.for_each_event_of_track(1, [&](const TraceEvent& e) {
            QVERIFY(e.start_ns > last);
            last = e.start_ns;
        });
    }

    void window_returns_events_when_zoomed_in() {
        auto r = TraceReader::open(write_small("zoom.sqlite"));
        // 10 events of 700 ns in [0, 10000): at 4000 px each is wider than a pixel.
        const auto items = r.window(0, 0, 10000, 4000);
        QCOMPARE(items.size(), std::size_t{10});
        QCOMPARE(items[3].start_ns, std::int64_t{3000});
        QCOMPARE(items[3].end_ns, std::int64_t{3700});
        QCOMPARE(items[3].count, std::int64_t{1});
        QVERIFY(items[3].event_id > 0);
        QCOMPARE(r.string(items[3].name_id), std::string("gemm"));
        const auto e = r.event(items[3].event_id);
        QVERIFY(e.has_value());
        QCOMPARE(e->start_ns, std::int64_t{3000});
        // An event that began before the window still shows.
        const auto mid = r.window(0, 3500, 3600, 100);
        QCOMPARE(mid.size(), std::size_t{1});
        QCOMPARE(mid[0].start_ns, std::int64_t{3000});
    }

    void window_merges_when_zoomed_out() {
        auto r = TraceReader::open(write_small("out.sqlite"));
        for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{50}, std::size_t{400}}) {
            const auto items = r.window(0, 0, 1000000, n);
            QVERIFY2(!items.empty() && items.size() <= n, qPrintable(QString::number(items.size())));
            std::int64_t total = 0;
            for (const auto& it : items) total += it.count;
            QCOMPARE(total, std::int64_t{1000});  // nothing lost, nothing counted twice
            QCOMPARE(items.front().kind, EventKind::Compute);
        }
    }

    void merge_bounds_nested_ranges() {
        // 100 ranges all spanning the window cannot fold by width: binning must bound them.
        std::vector<MergeItem> in;
        for (int i = 0; i < 100; ++i) {
            MergeItem m;
            m.start_ns = i;
            m.end_ns = 1000000 - i;
            m.busy_ns[4] = m.end_ns - m.start_ns;
            in.push_back(m);
        }
        const auto out = merge_for_drawing(in, 0, 1000000, 10);
        QVERIFY(out.size() <= 10);
        std::int64_t total = 0;
        for (const auto& m : out) total += m.count;
        QCOMPARE(total, std::int64_t{100});
        QCOMPARE(out.front().dominant_kind(), 4);
    }

    void window_long_event_before_window() {
        const auto path = temp_path(dir_, "long.sqlite");
        auto w = TraceWriter::create(path);
        const int t = w->add_track({0, TrackKind::Host, 0, "host"});
        w->add_event(make_event(t, EventKind::Marker, "step 0", 0, 100000000));
        for (int i = 0; i < 100000; ++i) {
            w->add_event(make_event(t, EventKind::Compute, "op", i * 1000, i * 1000 + 10));
        }
        w->close();
        auto r = TraceReader::open(path);
        const auto items = r.window(t, 50000000, 50000500, 100);
        bool found_step = false;
        for (const auto& it : items) found_step |= r.string(it.name_id) == "step 0";
        QVERIFY(found_step);
        const auto wide = r.window(t, 40000000, 60000000, 100);
        QVERIFY(wide.size() <= 100);
        found_step = false;
        for (const auto& it : wide) found_step |= it.start_ns == 0;
        QVERIFY(found_step);
    }

    void many_threads_write_concurrently() {
        const auto path = temp_path(dir_, "threads.sqlite");
        auto w = TraceWriter::create(path);
        std::vector<int> tracks;
        for (int i = 0; i < 4; ++i) tracks.push_back(w->add_track({i, TrackKind::Host, 0, "host"}));
        std::vector<std::thread> threads;
        for (int i = 0; i < 4; ++i) {
            threads.emplace_back([&, i] {
                for (int k = 0; k < 20000; ++k) {
                    w->add_event(make_event(tracks[i], EventKind::Compute, "k" + std::to_string(k % 7),
                                            k * 10, k * 10 + 5));
                }
            });
        }
        for (auto& t : threads) t.join();
        w->close();
        auto r = TraceReader::open(path);
        QCOMPARE(r.event_count(), std::int64_t{80000});
        for (int i = 0; i < 4; ++i) QCOMPARE(r.tracks()[i].event_count, std::int64_t{20000});
    }

    void unclosed_trace_is_readable_but_incomplete() {
        const auto path = temp_path(dir_, "killed.sqlite");
        {
            TraceWriterOptions opt;
            opt.flush_interval_ms = 20;
            auto w = TraceWriter::create(path, opt);
            const int t = w->add_track({0, TrackKind::ComputeStream, 0, "compute"});
            for (int i = 0; i < 100; ++i) w->add_event(make_event(t, EventKind::Compute, "a", i, i + 1));
            // Wait past a commit, then copy the files as a kill -9 would leave them.
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            for (const char* s : {"", "-wal"}) {
                if (std::filesystem::exists(path + s)) {
                    std::filesystem::copy_file(path + s, path + ".copy" + s);
                }
            }
        }
        // Readers refuse a trace with its writer's log beside it (they never replay it);
        // recover_trace replays it on a copy of its own.
        QVERIFY_THROWS_EXCEPTION(InputError, TraceReader::open(path + ".copy"));
        recover_trace(path + ".copy", path + ".recovered");
        auto r = TraceReader::open(path + ".recovered");
        QVERIFY(!r.complete());
        QCOMPARE(r.event_count(), std::int64_t{100});
        const auto items = r.window(0, 0, 200, 1000);
        QCOMPARE(items.size(), std::size_t{100});
        // The writer destroyed without close() leaves an incomplete but readable file.
        auto r2 = TraceReader::open(path);
        QVERIFY(!r2.complete());
        QCOMPARE(r2.event_count(), std::int64_t{100});
    }

    void drop_mode_never_blocks() {
        TraceWriterOptions opt;
        opt.drop_when_behind = true;
        opt.max_queued_events = 10;
        opt.flush_interval_ms = 1000;
        const auto path = temp_path(dir_, "drop.sqlite");
        auto w = TraceWriter::create(path, opt);
        const int t = w->add_track({0, TrackKind::ComputeStream, 0, "compute"});
        for (int i = 0; i < 100000; ++i) w->add_event(make_event(t, EventKind::Compute, "a", i, i + 1));
        w->close();
        auto r = TraceReader::open(path);
        QCOMPARE(r.event_count() + r.dropped_events(), std::int64_t{100000});
    }

    void event_on_unknown_track_is_refused() {
        auto w = TraceWriter::create(temp_path(dir_, "bad_track.sqlite"));
        QVERIFY_THROWS_EXCEPTION(RuntimeError, w->add_event(make_event(3, EventKind::Compute, "x", 0, 1)));
        w->close();
    }

    // finish_track (merge, simulate --all-ranks): the track's summaries are built before
    // close, from the same events, so every window query answers as if built at close; the
    // track takes no events after.
    void finished_tracks_read_as_closed_ones() {
        int late_refused = 0;
        auto write = [&](const std::string& name, bool finish) {
            const std::string path = temp_path(dir_, name);
            auto w = TraceWriter::create(path);
            for (int rank = 0; rank < 3; ++rank) {
                const int c = w->add_track({rank, TrackKind::ComputeStream, 0, "compute"});
                const int h = w->add_track({rank, TrackKind::Host, 0, "host"});
                // Host ranges arrive at their end, out of start order: the summary sorts them.
                for (int i = 0; i < 5000; ++i) {
                    w->add_event(make_event(c, EventKind::Compute, "k" + std::to_string(i % 3), i * 100, i * 100 + 60));
                    if (i % 10 == 9) w->add_event(make_event(h, EventKind::Marker, "step", (i - 9) * 100, i * 100 + 60));
                }
                if (finish) {
                    w->finish_track(c);
                    w->finish_track(h);
                    try {
                        w->add_event(make_event(c, EventKind::Compute, "late", 0, 1));
                    } catch (const RuntimeError&) {
                        ++late_refused;
                    }
                }
            }
            w->close();
            return path;
        };
        const auto a = TraceReader::open(write("closed.sqlite", false));
        const auto b = TraceReader::open(write("finished.sqlite", true));
        QCOMPARE(late_refused, 3);
        QVERIFY(b.complete());
        QCOMPARE(a.event_count(), b.event_count());
        QCOMPARE(a.tracks().size(), b.tracks().size());
        for (std::size_t t = 0; t < a.tracks().size(); ++t) {
            QCOMPARE(b.tracks()[t].lod_base_level, a.tracks()[t].lod_base_level);
            QVERIFY(b.tracks()[t].lod_base_level >= 0);
            for (std::size_t n : {std::size_t{5}, std::size_t{300}, std::size_t{4000}}) {
                for (const auto& [t0, t1] : {std::pair<std::int64_t, std::int64_t>{0, 500000}, {120000, 130000}}) {
                    const auto wa = a.window(static_cast<int>(t), t0, t1, n);
                    const auto wb = b.window(static_cast<int>(t), t0, t1, n);
                    QCOMPARE(wb.size(), wa.size());
                    for (std::size_t k = 0; k < wa.size(); ++k) {
                        QCOMPARE(wb[k].start_ns, wa[k].start_ns);
                        QCOMPARE(wb[k].end_ns, wa[k].end_ns);
                        QCOMPARE(wb[k].count, wa[k].count);
                        QCOMPARE(wb[k].busy_ns, wa[k].busy_ns);
                        QCOMPARE(wb[k].event_id, wa[k].event_id);
                    }
                }
            }
        }
    }

    void refuses_bad_files() {
        const auto text = temp_path(dir_, "text.sqlite");
        std::ofstream(text) << "hello, not a database\n";
        QVERIFY(open_error(text).find("not an SQLite database") != std::string::npos);

        const auto empty = temp_path(dir_, "empty.sqlite");
        std::ofstream(empty).flush();
        QVERIFY(open_error(empty).find("empty") != std::string::npos);

        QVERIFY(open_error(temp_path(dir_, "missing.sqlite")).find("not found") != std::string::npos);

        const auto other = temp_path(dir_, "other.sqlite");
        exec_sql(other, "CREATE TABLE x(a)");
        QVERIFY(open_error(other).find("not a Meshwork trace") != std::string::npos);

        const auto nsys = temp_path(dir_, "nsys.sqlite");
        exec_sql(nsys, "CREATE TABLE StringIds(id INTEGER, value TEXT)");
        QVERIFY(open_error(nsys).find("import-trace") != std::string::npos);

        const auto newer = write_small("newer.sqlite");
        exec_sql(newer, "UPDATE meta SET value = '99' WHERE key = 'format_version'");
        const auto msg = open_error(newer);
        QVERIFY2(msg.find("newer") != std::string::npos, msg.c_str());
        QVERIFY(msg.find(newer) == 0);  // names the file

        const auto bad_kind = write_small("bad_kind.sqlite");
        exec_sql(bad_kind, "UPDATE events SET kind = 77 WHERE id = 5");
        // Refused at open, naming the row and column (trace_content_check), not at first read.
        QVERIFY2(open_error(bad_kind).find("events[id=5].kind") != std::string::npos, open_error(bad_kind).c_str());

        const auto bad_name = write_small("bad_name.sqlite");
        exec_sql(bad_name, "UPDATE events SET name_id = 9999 WHERE id = 5");
        QVERIFY2(open_error(bad_name).find("events[id=5].name_id") != std::string::npos, open_error(bad_name).c_str());
    }

    // Format 2's memory tables: rows written and read back with their stacks (stored once);
    // a version-1 trace (no memory tables) still opens; bad memory rows are refused at open.
    void memory_events_round_trip_and_old_traces() {
        const std::string path = temp_path(dir_, "memory.sqlite");
        {
            auto w = TraceWriter::create(path);
            TraceRunInfo info;
            info.source = "torch-memory-snapshot";
            w->set_run_info(info);
            for (int i = 0; i < 3; ++i) {
                MemoryEvent m;
                m.rank = 1;
                m.device = 0;
                m.time_ns = 1000 * (i + 1);
                m.action = i == 2 ? MemoryAction::FreeRequested : MemoryAction::Alloc;
                m.addr = 0x7f0000000000 + i;
                m.bytes = 512;
                m.allocated_bytes = i == 2 ? 512 : 512 * (i + 1);
                m.reserved_bytes = 2 << 20;
                m.frames = i == 1 ? "" : "step optim.py:10\nmain train.py:3";
                w->add_memory_event(m);
            }
            w->close();
        }
        const auto r = TraceReader::open(path);
        QVERIFY(r.has_memory_tables());
        std::vector<std::pair<MemoryEvent, std::int64_t>> got;
        r.for_each_memory_event([&](const MemoryEvent& m, std::int64_t stack) { got.emplace_back(m, stack); });
        QCOMPARE(got.size(), std::size_t{3});
        QCOMPARE(got[2].first.action, MemoryAction::FreeRequested);
        QCOMPARE(got[1].first.allocated_bytes, std::int64_t{1024});
        QCOMPARE(got[1].second, std::int64_t{0});
        QCOMPARE(got[0].second, got[2].second);  // one stack row for both
        QCOMPARE(r.memory_stack(got[0].second), std::string("step optim.py:10\nmain train.py:3"));
        QCOMPARE(r.ranks().size(), std::size_t{1});

        const auto v1 = write_small("v1.sqlite");
        exec_sql(v1, "DROP TABLE memory_events; DROP TABLE memory_stacks; "
                     "UPDATE meta SET value = '1' WHERE key = 'format_version'");
        const auto old = TraceReader::open(v1);
        QCOMPARE(old.format_version(), 1);
        QVERIFY(!old.has_memory_tables());
        int n = 0;
        old.for_each_memory_event([&](const MemoryEvent&, std::int64_t) { ++n; });
        QCOMPARE(n, 0);

        const auto v2_without = write_small("v2-without.sqlite");
        exec_sql(v2_without, "DROP TABLE memory_events");
        QVERIFY2(open_error(v2_without).find("memory_events") != std::string::npos, open_error(v2_without).c_str());

        const auto bad_bytes = temp_path(dir_, "bad-memory.sqlite");
        std::filesystem::copy_file(path, bad_bytes);
        exec_sql(bad_bytes, "UPDATE memory_events SET bytes = -5 WHERE id = 2");
        QVERIFY2(open_error(bad_bytes).find("memory_events[id=2].bytes") != std::string::npos, open_error(bad_bytes).c_str());
        const auto bad_stack = temp_path(dir_, "bad-stack.sqlite");
        std::filesystem::copy_file(path, bad_stack);
        exec_sql(bad_stack, "UPDATE memory_events SET stack_id = 99 WHERE id = 1");
        QVERIFY2(open_error(bad_stack).find("memory_events[id=1].stack_id") != std::string::npos, open_error(bad_stack).c_str());
    }

    void refuses_truncated_and_corrupt_files() {
        const auto path = write_small("trunc.sqlite");
        const auto size = std::filesystem::file_size(path);
        const auto cut = temp_path(dir_, "cut.sqlite");
        std::filesystem::copy_file(path, cut);
        std::filesystem::resize_file(cut, size / 3);
        bool threw = false;
        try {
            auto r = TraceReader::open(cut);
            r.for_each_event([](const TraceEvent&) {});
        } catch (const InputError& e) {
            threw = true;
            QVERIFY(e.issues().front().file == cut);
        }
        QVERIFY(threw);

        // Garbage over the middle pages.
        const auto bad = temp_path(dir_, "garbage.sqlite");
        std::filesystem::copy_file(path, bad);
        {
            std::fstream f(bad, std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(static_cast<std::streamoff>(size / 2));
            const std::string junk(8192 * 3, '\xAB');
            f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
        }
        threw = false;
        try {
            auto r = TraceReader::open(bad);
            r.verify();
        } catch (const InputError& e) {
            threw = true;
            QVERIFY(e.issues().front().message.find("corrupt") != std::string::npos);
        }
        QVERIFY(threw);
    }
};

QTEST_GUILESS_MAIN(TraceStoreTest)
#include "tst_trace_store.moc"
