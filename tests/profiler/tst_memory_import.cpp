// Memory snapshots (issue 32) through import_trace_file into the trace store: the real
// snapshots of tests/fixtures/memory give the peaks that an independent reading with Python's
// pickle module gives (tests/profiler/memory_snapshot_peaks.py, run once, figures in
// tests/fixtures/memory/SOURCES.txt); hostile snapshots are refused naming the field.
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include "core/common/error.h"
#include <nlohmann/json.hpp>

#include "profiler/analysis/memory_stats.h"
#include "profiler/analysis/trace_stats.h"
#include "profiler/import/import_trace.h"
#include "profiler/merge/trace_merge.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_writer.h"
#include "tests/profiler/trace_test_util.h"

using namespace meshwork;
using namespace meshwork::profiler;
using meshwork::test::temp_path;

// A byte string literal with its embedded bytes, without the terminating NUL.
template <std::size_t N>
std::string raw(const char (&s)[N]) {
    return std::string(s, N - 1);
}

class TestMemoryImport : public QObject {
    Q_OBJECT
private slots:
    void real_snapshots_match_python_data();
    void real_snapshots_match_python();
    void refuses_bad_snapshots();
    void kineto_memory_events();
    void merge_keeps_memory_per_rank();

private:
    std::string import(const std::string& in, const std::string& name) {
        const auto out = temp_path(dir_, name);
        auto w = TraceWriter::create(out);
        (void)import_trace_file(in, *w, {});
        w->close();
        return out;
    }
    QTemporaryDir dir_;
};

void TestMemoryImport::real_snapshots_match_python_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<qint64>("events");
    QTest::addColumn<qint64>("allocated_peak");
    QTest::addColumn<qint64>("reserved_peak");
    // python3 tests/profiler/memory_snapshot_peaks.py tests/fixtures/memory/*.pickle*
    // (5803 history entries of which 9 are markers without a change of memory, not kept)
    QTest::newRow("eor_nn") << "eor_nn_snapshot.pickle.gz" << qint64(5794) << qint64(108270580) << qint64(134217728);
    QTest::newRow("snapviewer") << "snapviewer_memory.pickle" << qint64(1040) << qint64(2430114772) << qint64(262144000);
}

void TestMemoryImport::real_snapshots_match_python() {
    QFETCH(QString, file);
    QFETCH(qint64, events);
    QFETCH(qint64, allocated_peak);
    QFETCH(qint64, reserved_peak);
    const auto path = import(std::string(MESHWORK_TEST_FIXTURES) + "/memory/" + file.toStdString(),
                             file.toStdString() + ".trace");
    const auto reader = TraceReader::open(path);
    QCOMPARE(reader.run_info().source, std::string("torch-memory-snapshot"));
    const auto stats = memory_stats(reader);
    QCOMPARE(stats.devices.size(), std::size_t{1});
    // stats --json and serve-trace report the same figures.
    const auto report = stats_report_json(reader, 5);
    QCOMPARE(report.at("memory").at(0).at("allocated_peak_bytes").get<std::int64_t>(),
             static_cast<std::int64_t>(allocated_peak));
    const auto& d = stats.devices.front();
    QCOMPARE(d.device, 0);
    QCOMPARE(d.events, static_cast<std::int64_t>(events));
    QCOMPARE(d.allocated_peak_bytes, static_cast<std::int64_t>(allocated_peak));
    QCOMPARE(d.reserved_peak_bytes, static_cast<std::int64_t>(reserved_peak));
    // Frames were kept: every category sums to the allocated bytes at the peak.
    std::int64_t sum = 0;
    for (const auto& [category, bytes] : d.at_peak_by_category) sum += bytes;
    QCOMPARE(sum, d.live_at_peak_bytes);
    QVERIFY(d.live_at_peak_bytes > 0);
}

void TestMemoryImport::refuses_bad_snapshots() {
    const auto expect = [&](const std::string& bytes, const char* field) {
        const auto path = temp_path(dir_, "bad.pickle");
        std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
        try {
            auto w = TraceWriter::create(temp_path(dir_, "bad.trace"));
            (void)import_trace_file(path, *w, {});
            QFAIL("accepted");
        } catch (const InputError& e) {
            QVERIFY2(e.issues().front().field.find(field) != std::string::npos,
                     (e.issues().front().field + ": " + e.issues().front().message).c_str());
        }
    };
    // {"segments": 5}
    expect(raw("\x80\x04}\x8c\x08segments" "K\x05s."), "segments");
    // {"device_traces": []}: no segments
    expect(raw("\x80\x04}\x8c\x0d" "device_traces]s."), "segments");
    // [] (a pickle, not a snapshot)
    expect(raw("\x80\x04]."), "snapshot");
    // GLOBAL: refused by the reader, naming the byte
    expect(raw("\x80\x02" "cposix\nsystem\n."), "byte 2");
}

// A real memory-profiled Kineto trace: the peaks are the largest "Total Allocated" and
// "Total Reserved" per "Device Id" (tests/fixtures/kineto/SOURCES.txt).
void TestMemoryImport::kineto_memory_events() {
    const auto path = import(std::string(MESHWORK_TEST_FIXTURES) +
                                 "/kineto/tracelens__h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
                             "qwen.trace");
    const auto stats = memory_stats(TraceReader::open(path));
    QCOMPARE(stats.devices.size(), std::size_t{2});
    const auto& host = stats.devices[0];
    QCOMPARE(host.device, -1);
    QCOMPARE(host.events, std::int64_t{200});
    QCOMPARE(host.allocated_peak_bytes, std::int64_t{16});
    const auto& gpu = stats.devices[1];
    QCOMPARE(gpu.device, 0);
    QCOMPARE(gpu.events, std::int64_t{2250});
    QCOMPARE(gpu.allocated_peak_bytes, std::int64_t{2088508416});
    QCOMPARE(gpu.reserved_peak_bytes, std::int64_t{2629828608});
}

// merge: each input's memory events under its rank, stacks carried over, peaks unchanged.
void TestMemoryImport::merge_keeps_memory_per_rank() {
    const std::string dir = std::string(MESHWORK_TEST_FIXTURES) + "/memory/";
    const auto a = import(dir + "eor_nn_snapshot.pickle.gz", "m-a.trace");
    const auto b = import(dir + "snapviewer_memory.pickle", "m-b.trace");
    const auto out = temp_path(dir_, "merged.trace");
    {
        auto w = TraceWriter::create(out);
        MergeOptions options;
        options.allow_mixed = true;
        options.rank_override = {0, 1};
        (void)merge_traces({a, b}, *w, options);
        w->close();
    }
    const auto stats = memory_stats(TraceReader::open(out));
    QCOMPARE(stats.devices.size(), std::size_t{2});
    QCOMPARE(stats.devices[0].rank, 0);
    QCOMPARE(stats.devices[0].allocated_peak_bytes, std::int64_t{108270580});
    QCOMPARE(stats.devices[1].rank, 1);
    QCOMPARE(stats.devices[1].allocated_peak_bytes, std::int64_t{2430114772});
    QCOMPARE(stats.devices[0].at_peak_by_category, memory_stats(TraceReader::open(a)).devices[0].at_peak_by_category);
}

QTEST_GUILESS_MAIN(TestMemoryImport)
#include "tst_memory_import.moc"
