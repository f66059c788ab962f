// Kineto/Chrome traces as PyTorch writes them across versions, with real files from
// tests/fixtures/kineto (SOURCES.txt there) and small hand-made ones for single facts:
// exact timestamps, HTA's step attribution, collectives, non-profiles, several ranks.
#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "profiler/analysis/trace_stats.h"
#include "core/common/error.h"
#include "profiler/import/import_many.h"
#include "profiler/import/import_trace.h"
#include "profiler/import/kineto_time.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_writer.h"
#include "tests/profiler/trace_test_util.h"

using namespace meshwork;
using namespace meshwork::profiler;
using meshwork::test::temp_path;

namespace {

const std::string kData = std::string(MESHWORK_TEST_FIXTURES) + "/kineto/";

void write_text(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

struct Imported {
    ImportResult result;
    std::vector<TraceEvent> events;
    TraceRunInfo info;
};

}  // namespace

class KinetoCompatTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    int n_ = 0;

    Imported import(const std::string& in) {
        const auto out = temp_path(dir_, "t" + std::to_string(n_++) + ".sqlite");
        auto w = TraceWriter::create(out);
        Imported r;
        r.result = import_trace_file(in, *w, {});
        w->close();
        auto reader = TraceReader::open(out);
        r.info = reader.run_info();
        reader.for_each_event([&](const TraceEvent& e) { r.events.push_back(e); });
        return r;
    }

    std::string error_of(const std::string& in) {
        try {
            import(in);
        } catch (const InputError& e) {
            return e.what();
        }
        return {};
    }

  private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void timestamps_parse_exactly() {
        QCOMPARE(micros_text_to_ns("1666149715033200").value(), std::int64_t{1666149715033200000});
        QCOMPARE(micros_text_to_ns("4203669604595.407").value(), std::int64_t{4203669604595407});
        // A double holds 1.7e15 us only to 0.25 us; the text keeps every nanosecond.
        QCOMPARE(micros_text_to_ns("1700000000000000.123").value(),
                 std::int64_t{1700000000000000123});
        QCOMPARE(micros_text_to_ns("1.0005").value(), std::int64_t{1001});  // rounds half up
        QCOMPARE(micros_text_to_ns("-2.5").value(), std::int64_t{-2500});
        QCOMPARE(micros_text_to_ns("1.5e3").value(), std::int64_t{1500000});
        QVERIFY(!micros_text_to_ns("1e300"));
        QVERIFY(!micros_text_to_ns("99999999999999999"));
        QVERIFY(!micros_text_to_ns("1."));
        QVERIFY(!micros_text_to_ns("abc"));
    }

    // HTA's backward_thread.json: absolute integer Unix-epoch microseconds (~1.67e15, which
    // the importer used to refuse), and a backward kernel launched from the autograd thread,
    // which has no ProfilerStep range of its own: the step comes from the launch's time.
    void absolute_epoch_trace_and_backward_step() {
        const auto r = import(kData + "hta__call_stack__backward_thread.json");
        QCOMPARE(r.info.start_time_unix_ns, std::int64_t{1666149715033200000});
        QCOMPARE(r.info.clock_domain, std::string("host-realtime"));
        int kernels = 0;
        std::int64_t first = std::numeric_limits<std::int64_t>::max();
        for (const auto& e : r.events) {
            first = std::min(first, e.start_ns);
            if (e.kind == EventKind::Compute) {
                ++kernels;
                QCOMPARE(e.start_ns, std::int64_t{(1666149715428509 - 1666149715033200) * 1000});
                QCOMPARE(e.step, 552);
            }
        }
        QCOMPARE(first, std::int64_t{0});
        QCOMPARE(kernels, 1);
        QCOMPARE(r.result.device_events, std::int64_t{1});
    }

    // PyTorch 1.x categories (Kernel, Runtime) and "external id" in lower case.
    void pytorch_1x_categories() {
        const auto r = import(kData + "hta__trace_file_list__inference_rank_1.json.gz");
        QCOMPARE(r.result.rank, 1);
        QCOMPARE(r.result.device_events, std::int64_t{4});
        int launches = 0;
        for (const auto& e : r.events) launches += e.name == "cudaLaunchKernel";
        QVERIFY(launches > 0);
    }

