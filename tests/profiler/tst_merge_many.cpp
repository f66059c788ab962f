// merge of many per-rank files (issue 18): 64 files read on parallel threads and written as a
// stream give the same trace as reading them one at a time (events, ids, order, tracks, ranks,
// offsets, summaries), and that trace holds what the inputs hold, aligned at the barrier.
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "profiler/merge/trace_merge.h"
#include "profiler/store/trace_output.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_writer.h"
#include "tests/profiler/trace_test_util.h"
#include "tests/support/run_cli.h"

using namespace meshwork;
using namespace meshwork::profiler;
using meshwork::test::make_event;
using meshwork::test::run_cli;
using meshwork::test::temp_path;

namespace {

constexpr int kRanks = 64;

// Rank `rank` of one run: `steps` steps of compute and a dp all-reduce, a barrier at 1 ms of
// its own clock, which runs `skew_ns` ahead; a memory counter per step. Ranks 0 and 37 are
// long (more events than the merge reads in one chunk), the others short.
std::int64_t write_rank(const std::string& path, int rank, std::int64_t skew_ns) {
    auto w = TraceWriter::create(path);
    TraceRunInfo info;
    info.source = "meshwork-cpu";
    info.world_size = kRanks;
    info.start_time_unix_ns = 1'700'000'000'000'000'000 + skew_ns;
    info.extra["run_id"] = "many-1";
    w->set_run_info(info);
    const int c = w->add_track({rank, TrackKind::ComputeStream, 0, "compute"});
    const int m = w->add_track({rank, TrackKind::CommStream, 0, "comm:dp"});
    const int h = w->add_track({rank, TrackKind::Host, 0, "host"});
    w->add_event(make_event(h, EventKind::Marker, "barrier", skew_ns + 990'000, skew_ns + 1'000'000));
    const int steps = rank == 0 || rank == 37 ? 12000 : 20 + rank;
    std::int64_t events = 1;
    for (int s = 0; s < steps; ++s) {
        const std::int64_t t = skew_ns + 1'000'000 + s * 1000;
        auto g = make_event(c, EventKind::Compute, "gemm." + std::to_string(s % 7), t, t + 600);
        g.step = s;
        g.flops = 1e6;
        auto x = make_event(m, EventKind::Communication, "all_reduce(dp)", t + 500, t + 900);
        x.step = s;
        x.bytes = 4096 * (rank + 1);
        x.group_size = kRanks;
        w->add_event(g);
        w->add_event(x);
        w->add_counter(rank, c, "memory_bytes", t, 1e6 + s);
        events += 2;
    }
    w->close();
    return events;
}

void expect_same_trace(const std::string& a_path, const std::string& b_path) {
    const TraceReader a = TraceReader::open(a_path), b = TraceReader::open(b_path);
    QCOMPARE(a.event_count(), b.event_count());
    QCOMPARE(a.run_info().world_size, b.run_info().world_size);
    QCOMPARE(a.tracks().size(), b.tracks().size());
    for (std::size_t i = 0; i < a.tracks().size(); ++i) {
        const auto &x = a.tracks()[i], &y = b.tracks()[i];
        QCOMPARE(x.id, y.id);
        QCOMPARE(x.info.rank, y.info.rank);
        QCOMPARE(x.info.name, y.info.name);
        QCOMPARE(x.event_count, y.event_count);
        QCOMPARE(x.start_ns, y.start_ns);
        QCOMPARE(x.end_ns, y.end_ns);
        QCOMPARE(x.lod_base_level, y.lod_base_level);
        const auto wa = a.window(x.id, x.start_ns, x.end_ns + 1, 500), wb = b.window(y.id, y.start_ns, y.end_ns + 1, 500);
        QCOMPARE(wa.size(), wb.size());
        for (std::size_t k = 0; k < wa.size(); ++k) {
            QCOMPARE(wa[k].start_ns, wb[k].start_ns);
            QCOMPARE(wa[k].count, wb[k].count);
            QCOMPARE(wa[k].event_id, wb[k].event_id);
        }
    }
    QCOMPARE(a.ranks().size(), b.ranks().size());
    for (std::size_t i = 0; i < a.ranks().size(); ++i) {
        QCOMPARE(a.ranks()[i].rank, b.ranks()[i].rank);
        QCOMPARE(a.ranks()[i].clock_offset_ns, b.ranks()[i].clock_offset_ns);
    }
    std::vector<TraceEvent> ea, eb;
    a.for_each_event([&](const TraceEvent& e) { ea.push_back(e); });
    b.for_each_event([&](const TraceEvent& e) { eb.push_back(e); });
    QCOMPARE(ea.size(), eb.size());
    for (std::size_t i = 0; i < ea.size(); ++i) {
        if (ea[i].rank != eb[i].rank || ea[i].track != eb[i].track || ea[i].name != eb[i].name ||
            ea[i].start_ns != eb[i].start_ns || ea[i].end_ns != eb[i].end_ns || ea[i].bytes != eb[i].bytes ||
            ea[i].step != eb[i].step) {
            QFAIL(("event " + std::to_string(i) + " differs").c_str());
        }
    }
    std::size_t counters_a = 0, counters_b = 0;
    a.for_each_counter([&](const CounterSample&) { ++counters_a; });
    b.for_each_counter([&](const CounterSample&) { ++counters_b; });
    QCOMPARE(counters_a, counters_b);
}

}  // namespace

class MergeManyTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::vector<std::string> inputs_;
    std::vector<std::int64_t> events_, skew_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        std::filesystem::create_directory(temp_path(dir_, "ranks"));
        for (int rank = 0; rank < kRanks; ++rank) {
            // Names sort in rank order, as `merge FOLDER` takes them.
            char name[32];
            std::snprintf(name, sizeof name, "ranks/rank%02d.sqlite", rank);
            inputs_.push_back(temp_path(dir_, name));
            skew_.push_back((rank * 7919) % 5000 * 1000);  // clocks up to 5 ms apart
            events_.push_back(write_rank(inputs_.back(), rank, skew_.back()));
        }
    }

