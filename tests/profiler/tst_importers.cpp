// Importers: hand-written Kineto JSON (plain and gzip), an nsys-schema SQLite file built
// here with the real table and column names, and hostile inputs.
#include <QTemporaryDir>
#include <QtTest>

#include <sqlite3.h>
#include <zlib.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/common/error.h"
#include "profiler/analysis/trace_stats.h"
#include "profiler/import/import_trace.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_writer.h"
#include "tests/profiler/trace_test_util.h"

using namespace meshwork;
using namespace meshwork::profiler;
using meshwork::test::temp_path;

namespace {

const std::string kKinetoFixture = std::string(MESHWORK_TEST_FIXTURES) + "/profiler/kineto_rank1.json";

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

void write_gzip(const std::string& path, const std::string& text) {
    gzFile f = gzopen(path.c_str(), "wb");
    QVERIFY(f);
    QCOMPARE(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
    gzclose(f);
}

void exec_sql(sqlite3* db, const std::string& sql) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    const std::string msg = err ? err : "";
    sqlite3_free(err);
    QVERIFY2(rc == SQLITE_OK, msg.c_str());
}

// The tables and columns of `nsys export --type sqlite` (a subset of columns, real names).
void write_nsys_fixture(const std::string& path, bool with_kernel_name = true) {
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    exec_sql(db, "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
                 "INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'ampere_bf16_s16816gemm'),"
                 " (3, 'ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL'), (4, 'gemm'), (5, 'ncclKernel');");
    exec_sql(db, std::string("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
                 " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
                 " correlationId INTEGER, globalPid INTEGER, ") +
                 (with_kernel_name ? "demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL," : "") +
                 " gridX INTEGER NOT NULL DEFAULT 1, gridY INTEGER NOT NULL DEFAULT 1, gridZ INTEGER NOT NULL DEFAULT 1,"
                 " blockX INTEGER NOT NULL DEFAULT 1, blockY INTEGER NOT NULL DEFAULT 1, blockZ INTEGER NOT NULL DEFAULT 1,"
                 " registersPerThread INTEGER NOT NULL DEFAULT 0);");
    if (with_kernel_name) {
        exec_sql(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId,"
                     " globalPid, demangledName, shortName) VALUES"
                     " (2000, 3000, 0, 1, 7, 11, 0, 2, 4), (3100, 3600, 0, 1, 13, 12, 0, 3, 5);");
    }
    exec_sql(db, "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,"
                 " eventClass INTEGER NOT NULL DEFAULT 0, globalTid INTEGER, correlationId INTEGER,"
                 " nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL DEFAULT 0, callchainId INTEGER);"
                 "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId) VALUES"
                 " (1500, 1600, 281479271677953, 11, 1), (1700, 1750, 281479271677953, 12, 1);");
    exec_sql(db, "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
                 " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
                 " correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,"
                 " deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER);"
                 "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId,"
                 " bytes, copyKind) VALUES (1000, 1200, 0, 1, 7, 10, 65536, 1);");
    exec_sql(db, "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,"
                 " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
                 " correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL,"
                 " memKind INTEGER);"
                 "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, value, bytes)"
                 " VALUES (1300, 1310, 0, 1, 7, 0, 1024);");
    exec_sql(db, "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
                 " rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,"
                 " endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER);"
                 "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) VALUES"
                 " (1400, 4000, 59, 'step 5', 281479271677953, NULL),"
                 " (1450, 1650, 59, NULL, 281479271677953, 4),"
                 " (1460, 1640, 59, 'layer 2 mb=1', 281479271677953, NULL),"
                 " (1800, NULL, 34, 'a mark', 281479271677953, NULL);");
    exec_sql(db, "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT, busLocation TEXT,"
                 " totalMemory INTEGER);"
                 "INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA H100 80GB HBM3', '0000:1b:00.0', 85031714816);");
    exec_sql(db, "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);"
                 "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000123456789, 'x', 'y');");
    sqlite3_close(db);
}

std::string import_error(const std::string& in, const std::string& out) {
    try {
        auto w = TraceWriter::create(out);
        import_trace_file(in, *w, {});
        w->close();
    } catch (const InputError& e) {
        return e.issues().front().to_string();
    }
    return "";
}

}  // namespace

class ImportersTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    void check_kineto_trace(const std::string& out) {
        auto r = TraceReader::open(out);
        QCOMPARE(r.run_info().source, std::string("kineto"));
        QCOMPARE(r.run_info().world_size, 2);
        // Times start at the first event (ts 1000 us); the absolute start is base + 1000 us.
        QCOMPARE(r.run_info().start_time_unix_ns, std::int64_t{1700000000001000000});
        int kernels = 0, comms = 0, copies = 0, sets = 0, host = 0;
        r.for_each_event([&](const TraceEvent& e) {
            QCOMPARE(e.rank, 1);
            if (e.kind == EventKind::Compute) {
                ++kernels;
                QCOMPARE(e.start_ns, std::int64_t{100000});
                QCOMPARE(e.end_ns, std::int64_t{200000});
                QCOMPARE(e.step, 3);  // through correlation 100 -> launch inside ProfilerStep#3
                QCOMPARE(e.correlation_id, std::int64_t{100});
            } else if (e.kind == EventKind::Communication) {
                ++comms;
                QCOMPARE(e.bytes, std::int64_t{1048576 * 2});  // via External id 3 (bf16)
                QCOMPARE(e.group_size, 2);
                QCOMPARE(e.step, 3);
            } else if (e.kind == EventKind::Memcpy) {
                ++copies;
                QCOMPARE(e.start_ns, std::int64_t{50500});
                QCOMPARE(e.end_ns, std::int64_t{60750});
            } else if (e.kind == EventKind::Memset) {
                ++sets;
            } else {
                ++host;
            }
        });
        QCOMPARE(kernels, 1);
        QCOMPARE(comms, 1);
        QCOMPARE(copies, 1);
        QCOMPARE(sets, 1);
        QCOMPARE(host, 5);
        bool comm_track = false, compute_track = false;
        for (const auto& t : r.tracks()) {
            comm_track |= t.info.kind == TrackKind::CommStream;
            compute_track |= t.info.kind == TrackKind::ComputeStream;
        }
        QVERIFY(comm_track && compute_track);
        int counters = 0;
        r.for_each_counter([&](const CounterSample& c) {
            ++counters;
            QCOMPARE(c.value, 2097152.0);
        });
        QCOMPARE(counters, 1);
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void imports_kineto_json() {
        const auto out = temp_path(dir_, "kineto.sqlite");
        auto w = TraceWriter::create(out);
        const auto r = import_trace_file(kKinetoFixture, *w, {});
        w->close();
        QCOMPARE(r.format, std::string("kineto"));
        QCOMPARE(r.rank, 1);
        QCOMPARE(r.events, std::int64_t{9});
        check_kineto_trace(out);
    }

    void imports_gzip_kineto_json() {
        const auto gz = temp_path(dir_, "trace.json.gz");
        write_gzip(gz, slurp(kKinetoFixture));
        const auto out = temp_path(dir_, "kineto_gz.sqlite");
        auto w = TraceWriter::create(out);
        import_trace_file(gz, *w, {});
        w->close();
        check_kineto_trace(out);
    }

    // A trace split over gzip members, then 200,000 empty members (issue 36: each member
    // used to zero-fill 4x the input left, 21 s for this file): the same trace, every member
    // read. The work is linear now; its time is not asserted (issue 31).
    void imports_gzip_members_and_many_empty_ones() {
        const std::string text = slurp(kKinetoFixture);
        const auto half = temp_path(dir_, "half.gz"), rest = temp_path(dir_, "rest.gz"), empty = temp_path(dir_, "e.gz");
        write_gzip(half, text.substr(0, text.size() / 2));
        write_gzip(rest, text.substr(text.size() / 2));
        write_gzip(empty, "");
        const std::string empty_member = slurp(empty);
        std::string all = slurp(half) + slurp(rest);
        all.reserve(all.size() + 200000 * empty_member.size());
        for (int i = 0; i < 200000; ++i) all += empty_member;
        const auto gz = temp_path(dir_, "members.json.gz");
        write_text(gz, all);
        const auto out = temp_path(dir_, "members.sqlite");
        auto w = TraceWriter::create(out);
        import_trace_file(gz, *w, {});
        w->close();
        check_kineto_trace(out);
    }