    // ROCm trace with baseTimeNanoseconds and relative decimal times.
    void rocm_trace_with_base_time() {
        const auto r = import(kData + "hta__amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz");
        // base + the first kept event's ts (the profiler's own "Trace" span is not kept).
        QCOMPARE(r.info.start_time_unix_ns,
                 std::int64_t{1735632360000000000} + std::int64_t{4203669603187439});
        QCOMPARE(r.result.device_events, std::int64_t{16});
        int stepped = 0;
        for (const auto& e : r.events) stepped += (e.kind == EventKind::Compute && e.step >= 0);
        QVERIFY(stepped > 0);
    }

    void not_a_profile_says_what_it_is() {
        QVERIFY(error_of(kData + "hta__execution_trace__benchmark_simple_add_et.json.gz")
                    .find("execution trace") != std::string::npos);
        const auto snap = temp_path(dir_, "snapshot.json");
        write_text(snap, R"({"segments": [], "device_traces": [[]]})");
        QVERIFY(error_of(snap).find("memory snapshot") != std::string::npos);
        const auto pickle = temp_path(dir_, "snapshot.pickle");
        write_text(pickle, std::string("\x80\x04\x95\x10\x00", 5) + "junk");
        QVERIFY(error_of(pickle).find("pickle") != std::string::npos);
        const auto empty = temp_path(dir_, "empty.json");
        write_text(empty, R"({"traceEvents": []})");
        QVERIFY(error_of(empty).find("empty profiler trace") != std::string::npos);
    }

    // A symmetric-memory all-reduce kernel is communication; its size comes from the
    // record_param_comms op around its launch (no External id link), and a collective kernel
    // without any size still counts as a collective, size unknown.
    void symmetric_memory_and_unsized_collectives() {
        // Hand-written (tests/fixtures/kineto/SOURCES.txt): names and args as PyTorch 2.x writes them.
        const std::string in = kData + "symmetric_memory_allreduce.json";
        const auto r = import(in);
        int comms = 0;
        for (const auto& e : r.events) {
            if (e.kind != EventKind::Communication) continue;
            ++comms;
            QCOMPARE(e.step, 7);  // ran after the step's window; launched inside it
            if (e.name.find("multimem") != std::string::npos) {
                QCOMPARE(e.bytes, std::int64_t{1048576 * 2});
                QCOMPARE(e.group_size, 8);
            } else {
                QCOMPARE(e.bytes, std::int64_t{0});
            }
        }
        QCOMPARE(comms, 2);
        const auto out = temp_path(dir_, "symm_stats.sqlite");
        {
            auto w = TraceWriter::create(out);
            import_trace_file(in, *w, {});
            w->close();
        }
        const auto stats = compute_stats(TraceReader::open(out));
        QCOMPARE(stats.collectives.size(), std::size_t{2});
        bool unsized = false;
        for (const auto& c : stats.collectives) {
            if (c.collective == Collective::AllGather) {
                unsized = true;
                QCOMPARE(c.bytes, std::int64_t{0});
                QCOMPARE(stats_to_json(stats)["collectives"][0]["size_known"].get<bool>() ||
                             stats_to_json(stats)["collectives"][1]["size_known"].get<bool>(),
                         true);
            } else {
                QCOMPARE(c.collective, Collective::AllReduce);
            }
        }
        QVERIFY(unsized);
        QCOMPARE(stats.ranks.at(0).comm_s, 150e-9 * 1000);
    }