    void parallel_merge_equals_one_at_a_time() {
        const auto seq = temp_path(dir_, "seq.sqlite"), par = temp_path(dir_, "par.sqlite");
        MergeResult rs, rp;
        {
            TraceOutput o(seq);
            MergeOptions opt;
            opt.threads = 1;
            rs = merge_traces(inputs_, o.writer(), opt);
            o.commit();
        }
        {
            TraceOutput o(par);
            MergeOptions opt;
            opt.threads = 8;  // more threads than this machine's cores: the interleavings vary
            rp = merge_traces(inputs_, o.writer(), opt);
            o.commit();
        }
        QCOMPARE(rp.events, rs.events);
        QCOMPARE(rp.world_size, kRanks);
        for (int i = 0; i < kRanks; ++i) {
            const auto& in = rp.inputs[static_cast<std::size_t>(i)];
            QCOMPARE(in.events, events_[static_cast<std::size_t>(i)]);
            QCOMPARE(in.ranks, std::vector<int>{i});
            QCOMPARE(in.offset_ns, skew_[0] - skew_[static_cast<std::size_t>(i)]);
            QCOMPARE(in.alignment, std::string(i == 0 ? "reference" : "barrier"));
            QCOMPARE(in.offset_ns, rs.inputs[static_cast<std::size_t>(i)].offset_ns);
        }
        expect_same_trace(seq, par);

        // What the inputs hold: every rank, its events in the input's order, the barrier ends
        // equal once aligned.
        const TraceReader r = TraceReader::open(par);
        QVERIFY(r.complete());
        r.verify();  // written without a journal (a TraceOutput): every page still checks out
        std::int64_t total = 0;
        for (auto n : events_) total += n;
        QCOMPARE(r.event_count(), total);
        QCOMPARE(static_cast<int>(r.ranks().size()), kRanks);
        int last_rank = 0;
        std::int64_t barrier_end = -1;
        bool ordered = true;
        r.for_each_event([&](const TraceEvent& e) {
            ordered = ordered && e.rank >= last_rank;  // inputs are written one after another
            last_rank = e.rank;
            if (e.name == "barrier") {
                if (barrier_end < 0) barrier_end = e.end_ns;
                ordered = ordered && e.end_ns == barrier_end;
            }
        });
        QVERIFY(ordered);
        QCOMPARE(last_rank, kRanks - 1);
    }

    void cli_merges_a_folder_as_one_by_one() {
        const auto seq = temp_path(dir_, "cli_seq.sqlite"), par = temp_path(dir_, "cli_par.sqlite");
        const QString folder = QString::fromStdString(temp_path(dir_, "ranks"));
        auto r = run_cli({"merge", folder, "--out", QString::fromStdString(seq), "--threads", "1"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        r = run_cli({"merge", folder, "--out", QString::fromStdString(par), "--json"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const auto j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["world_size"].get<int>(), kRanks);
        QCOMPARE(static_cast<int>(j["inputs"].size()), kRanks);
        expect_same_trace(seq, par);
    }

    void a_bad_input_among_many_is_named() {
        // A file that is not a trace, in the middle: the error names it and nothing is written.
        auto inputs = inputs_;
        const auto bad = temp_path(dir_, "bad.sqlite");
        {
            std::FILE* f = std::fopen(bad.c_str(), "wb");
            std::fputs("not a trace", f);
            std::fclose(f);
        }
        inputs[40] = bad;
        QStringList args{"merge"};
        for (const auto& p : inputs) args << QString::fromStdString(p);
        const auto out = temp_path(dir_, "never.sqlite");
        args << "--out" << QString::fromStdString(out);
        const auto r = run_cli(args);
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("bad.sqlite"), r.err.constData());
        QVERIFY(!std::filesystem::exists(out));
    }
};

QTEST_GUILESS_MAIN(MergeManyTest)
#include "tst_merge_many.moc"