    void rank_option_overrides() {
        const auto out = temp_path(dir_, "kineto_rank.sqlite");
        auto w = TraceWriter::create(out);
        ImportOptions o;
        o.rank = 5;
        QCOMPARE(import_trace_file(kKinetoFixture, *w, o).rank, 5);
        w->close();
    }

    void imports_nsys_sqlite() {
        const auto in = temp_path(dir_, "profile_rank3.sqlite");
        write_nsys_fixture(in);
        const auto out = temp_path(dir_, "nsys.sqlite");
        auto w = TraceWriter::create(out);
        const auto res = import_trace_file(in, *w, {});
        w->close();
        QCOMPARE(res.format, std::string("nsys"));
        QCOMPARE(res.rank, 3);  // from the file name
        auto r = TraceReader::open(out);
        QCOMPARE(r.run_info().start_time_unix_ns, std::int64_t{1700000000123456789});
        QCOMPARE(r.run_info().extra.at("gpu.0"), std::string("NVIDIA H100 80GB HBM3"));
        int gemm = 0, rs = 0, memcpy = 0, memset = 0, runtime = 0, nvtx = 0;
        r.for_each_event([&](const TraceEvent& e) {
            QCOMPARE(e.rank, 3);
            if (e.name == "ampere_bf16_s16816gemm") {
                ++gemm;
                QCOMPARE(e.kind, EventKind::Compute);
                QCOMPARE(e.step, 5);
                QCOMPARE(e.layer, 2);        // launch at 1500 inside "layer 2 mb=1"
                QCOMPARE(e.micro_batch, 1);
                QCOMPARE(e.correlation_id, std::int64_t{11});
            } else if (e.name == "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL") {
                ++rs;
                QCOMPARE(e.kind, EventKind::Communication);
                QCOMPARE(e.step, 5);
                QCOMPARE(e.layer, -1);
            } else if (e.kind == EventKind::Memcpy) {
                ++memcpy;
                QCOMPARE(e.name, std::string("Memcpy HtoD"));
                QCOMPARE(e.bytes, std::int64_t{65536});
            } else if (e.kind == EventKind::Memset) {
                ++memset;
                QCOMPARE(e.bytes, std::int64_t{1024});
            } else if (e.name == "cudaLaunchKernel") {
                ++runtime;
            } else {
                ++nvtx;
            }
        });
        QCOMPARE(gemm, 1);
        QCOMPARE(rs, 1);
        QCOMPARE(memcpy, 1);
        QCOMPARE(memset, 1);
        QCOMPARE(runtime, 2);
        QCOMPARE(nvtx, 3);  // the mark (no end) is not a range
        int streams = 0;
        for (const auto& t : r.tracks()) streams += t.info.kind != TrackKind::Host;
        QCOMPARE(streams, 2);
    }