    // Two ranks of one job: absolute starts align them; without absolute times, the end of
    // the first common collective does.
    void several_ranks_align() {
        auto rank_file = [&](int rank, long long t0, bool absolute) {
            const auto p = temp_path(dir_, "job_" + std::string(absolute ? "abs" : "rel") +
                                               std::to_string(rank) + ".json");
            const std::string ts0 = std::to_string(t0);
            write_text(p, std::string("{") +
                              (absolute ? "\"baseTimeNanoseconds\": 1700000000000000000," : "") +
                              "\"distributedInfo\": {\"rank\": " + std::to_string(rank) +
                              ", \"world_size\": 2},"
                              "\"traceEvents\": ["
                              // Rank 1 has an earlier kernel, so its file's origin differs.
                              + (rank == 1 ? "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":"
                                             "\"prologue\",\"pid\":0,\"tid\":7,\"ts\":" +
                                                 std::to_string(t0 - 50) + ",\"dur\":5},"
                                           : std::string()) +
                              "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,"
                              "\"tid\":7,\"ts\":" +
                              ts0 +
                              ",\"dur\":10},"
                              "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_"
                              "Sum_f32_RING_LL\",\"pid\":0,\"tid\":9,"
                              "\"ts\":" +
                              std::to_string(t0 + 20 + rank * 30) +
                              ",\"dur\":" + std::to_string(40 - rank * 30) + "}]}");
            return p;
        };
        for (bool absolute : {true, false}) {
            // Rank 1 starts 5 us after rank 0 on the common clock; without a common clock its
            // file starts at 900 (another origin).
            const auto a = rank_file(0, absolute ? 100 : 100, absolute);
            const auto b = rank_file(1, absolute ? 105 : 900, absolute);
            const auto out =
                temp_path(dir_, std::string("job_") + (absolute ? "abs" : "rel") + ".sqlite");
            auto w = TraceWriter::create(out);
            ImportManyOptions o;
            o.threads = 2;
            const auto r = import_trace_files({a, b}, *w, o);
            w->close();
            QCOMPARE(r.merge.inputs.at(1).alignment,
                     std::string(absolute ? "start-time" : "collective"));
            auto reader = TraceReader::open(out);
            std::map<int, std::int64_t> comm_end;
            std::set<int> ranks;
            reader.for_each_event([&](const TraceEvent& e) {
                ranks.insert(e.rank);
                if (e.kind == EventKind::Communication) comm_end[e.rank] = e.end_ns;
            });
            QCOMPARE(ranks, (std::set<int>{0, 1}));
            // On the common clock rank 1's all-reduce ends 5 us after rank 0's (160 vs 165 us);
            // without one, the collective's ends are made equal.
            if (absolute)
                QCOMPARE(comm_end[1] - comm_end[0], std::int64_t{5000});
            else
                QCOMPARE(comm_end[1], comm_end[0]);
        }
    }

    // Eight ranks of one job, given as a folder, imported on parallel threads: eight ranks,
    // each with compute and communication.
    void eight_ranks_from_a_folder() {
        const std::string folder = temp_path(dir_, "job8");
        QVERIFY(QDir().mkpath(QString::fromStdString(folder)));
        for (int rank = 0; rank < 8; ++rank) {
            const long long t0 = 1000 + rank * 7;  // each rank's clock starts a little later
            write_text(
                folder + "/worker" + std::to_string(rank) + ".pt.trace.json",
                "{\"baseTimeNanoseconds\": 1700000000000000000, \"distributedInfo\": {\"rank\": " +
                    std::to_string(rank) +
                    ", \"world_size\": 8}, \"traceEvents\": ["
                    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm90_gemm\",\"pid\":0,\"tid\":7,"
                    "\"ts\":" +
                    std::to_string(t0) +
                    ",\"dur\":50},"
                    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_bf16_"
                    "RING_LL\","
                    "\"pid\":0,\"tid\":20,\"ts\":" +
                    std::to_string(t0 + 60) + ",\"dur\":30}]}");
        }
        const auto out = temp_path(dir_, "job8.sqlite");
        auto w = TraceWriter::create(out);
        ImportManyOptions o;
        o.threads = 4;
        const auto r = import_trace_files(expand_trace_inputs({folder}), *w, o);
        w->close();
        QCOMPARE(r.files.size(), std::size_t{8});
        const auto stats = compute_stats(TraceReader::open(out));
        QCOMPARE(stats.ranks.size(), std::size_t{8});
        for (const auto& rank : stats.ranks) {
            QCOMPARE(rank.compute_s, 50e-6);
            QCOMPARE(rank.comm_s, 30e-6);
        }
        QCOMPARE(r.merge.inputs.at(7).offset_ns, std::int64_t{49000});
    }