    // One export of a two-process job (nsys profiling mpirun/torchrun): each process with
    // device work is a rank, in pid order from the file's rank.
    void nsys_processes_become_ranks() {
        const auto in = temp_path(dir_, "job_rank3.sqlite");
        write_nsys_fixture(in);
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open(in.c_str(), &db), SQLITE_OK);
        exec_sql(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId,"
                     " globalPid, demangledName, shortName) VALUES (2500, 2900, 0, 1, 7, 99, 33554432, 2, 4);");
        sqlite3_close(db);
        const auto out = temp_path(dir_, "nsys_job.sqlite");
        auto w = TraceWriter::create(out);
        const auto res = import_trace_file(in, *w, {});
        w->close();
        QCOMPARE(res.world_size, 2);
        auto r = TraceReader::open(out);
        std::map<int, int> kernels_by_rank;
        r.for_each_event([&](const TraceEvent& e) {
            if (e.kind == EventKind::Compute || e.kind == EventKind::Communication) ++kernels_by_rank[e.rank];
        });
        // pid 2 (globalPid 2 << 24) comes before pid 256, the launching thread's process.
        QCOMPARE(kernels_by_rank, (std::map<int, int>{{3, 1}, {4, 2}}));
    }

    // Device work takes the step of its launch (HTA's rule), found by (process, correlation
    // id): work launched by a thread with no step range of its own takes the step range that
    // holds the launch on another thread of its process, even when it runs after that range
    // ends; work whose launch the export lacks (queued before capture) is in no step though it
    // ran inside one; a second process reusing a correlation id keeps its own launch.
    void nsys_steps_by_launch() {
        const auto in = temp_path(dir_, "job_steps.sqlite");
        write_nsys_fixture(in);
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open(in.c_str(), &db), SQLITE_OK);
        // Process 256 (globalPid 256 << 24): the fixture's kernels, and two more. Thread 2 of
        // it (an autograd thread) has no ranges.
        exec_sql(db, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = 4294967296;"
                     "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET globalPid = 4294967296;"
                     "UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET globalPid = 4294967296;"
                     "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId) VALUES"
                     " (2100, 2150, 281479271677954, 13, 1),"
                     " (5000, 5050, 33554437, 11, 1);"  // process 2, thread 5: correlation 11 again
                     "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId,"
                     " globalPid, demangledName, shortName) VALUES"
                     " (4100, 4200, 0, 1, 7, 13, 4294967296, 4, 4),"       // launched at 2100 in step 5, runs after it
                     " (2200, 2300, 0, 1, 7, 14, 4294967296, 5, 5),"       // no launch in the file
                     " (5100, 5200, 1, 1, 7, 11, 33554432, 2, 4);"         // process 2's correlation 11
                     "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES"
                     " (4900, 6000, 59, 'ProfilerStep#9', 33554437);");
        sqlite3_close(db);
        const auto out = temp_path(dir_, "nsys_steps.sqlite");
        auto w = TraceWriter::create(out);
        const auto res = import_trace_file(in, *w, {});
        w->close();
        QCOMPARE(res.world_size, 2);  // pid 2 is rank 0, pid 256 rank 1
        auto r = TraceReader::open(out);
        std::map<std::pair<std::string, int>, int> step_of;  // (name, rank) -> step
        r.for_each_event([&](const TraceEvent& e) {
            if (e.kind == EventKind::Compute || e.kind == EventKind::Communication) step_of[{e.name, e.rank}] = e.step;
        });
        const std::map<std::pair<std::string, int>, int> want{
            {{"ampere_bf16_s16816gemm", 1}, 5},                       // launched at 1500 in step 5
            {{"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", 1}, 5},
            {{"gemm", 1}, 5},                                          // thread 2's launch, step 5 of thread 1
            {{"ncclKernel", 1}, -1},                                   // by time it would be step 5
            {{"ampere_bf16_s16816gemm", 0}, 9}};                       // not process 256's launch 11
        QCOMPARE(step_of, want);
        const auto stats = compute_stats(r);
        QCOMPARE(stats.ranks.size(), std::size_t{2});
        QCOMPARE(stats.ranks[1].rank, 1);
        // In no step: the kernel with no launch, the copy naming launch 10 (absent), the
        // memset before the step.
        QCOMPARE(stats.ranks[1].outside_steps_events, std::int64_t{3});
        QCOMPARE(stats.ranks[0].outside_steps_events, std::int64_t{0});
    }

    void refuses_nsys_without_needed_columns() {
        const auto in = temp_path(dir_, "nsys_bad.sqlite");
        write_nsys_fixture(in, /*with_kernel_name=*/false);
        const auto msg = import_error(in, temp_path(dir_, "o1.sqlite"));
        QVERIFY2(msg.find("CUPTI_ACTIVITY_KIND_KERNEL") != std::string::npos, msg.c_str());
        QVERIFY(msg.find("demangledName") != std::string::npos);
    }

    void refuses_other_sqlite_and_text() {
        const auto other = temp_path(dir_, "other.db");
        sqlite3* db = nullptr;
        sqlite3_open(other.c_str(), &db);
        exec_sql(db, "CREATE TABLE x(a)");
        sqlite3_close(db);
        QVERIFY(import_error(other, temp_path(dir_, "o2.sqlite")).find("not an Nsight Systems export") != std::string::npos);
        const auto text = temp_path(dir_, "notes.txt");
        write_text(text, "just some notes\n");
        QVERIFY(import_error(text, temp_path(dir_, "o3.sqlite")).find("not a trace") != std::string::npos);
    }

    // An export of a session that traced no CUDA (nsys --trace=osrt, or a program that ran
    // no GPU work) has nsys's session tables and no activity: said so, not "not an export".
    void nsys_export_without_device_activity_says_so() {
        const auto in = temp_path(dir_, "nsys_no_cuda.sqlite");
        sqlite3* db = nullptr;
        sqlite3_open(in.c_str(), &db);
        exec_sql(db, "CREATE TABLE PROCESSES(globalPid INTEGER, pid INTEGER, name TEXT)");
        exec_sql(db, "CREATE TABLE TARGET_INFO_GPU(id INTEGER, name TEXT)");
        exec_sql(db, "CREATE TABLE META_DATA(name TEXT, value TEXT)");
        exec_sql(db, "INSERT INTO PROCESSES VALUES (16777216, 1, 'python')");
        sqlite3_close(db);
        const auto msg = import_error(in, temp_path(dir_, "o_nocuda.sqlite"));
        QVERIFY2(msg.find("no device activity") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("not an Nsight Systems export") == std::string::npos, msg.c_str());
    }

    void refuses_hostile_json_data() {
        struct Case {
            const char* name;
            std::string text;
            const char* expect;
        };
        std::string deep(100000, '[');
        const std::vector<Case> cases = {
            {"deep.json", "{\"traceEvents\": " + deep, "nested deeper"},
            {"deep_obj.json", "{\"traceEvents\": [{\"ph\":\"X\",\"args\":" + std::string(5000, '[') + "]}", "nested deeper"},
            {"huge.json", R"({"traceEvents":[{"ph":"X","name":"k","ts":1e400,"dur":1}]})", "traceEvents[0].ts"},
            {"huge2.json", R"({"traceEvents":[{"ph":"X","name":"k","ts":1,"dur":9e30}]})", "traceEvents[0].dur"},
            {"type.json", R"({"traceEvents":[{"ph":"X","name":"k","ts":1,"dur":1},{"ph":"X","name":"k","ts":"soon"}]})", "traceEvents[1].ts"},
            {"name.json", R"({"traceEvents":[{"ph":"X","name":7,"ts":1,"dur":1}]})", "traceEvents[0].name"},
            {"elem.json", R"({"traceEvents":[3]})", "traceEvents[0]"},
            // The Trace Event Format's array form is read like traceEvents[].
            {"top.json", R"([{"ph":"X","name":"k"}])", "traceEvents[0].ts"},
            {"empty.json", R"({"traceEvents":[{"ph":"M","name":"process_name","pid":1,"args":{"name":"x"}}]})",
             "empty profiler trace"},
            {"et.json", R"({"schema":"1.0.1","pid":1,"nodes":[{"id":1,"name":"[pytorch|profiler|execution_trace|process]"}]})",
             "execution trace"},
            {"missing.json", R"({"events":[]})", "traceEvents"},
            {"cut.json", R"({"traceEvents":[{"ph":"X","name":"k","ts":1,)", "malformed JSON"},
            {"negative.json", R"({"traceEvents":[{"ph":"X","name":"k","ts":1,"dur":-5}]})", "negative"},
        };
        for (const auto& c : cases) {
            const auto in = temp_path(dir_, c.name);
            write_text(in, c.text);
            const auto msg = import_error(in, temp_path(dir_, std::string(c.name) + ".sqlite"));
            QVERIFY2(msg.find(c.expect) != std::string::npos, (std::string(c.name) + ": " + msg).c_str());
            QVERIFY2(msg.find(in) == 0, msg.c_str());  // names the file
        }
    }

    void refuses_corrupt_gzip() {
        const auto gz = temp_path(dir_, "cut.json.gz");
        write_gzip(gz, slurp(kKinetoFixture));
        const auto bytes = slurp(gz);
        write_text(gz, bytes.substr(0, bytes.size() / 2));
        const auto msg = import_error(gz, temp_path(dir_, "o4.sqlite"));
        QVERIFY2(!msg.empty(), "a truncated gzip file must be refused");
    }
};

QTEST_GUILESS_MAIN(ImportersTest)
#include "tst_importers.moc"