    // RCCL / NCCL 2.2x generic kernels: the collective from "Collective name" (kept in the
    // name), busbw by that collective; a kernel whose launch the file does not hold (launched
    // before the profiler started) is in no step, as HTA assigns iterations, and stats says so.
    void generic_collectives_and_launches_outside_the_window() {
        const std::string in = kData + "generic_collectives_early_launch.json";
        const auto r = import(in);
        int generic = 0;
        for (const auto& e : r.events) {
            if (e.name.rfind("ncclDevKernel_Generic", 0) == 0) {
                ++generic;
                QCOMPARE(e.kind, EventKind::Communication);
                if (e.step == 1) {
                    QCOMPARE(e.name, std::string("ncclDevKernel_Generic [all_reduce]"));
                    QCOMPARE(e.collective, Collective::AllReduce);
                    QCOMPARE(e.bytes, std::int64_t{1048576 * 2});
                } else {
                    QCOMPARE(e.step, 2);
                    QCOMPARE(e.name, std::string("ncclDevKernel_Generic [broadcast]"));
                    QCOMPARE(e.collective, Collective::Broadcast);
                    QCOMPARE(e.bytes, std::int64_t{4096});
                }
                QCOMPARE(e.group_size, 8);
            }
            // Ran inside step 1's window, launched before the trace began: no step.
            if (e.name.find("reduce_kernel") != std::string::npos) QCOMPARE(e.step, -1);
            if (e.name.find("FillFunctor") != std::string::npos) QVERIFY(e.step == 1 || e.step == 2);
        }
        QCOMPARE(generic, 2);
        const auto out = temp_path(dir_, "generic_stats.sqlite");
        {
            auto w = TraceWriter::create(out);
            import_trace_file(in, *w, {});
            w->close();
        }
        const auto stats = compute_stats(TraceReader::open(out), 20, 0);
        QCOMPARE(stats.collectives.size(), std::size_t{2});
        for (const auto& c : stats.collectives) {
            QCOMPARE(c.group_size, 8);
            if (c.collective == Collective::AllReduce) {
                QCOMPARE(c.busbw_gbps, c.algbw_gbps * 1.75);  // nccl-tests: 2(n-1)/n, n = 8
            } else {
                QCOMPARE(c.collective, Collective::Broadcast);
                QCOMPARE(c.busbw_gbps, c.algbw_gbps);
            }
        }
        const auto& rank = stats.ranks.at(0);
        QCOMPARE(rank.steps, 2);
        QCOMPARE(rank.outside_steps_events, std::int64_t{1});
        QCOMPARE(rank.outside_steps_s, 400e-6);
        // Step 1 runs from the all-reduce's start (1200 us) to the fill kernel's end (1500 us),
        // not to the end of the kernel launched before the trace (1900 us).
        const auto json = stats_to_json(stats);
        QCOMPARE(json["ranks"][0]["outside_steps_events"].get<std::int64_t>(), std::int64_t{1});
        // Two steps, none left out as warm-up: mean of 300 us and 300 us.
        QCOMPARE(rank.step_s, 300e-6);
    }

    // A file of device activity alone (torch.profiler with ProfilerActivity.CUDA only) links
    // no kernel to a launch: its kernels keep the step window they ran in.
    void device_only_trace_keeps_steps_by_time() {
        const auto in = temp_path(dir_, "device_only.json");
        // (Plain strings: moc stops reading the file at a raw string spanning lines.)
        write_text(in,
                   "{\"traceEvents\":["
                   "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#4\",\"pid\":1,\"tid\":1,"
                   "\"ts\":100,\"dur\":100},"
                   "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":150,\"dur\":10,"
                   "\"args\":{\"correlation\":9,\"device\":0,\"stream\":7}}]}");
        const auto r = import(in);
        bool seen = false;
        for (const auto& e : r.events) {
            if (e.name == "gemm") {
                seen = true;
                QCOMPARE(e.step, 4);
            }
        }
        QVERIFY(seen);
    }

    void rank_collision_is_refused() {
        const auto a = temp_path(dir_, "dup_a.json"), b = temp_path(dir_, "dup_b.json");
        const std::string body =
            R"({"distributedInfo":{"rank":3},"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":1,"ts":1,"dur":1}]})";
        write_text(a, body);
        write_text(b, body);
        auto w = TraceWriter::create(temp_path(dir_, "dup.sqlite"));
        try {
            import_trace_files({a, b}, *w, {});
            QFAIL("two files of one rank must be refused");
        } catch (const InputError& e) {
            const auto& issue = e.issues().front();
            QVERIFY(issue.message.find("rank 3") != std::string::npos);
            // Names the files given, not the temporary traces they were imported into.
            QCOMPARE(issue.file, b);
            QVERIFY2(issue.message.find(a) != std::string::npos, issue.message.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(KinetoCompatTest)
#include "tst_kineto_compat.moc"
