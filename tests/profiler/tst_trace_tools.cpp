// Analysis and tools on real trace files: stats with figures checked by hand, merge with
// barrier alignment and its refusals, Chrome export read back, collectors, and the CLI verbs
// (exit codes, JSON keys, no output left behind on failure).
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "profiler/analysis/calibrate.h"
#include "profiler/analysis/event_classify.h"
#include "profiler/analysis/intervals.h"
#include "profiler/analysis/range_context.h"
#include "profiler/analysis/trace_compare.h"
#include "profiler/analysis/trace_stats.h"
#include "tests/support/recording_sink.h"
#include "core/cluster/cluster_spec.h"
#include "profiler/collect/cpu_collector.h"
#include "profiler/collect/cupti_collector.h"
#include "profiler/collect/gpu_activity.h"
#include "core/common/error.h"
#include "core/layout/layout_json.h"
#include "core/sim/simulate.h"
#include "profiler/export/chrome_trace_export.h"
#include "profiler/merge/trace_merge.h"
#include "profiler/store/trace_output.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_writer.h"
#include "tests/profiler/trace_test_util.h"
#include "tests/support/run_cli.h"

using namespace meshwork;
using namespace meshwork::profiler;
using meshwork::test::make_event;
using meshwork::test::temp_path;

namespace {

using meshwork::test::RecordingSink;

using test::CliResult;
using test::run_cli;

QStringList args(std::initializer_list<std::string> a) {
    QStringList l;
    for (const auto& s : a) l << QString::fromStdString(s);
    return l;
}

// One rank's steps: step i starts at step_starts[i] with a compute of computes[i] ns, then a
// 50 ns all-reduce of 1 KiB over 2 ranks.
void write_steps(const std::string& path, const std::vector<std::int64_t>& step_starts,
                 const std::vector<std::int64_t>& computes) {
    auto w = TraceWriter::create(path);
    const int c = w->add_track({0, TrackKind::ComputeStream, 0, "compute"});
    const int m = w->add_track({0, TrackKind::CommStream, 0, "comm"});
    for (std::size_t i = 0; i < step_starts.size(); ++i) {
        const std::int64_t t = step_starts[i], compute = computes.at(i);
        auto k = make_event(c, EventKind::Compute, "gemm", t, t + compute);
        k.step = static_cast<int>(i);
        auto x = make_event(m, EventKind::Communication, "all_reduce(tp)", t + compute, t + compute + 50);
        x.step = static_cast<int>(i);
        x.bytes = 1024;
        x.group_size = 2;
        w->add_event(k);
        w->add_event(x);
    }
    w->close();
}

// One rank of a two-stage step: compute [0,100) [200,300), comm [50,150) with 1 MB all-reduce
// over 4 ranks, barrier ending at barrier_end; times shifted by `skew` (a clock offset).
void write_rank(const std::string& path, int rank, std::int64_t skew, const std::string& run_id = "run-1",
                std::int64_t barrier_end = 1000) {
    auto w = TraceWriter::create(path);
    TraceRunInfo info;
    info.source = "meshwork-cpu";
    info.world_size = 2;
    info.extra["run_id"] = run_id;
    w->set_run_info(info);
    const int c = w->add_track({rank, TrackKind::ComputeStream, 0, "compute"});
    const int m = w->add_track({rank, TrackKind::CommStream, 0, "comm:dp"});
    const int h = w->add_track({rank, TrackKind::Host, 0, "host"});
    auto e1 = make_event(c, EventKind::Compute, "gemm", skew + 0, skew + 100);
    e1.step = 0;
    e1.flops = 1e6;
    auto e2 = make_event(c, EventKind::Compute, "gemm", skew + 200, skew + 300);
    e2.step = 0;
    e2.flops = 1e6;
    auto x = make_event(m, EventKind::Communication, "all_reduce(dp)", skew + 50, skew + 150);
    x.step = 0;
    x.bytes = 1000000;
    x.group_size = 4;
    for (auto& e : {e1, e2, x}) w->add_event(e);
    w->add_event(make_event(h, EventKind::Marker, "barrier", skew + barrier_end - 10, skew + barrier_end));
    w->add_counter(rank, c, "memory_bytes", skew + 5, 42.0);
    w->close();
}

nlohmann::json load_json(const std::string& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

}  // namespace

class TraceToolsTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void interval_arithmetic() {
        const auto u = union_of({{0, 10}, {5, 20}, {30, 40}, {40, 45}, {7, 7}});
        QCOMPARE(u.size(), std::size_t{2});
        QCOMPARE(length_ns(u), std::int64_t{35});
        QCOMPARE(intersection_ns(u, union_of({{15, 35}})), std::int64_t{10});
    }

    void range_context_names() {
        auto c = parse_range_context("ProfilerStep#12");
        QCOMPARE(c.step, 12);
        c = parse_range_context("step=3 mb=1 layer 7");
        QCOMPARE(c.step, 3);
        QCOMPARE(c.micro_batch, 1);
        QCOMPARE(c.layer, 7);
        c = parse_range_context("block.5.attention.fwd");
        QCOMPARE(c.layer, 5);
        c = parse_range_context("embedding");  // "mb" inside a word is not a micro-batch
        QCOMPARE(c.micro_batch, -1);
        RangeContextMap map;
        map.add_range(1, 0, 100, "step 2");
        map.add_range(1, 10, 20, "layer 4");
        map.add_range(1, 30, 40, "layer 5");
        map.finalize();
        QCOMPARE(map.lookup(1, 15).layer, 4);
        QCOMPARE(map.lookup(1, 15).step, 2);
        QCOMPARE(map.lookup(1, 35).layer, 5);
        QCOMPARE(map.lookup(1, 25).layer, -1);
        QCOMPARE(map.lookup(2, 15).step, -1);
        // A launch on thread 2 takes the step range of thread 1 that holds it (HTA's rule),
        // but not its layer; the ranges of another process are not consulted.
        QCOMPARE(map.launch_context(2, 15).step, 2);
        QCOMPARE(map.launch_context(2, 15).layer, -1);
        QCOMPARE(map.launch_context(2, 15, /*process=*/7).step, -1);
        QCOMPARE(map.lookup_any(15, 7).step, -1);
        QCOMPARE(map.lookup_any(15).layer, 4);
        RangeContextMap two;
        two.add_range(1, 0, 100, "ProfilerStep#3", 10);
        two.add_range(5, 0, 100, "ProfilerStep#8", 20);
        two.finalize();
        QCOMPARE(two.launch_context(9, 50, 10).step, 3);
        QCOMPARE(two.launch_context(9, 50, 20).step, 8);
        QCOMPARE(two.launch_context(9, 150, 20).step, -1);
    }

    void stats_match_hand_computed_figures() {
        const auto path = temp_path(dir_, "stats.sqlite");
        write_rank(path, 0, 0);
        const auto s = compute_stats(TraceReader::open(path));
        QCOMPARE(s.ranks.size(), std::size_t{1});
        const auto& r = s.ranks[0];
        // Device work: compute [0,100) [200,300), comm [50,150): span 300, busy [0,150)+[200,300).
        QCOMPARE(r.span_s, 300e-9);
        QCOMPARE(r.compute_s, 200e-9);
        QCOMPARE(r.comm_s, 100e-9);
        QCOMPARE(r.idle_s, 50e-9);
        QCOMPARE(r.overlap_fraction, 0.5);  // [50,100) of [50,150)
        QCOMPARE(r.exposed_comm_s, 50e-9);
        QCOMPARE(r.bubble_fraction, 50.0 / 300.0);
        QCOMPARE(s.kernels.front().name, std::string("gemm"));
        QCOMPARE(s.kernels.front().count, std::int64_t{2});
        QCOMPARE(s.collectives.size(), std::size_t{1});
        const auto& c = s.collectives[0];
        QCOMPARE(c.collective, Collective::AllReduce);
        QCOMPARE(stats_to_json(s)["collectives"][0]["collective"].get<std::string>(), std::string("all_reduce"));
        QCOMPARE(c.algbw_gbps, 1000000.0 / 100e-9 / 1e9);          // 10000 GB/s
        QCOMPARE(c.busbw_gbps, c.algbw_gbps * 2.0 * 3.0 / 4.0);    // 2(n-1)/n
        QCOMPARE(bus_factor(Collective::AllGather, 8), 7.0 / 8.0);
        QCOMPARE(bus_factor(Collective::AllToAll, 8), 7.0 / 8.0);
        QCOMPARE(bus_factor(Collective::Broadcast, 8), 1.0);
        QCOMPARE(bus_factor(Collective::AllReduce, 1), 1.0);
        QCOMPARE(collective_of_event("ncclDevKernel_AllGather_RING_LL"), Collective::AllGather);
        QCOMPARE(collective_of_event("ncclDevKernel_Generic"), Collective::Generic);
        QCOMPARE(collective_of_event("all_to_all(ep)"), Collective::AllToAll);
        QCOMPARE(collective_of_event("gemm"), Collective::None);
        // Meshwork names: the collective, then the end or one of "( :.".
        QCOMPARE(collective_of_name("reduce_scatter(dp).grads"), Collective::ReduceScatter);
        QCOMPARE(collective_of_name("send_recv"), Collective::SendRecv);
        QCOMPARE(collective_of_name("send(pp).activation"), Collective::Send);
        QCOMPARE(collective_of_name("reduce_kernel"), Collective::None);
        QCOMPARE(collective_of_name("generic"), Collective::None);
        QCOMPARE(std::string(to_string(Collective::AllReduce)), std::string("all_reduce"));
        QCOMPARE(std::string(collective_label(Collective::None)), std::string("other"));
    }

    // A run of three steps compares with a prediction of one: per-step means over the steps
    // after the first (warm-up), so a 3-step run no longer looks 3x slower than predicted.
    void per_step_figures_leave_out_the_warmup_step() {
        const auto run = temp_path(dir_, "three-steps.sqlite"),
                   one = temp_path(dir_, "one-step.sqlite");
        write_steps(run, {0, 1000, 2000}, {500, 100, 100});  // warm-up step 0: compute 500 ns
        write_steps(one, {0}, {100});
        const auto s = compute_stats(TraceReader::open(run));
        const auto& r = s.ranks.at(0);
        QCOMPARE(r.steps, 3);
        QCOMPARE(r.steps_averaged, 2);
        QCOMPARE(r.step_s, 150e-9);
        QCOMPARE(r.step_compute_s, 100e-9);
        QCOMPARE(r.step_comm_s, 50e-9);
        QCOMPARE(r.step_exposed_comm_s, 50e-9);
        QCOMPARE(r.step_idle_s, 0.0);
        QCOMPARE(r.span_s, 2150e-9);  // the whole-trace figures are unchanged
        const auto c = compare_traces(TraceReader::open(one), TraceReader::open(run),
                                      [](int rank) { return rank; });
        QCOMPARE(c.categories.at(0).category, std::string("step"));
        QCOMPARE(c.categories.at(0).error, 0.0);
        QCOMPARE(c.max_abs_error, 0.0);
        // One step only: that step; no step numbers at all: the whole trace.
        const auto single = compute_stats(TraceReader::open(one)).ranks.at(0);
        QCOMPARE(single.steps_averaged, 1);
        QCOMPARE(single.step_s, 150e-9);
    }

    // --warmup-steps: the first N steps leave every per-step figure (compare's means, and
    // calibrate's collectives, compute, scheduler counters and host accounting); one step is
    // always kept, and a one-step (simulated) trace keeps its step.
    void warmup_steps_leave_out_the_first_steps_everywhere() {
        const auto run = temp_path(dir_, "warm-four-steps.sqlite"), one = temp_path(dir_, "warm-one-step.sqlite");
        write_steps(run, {0, 10'000, 20'000, 30'000}, {900, 500, 100, 100});  // two slow warm-up steps, then 150 ns
        write_steps(one, {0}, {100});
        const auto trace = TraceReader::open(run);
        QCOMPARE(compute_stats(trace, 0, 2).ranks.at(0).steps_averaged, 2);
        QCOMPARE(compute_stats(trace, 0, 2).ranks.at(0).step_s, 150e-9);
        QCOMPARE(compute_stats(trace, 0, 1).ranks.at(0).step_s, (550 + 150 + 150) * 1e-9 / 3);  // the default
        QCOMPARE(compute_stats(trace, 0, 0).ranks.at(0).steps_averaged, 4);
        QCOMPARE(compute_stats(trace, 0, 9).ranks.at(0).steps_averaged, 1);  // never all of them
        QCOMPARE(compute_stats(trace, 0, 9).ranks.at(0).step_s, 150e-9);
        QCOMPARE(compute_stats(TraceReader::open(one), 0, 9).ranks.at(0).steps_averaged, 1);
        const auto same = [](int rank) { return rank; };
        QCOMPARE(compare_traces(TraceReader::open(one), trace, same, 2).max_abs_error, 0.0);
        QVERIFY(compare_traces(TraceReader::open(one), trace, same).max_abs_error > 0.5);

        auto r = run_cli(args({"compare", one, run, "--warmup-steps", "2", "--json", "--max-error", "0"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        const auto j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["warmup_steps"].get<int>(), 2);
        QCOMPARE(j["passed"].get<bool>(), true);
        QCOMPARE(run_cli(args({"compare", one, run, "--max-error", "0"})).exit_code, 3);  // default: 1 step
        r = run_cli(args({"compare", one, run, "--warmup-steps", "-1"}));
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("--warmup-steps"), qPrintable(r.err));

        // calibrate: the scheduler counters and the host's accounting of the warm-up steps
        // (twice the CPU, another process on a core) are left out with --warmup-steps 2.
        Layout layout = load_layout(std::string(MESHWORK_RESOURCES_DIR) + "/layouts/tiny-cpu.json");
        Layout two_cores = layout;
        two_cores.cluster.host_cores = 2;
        const auto counted = temp_path(dir_, "warm-counters.sqlite");
        {
            auto w = TraceWriter::create(counted);
            simulate_layout(two_cores, w.get());
            for (int rank : {0, 1}) {
                const int track = w->add_track({rank, TrackKind::Host, 0, "scheduler"});
                double busy = 500, own = 1;
                for (int step = 1; step <= 4; ++step) {
                    const std::int64_t at = step * 10'000'000;
                    const double scale = step <= 2 ? 2.0 : 1.0;
                    w->add_counter(rank, track, "thread.on_cpu_s", at, scale * 0.0009);
                    w->add_counter(rank, track, "thread.run_queue_wait_s", at, scale * 0.0004);
                    w->add_counter(rank, track, "thread.timeslices", at, 50);
                    w->add_counter(rank, track, "thread.compute_on_cpu_s", at, scale * 0.0008);
                    if (rank == 0) {
                        own += 1.5 * 0.010;
                        busy += (1.5 + (step <= 2 ? 1.0 : 0.0)) * 0.010;
                        w->add_counter(rank, track, "process.cpu_s", at, own);
                        w->add_counter(rank, track, "host.busy_cpu_s", at, busy);
                        w->add_counter(rank, track, "host.niced_cpu_s", at, 100.0);
                    }
                }
            }
            w->close();
        }
        const auto ct = TraceReader::open(counted);
        const CalibrationFit warm = fit_calibration(ct, layout.cluster, layout.training.dtype, &layout, 2);
        QCOMPARE(warm.sched.steps, 4);  // 2 ranks x the 2 steps after the warm-up
        QVERIFY(std::fabs(warm.sched.compute_on_cpu_s - 0.0008) < 1e-12);
        QVERIFY(std::fabs(warm.sched.interval_s - 0.020) < 1e-9);  // from step 2's end to step 4's
        QVERIFY(warm.sched.others_cores < 1e-9);
        QCOMPARE(warm.host_cores, 2.0);
        const CalibrationFit first_only = fit_calibration(ct, layout.cluster, layout.training.dtype, &layout);
        QCOMPARE(first_only.sched.steps, 6);
        QVERIFY(first_only.sched.compute_on_cpu_s > 0.0009);
        QVERIFY(first_only.sched.others_cores > 0.25);  // step 2's other process is counted
    }

    void merge_aligns_clocks_at_the_barrier() {
        const auto a = temp_path(dir_, "rank0.sqlite"), b = temp_path(dir_, "rank1.sqlite");
        write_rank(a, 0, 0);
        write_rank(b, 1, 5000);  // rank 1's clock runs 5000 ns ahead
        const auto out = temp_path(dir_, "merged.sqlite");
        MergeResult res;
        {
            TraceOutput o(out);
            res = merge_traces({a, b}, o.writer(), {});
            o.commit();
        }
        QCOMPARE(res.inputs[1].offset_ns, std::int64_t{-5000});
        QCOMPARE(res.inputs[1].alignment, std::string("barrier"));
        QCOMPARE(res.events, std::int64_t{8});
        auto r = TraceReader::open(out);
        QCOMPARE(r.tracks().size(), std::size_t{6});
        std::map<int, std::int64_t> first_gemm;
        r.for_each_event([&](const TraceEvent& e) {
            if (e.name == "gemm" && !first_gemm.count(e.rank)) first_gemm[e.rank] = e.start_ns;
        });
        QCOMPARE(first_gemm[0], std::int64_t{0});
        QCOMPARE(first_gemm[1], std::int64_t{0});  // aligned
        QCOMPARE(r.ranks()[1].clock_offset_ns, std::int64_t{-5000});
        QCOMPARE(compute_stats(r).ranks.size(), std::size_t{2});
    }

    void merge_refuses_mixed_runs_and_duplicate_ranks() {
        const auto a = temp_path(dir_, "m0.sqlite"), b = temp_path(dir_, "m1.sqlite"), c = temp_path(dir_, "m2.sqlite");
        write_rank(a, 0, 0, "run-1");
        write_rank(b, 1, 0, "run-2");
        write_rank(c, 0, 0, "run-1");
        auto expect = [&](const std::vector<std::string>& in, const char* text) {
            bool threw = false;
            try {
                TraceOutput o(temp_path(dir_, "never.sqlite"));
                merge_traces(in, o.writer(), {});
            } catch (const InputError& e) {
                threw = true;
                const auto msg = e.issues().front().to_string();
                QVERIFY2(msg.find(text) != std::string::npos, msg.c_str());
            }
            QVERIFY(threw);
            QVERIFY(!std::filesystem::exists(temp_path(dir_, "never.sqlite")));
        };
        expect({a, b}, "different run");
        expect({a, c}, "rank 0 is also in");
    }

    void chrome_export_reads_back() {
        const auto in = temp_path(dir_, "exp.sqlite");
        write_rank(in, 0, 0);
        const auto out = temp_path(dir_, "exp.json");
        const auto r = export_chrome_trace(TraceReader::open(in), out);
        QCOMPARE(r.events, std::int64_t{4});
        const auto j = load_json(out);
        int x = 0;
        for (const auto& e : j["traceEvents"]) {
            if (e["ph"] != "X") continue;
            ++x;
            if (e["name"] == "all_reduce(dp)") {
                QCOMPARE(e["ts"].get<double>(), 0.05);
                QCOMPARE(e["dur"].get<double>(), 0.1);
                QCOMPARE(e["args"]["bytes"].get<std::int64_t>(), std::int64_t{1000000});
                QCOMPARE(e["cat"].get<std::string>(), std::string("communication"));
            }
        }
        QCOMPARE(x, 4);
    }

    void cpu_collector_records_spans() {
        const auto path = temp_path(dir_, "cpu.sqlite");
        {
            auto w = TraceWriter::create(path);
            CpuCollector cpu(*w, 3, 4);
            const int t = cpu.track(TrackKind::ComputeStream, 0, "compute");
            QCOMPARE(cpu.track(TrackKind::ComputeStream, 0, "compute"), t);
            {
                CpuSpan s(cpu, t, EventKind::Compute, "block.0.mlp.fwd");
                s.event().flops = 123;
            }
            w->close();
        }
        auto r = TraceReader::open(path);
        QCOMPARE(r.run_info().clock_domain, std::string("steady"));
        QCOMPARE(r.event_count(), std::int64_t{1});
        r.for_each_event([](const TraceEvent& e) {
            QCOMPARE(e.rank, 3);
            QVERIFY(e.end_ns >= e.start_ns);
            QCOMPARE(e.flops, 123.0);
        });
    }

    void range_context_collective_bytes_and_group() {
        auto c = parse_range_context("all_reduce(tp) bytes=4096 group=2");
        QCOMPARE(c.bytes, std::int64_t{4096});
        QCOMPARE(c.group_size, 2);
        QCOMPARE(c.step, -1);
        c = parse_range_context("layer 3 fwd");
        QCOMPARE(c.bytes, std::int64_t{-1});
        c = parse_range_context("reduce_scatter(dp) bytes=17179869184 group=64");  // 16 GiB
        QCOMPARE(c.bytes, std::int64_t{17179869184});
        QCOMPARE(c.group_size, 64);
    }

    // What the CUPTI collector gathers (written by hand here: no GPU needed) becomes trace
    // events: tracks per device stream and rank, NCCL kernels as communication with bytes and
    // group from the collective's range, (step, micro-batch, layer) from the ranges open at
    // the launch, the ranges as markers on the launching thread's rank.
    void gpu_activity_becomes_trace_events() {
        GpuActivity a;
        a.ranges = {{11, 0, 1000, "step 1"},
                    {11, 10, 900, "mb 0"},
                    {11, 20, 300, "layer 2 fwd"},
                    {11, 400, 450, "all_reduce(tp) bytes=4096 group=2"},
                    {22, 0, 1000, "step 1"},
                    {22, 100, 200, "layer 3 bwd"}};
        a.launches = {{11, 1, 30, 35}, {11, 2, 410, 415}, {11, 3, 500, 505}, {22, 4, 120, 125}};
        const std::string nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
        QCOMPARE(event_kind_of_kernel(nccl), EventKind::Communication);
        a.device = {{0, 7, EventKind::Compute, "sm90_xmma_gemm_f32f32", 40, 90, 0, 1},
                    {0, 9, event_kind_of_kernel(nccl), nccl, 420, 480, 0, 2},
                    {0, 7, EventKind::Memcpy, "Memcpy HtoD", 510, 520, 256, 3},
                    {1, 7, EventKind::Compute, "rmsnorm_fwd", 130, 150, 0, 4},
                    {1, 7, EventKind::Memset, "Memset", 600, 610, 64, 99}};  // launch not recorded
        RecordingSink sink;
        QCOMPARE(write_gpu_activity(a, sink, {0, 1}, 0), std::size_t{11});

        const auto& gemm = sink.named("sm90_xmma_gemm_f32f32");
        QCOMPARE(gemm.rank, 0);
        QCOMPARE(gemm.step, 1);
        QCOMPARE(gemm.micro_batch, 0);
        QCOMPARE(gemm.layer, 2);
        const auto& comm = sink.named(nccl);
        QCOMPARE(comm.kind, EventKind::Communication);
        QCOMPARE(comm.bytes, std::int64_t{4096});
        QCOMPARE(comm.group_size, 2);
        QCOMPARE(comm.layer, -1);
        QCOMPARE(sink.tracks.at(static_cast<std::size_t>(comm.track)).kind, TrackKind::CommStream);
        QCOMPARE(sink.tracks.at(static_cast<std::size_t>(gemm.track)).kind, TrackKind::ComputeStream);
        QCOMPARE(sink.named("Memcpy HtoD").bytes, std::int64_t{256});  // a copy keeps its own bytes
        const auto& norm = sink.named("rmsnorm_fwd");
        QCOMPARE(norm.rank, 1);
        QCOMPARE(norm.layer, 3);
        QCOMPARE(sink.named("Memset").rank, 1);
        // Its launch (correlation 99) was not recorded though launches were: queued before
        // the capture, in no step, although a step range was open when it ran.
        QCOMPARE(sink.named("Memset").step, -1);
        // Markers: on the rank whose device ran the thread's launches.
        QCOMPARE(sink.named("layer 3 bwd").kind, EventKind::Marker);
        QCOMPARE(sink.named("layer 3 bwd").rank, 1);
        QCOMPARE(sink.named("layer 2 fwd").rank, 0);
        int host = 0, streams = 0;
        for (const auto& t : sink.tracks) (t.kind == TrackKind::Host ? host : streams)++;
        QCOMPARE(host, 2);
        QCOMPARE(streams, 3);  // (0,7), (0,9), (1,7)
    }

    void cupti_collector_reports_no_gpu_cleanly() {
        std::string why;
        if (CuptiCollector::available(&why)) QSKIP("a GPU is present: covered by the gpu suite");
        QVERIFY(!why.empty());
        // In a CUDA build the test loads the real plugin (MESHWORK_CUDA_PLUGIN), which finds
        // no driver here; otherwise the plugin is missing. Either way the reason says which.
        QVERIFY2(why.find("no GPU") != std::string::npos || why.find("CUDA plugin") != std::string::npos,
                 why.c_str());
        auto w = TraceWriter::create(temp_path(dir_, "cupti.sqlite"));
        CuptiCollector c(*w, 0);
        QVERIFY_THROWS_EXCEPTION(RuntimeError, c.start());
        c.stop();
        w->close();
    }

    void cli_stats_import_merge_export() {
        const auto a = temp_path(dir_, "c0.sqlite"), b = temp_path(dir_, "c1.sqlite");
        write_rank(a, 0, 0);
        write_rank(b, 1, 700);
        auto r = run_cli(args({"stats", a, "--json"}));
        QVERIFY2(r.exit_code == 0, r.err.constData());
        auto j = nlohmann::json::parse(r.out.toStdString());
        for (const char* k : {"compute_s", "comm_s", "idle_s", "overlap_fraction", "bubble_fraction"}) {
            QVERIFY2(j["ranks"][0].contains(k), k);
        }
        QVERIFY(j["collectives"][0].contains("algbw_gbps") && j["collectives"][0].contains("busbw_gbps"));
        QVERIFY(j["kernels"].is_array());
        r = run_cli(args({"stats", a}));
        QCOMPARE(r.exit_code, 0);
        QVERIFY(r.out.contains("all_reduce"));

        const auto merged = temp_path(dir_, "cli_merged.sqlite");
        r = run_cli(args({"merge", a, b, "--out", merged, "--json"}));
        QVERIFY2(r.exit_code == 0, r.err.constData());
        j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["inputs"][1]["offset_ns"].get<std::int64_t>(), std::int64_t{-700});
        QCOMPARE(j["world_size"].get<int>(), 2);

        const auto json_out = temp_path(dir_, "cli.json");
        r = run_cli(args({"export-trace", merged, "--out", json_out, "--json"}));
        QVERIFY2(r.exit_code == 0, r.err.constData());
        QCOMPARE(nlohmann::json::parse(r.out.toStdString())["events"].get<int>(), 8);
        QVERIFY(load_json(json_out)["traceEvents"].is_array());

        const auto imported = temp_path(dir_, "cli_imported.sqlite");
        r = run_cli(args({"import-trace", std::string(MESHWORK_TEST_FIXTURES) + "/profiler/kineto_rank1.json",
                          "--out", imported, "--json"}));
        QVERIFY2(r.exit_code == 0, r.err.constData());
        j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["format"].get<std::string>(), std::string("kineto"));
        QCOMPARE(j["rank"].get<int>(), 1);
        r = run_cli(args({"stats", imported, "--json"}));
        QVERIFY2(r.exit_code == 0, r.err.constData());
        j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["collectives"][0]["bytes"].get<std::int64_t>(), std::int64_t{2097152});
        QCOMPARE(j["collectives"][0]["group_size"].get<int>(), 2);

        for (const char* verb : {"stats", "merge", "import-trace", "export-trace", "compare", "calibrate"}) {
            r = run_cli(args({verb, "--help"}));
            QVERIFY2(r.exit_code == 0, verb);
            QVERIFY2(r.out.contains("Exit codes"), verb);
        }
    }

    // Issue 29's messages: import-trace's refusal of mixed runs advises a flag it accepts; a
    // profile without device work is imported with a word why stats has no rank figures;
    // the text table shortens a kilobytes-long template name, --json keeps it whole.
    void cli_import_and_stats_messages() {
        auto kineto = [&](const std::string& name, const std::string& body) {
            const auto path = temp_path(dir_, name);
            std::ofstream(path) << body;
            return path;
        };
        const std::string kernel = R"({"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":10,"dur":5,"args":{"device":0,"stream":7}})";
        const auto a = kineto("mixed_rank0.json",
                              R"({"distributedInfo":{"rank":0,"world_size":2},"traceEvents":[)" + kernel + "]}");
        const auto b = kineto("mixed_rank1.json",
                              R"({"distributedInfo":{"rank":1,"world_size":4},"traceEvents":[)" + kernel + "]}");
        auto r = run_cli(args({"import-trace", a, b, "--out", temp_path(dir_, "mixed.sqlite")}));
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("--allow-mixed"), r.err.constData());
        r = run_cli(args({"import-trace", a, b, "--allow-mixed", "--out", temp_path(dir_, "mixed.sqlite")}));
        QVERIFY2(r.exit_code == 0, r.err.constData());

        const auto host = kineto("host_only.json",
                                 R"({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":5}]})");
        const auto host_trace = temp_path(dir_, "host_only.sqlite");
        r = run_cli(args({"import-trace", host, "--out", host_trace}));
        QVERIFY2(r.exit_code == 0, r.err.constData());
        QVERIFY2(r.err.contains("no device activity"), r.err.constData());
        r = run_cli(args({"stats", host_trace}));
        QCOMPARE(r.exit_code, 0);
        QVERIFY2(r.out.contains("no rank figures") && r.out.contains("no device work"), r.out.constData());

        std::string huge = "void dpsk::ep::internode::combine<";
        for (int i = 0; i < 200; ++i) huge += "cute::C<" + std::to_string(i) + ">, ";
        huge += "int>(int4*, float*)";
        const auto named = kineto("long_name.json", R"({"traceEvents":[{"ph":"X","cat":"kernel","name":")" + huge +
                                                        R"(","pid":0,"tid":7,"ts":10,"dur":5,"args":{"device":0,"stream":7}}]})");
        const auto named_trace = temp_path(dir_, "long_name.sqlite");
        QCOMPARE(run_cli(args({"import-trace", named, "--out", named_trace})).exit_code, 0);
        r = run_cli(args({"stats", named_trace}));
        QCOMPARE(r.exit_code, 0);
        QVERIFY2(r.out.contains("void dpsk::ep::internode::combine<...>(...)"), r.out.constData());
        QVERIFY(!r.out.contains("cute::C<199>"));
        r = run_cli(args({"stats", named_trace, "--json"}));
        QCOMPARE(nlohmann::json::parse(r.out.toStdString())["kernels"][0]["name"].get<std::string>(), huge);
    }

    void cli_compare_checks_max_error() {
        const auto pred = temp_path(dir_, "pred.sqlite"), same = temp_path(dir_, "same.sqlite");
        write_rank(pred, 0, 0);
        write_rank(same, 0, 123);  // the same timeline, shifted
        auto r = run_cli(args({"compare", pred, same, "--json", "--max-error", "0.01"}));
        QVERIFY2(r.exit_code == 0, (r.out + r.err).constData());
        auto j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["max_abs_error"].get<double>(), 0.0);
        QVERIFY(j["passed"].get<bool>());
        QCOMPARE(j["categories"][0]["category"].get<std::string>(), std::string("step"));
        QCOMPARE(j["stages"].size(), std::size_t{1});

        // Measured compute twice as long: compute error -50%, exit 3 at 10%.
        const auto slow = temp_path(dir_, "slow.sqlite");
        {
            auto w = TraceWriter::create(slow);
            const int c = w->add_track({0, TrackKind::ComputeStream, 0, "compute"});
            w->add_event(make_event(c, EventKind::Compute, "gemm", 0, 400));
            w->close();
        }
        r = run_cli(args({"compare", pred, slow, "--json", "--max-error", "0.1"}));
        QCOMPARE(r.exit_code, 3);
        j = nlohmann::json::parse(r.out.toStdString());
        QVERIFY(!j["passed"].get<bool>());
        QCOMPARE(j["categories"][1]["error"].get<double>(), -0.5);
        QCOMPARE(run_cli(args({"compare", pred, slow})).exit_code, 0);  // no check asked for
    }

    void cli_calibrate_fits_and_writes_a_cluster() {
        // 10 GEMMs of 1e12 FLOPs in 2 ms each (500 TFLOP/s) and all-reduces over 8 ranks of two
        // sizes with t = 10 us + busbytes / 200 GB/s.
        const auto path = temp_path(dir_, "measured.sqlite");
        {
            auto w = TraceWriter::create(path);
            const int c = w->add_track({0, TrackKind::ComputeStream, 0, "compute"});
            const int m = w->add_track({0, TrackKind::CommStream, 0, "comm:dp"});
            std::int64_t t = 0;
            for (int i = 0; i < 10; ++i) {
                auto e = make_event(c, EventKind::Compute, "gemm", t, t + 2000000);
                e.flops = 1e12;
                w->add_event(e);
                t += 2000000;
            }
            for (std::int64_t bytes : {std::int64_t{1} << 20, std::int64_t{64} << 20}) {
                const double bus = static_cast<double>(bytes) * 2.0 * 7.0 / 8.0;
                const auto dur = static_cast<std::int64_t>((10e-6 + bus / 200e9) * 1e9);
                auto e = make_event(m, EventKind::Communication, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", t, t + dur);
                e.bytes = bytes;
                e.group_size = 8;
                w->add_event(e);
                t += dur;
            }
            w->close();
        }
        const auto out = temp_path(dir_, "calibrated.json");
        auto r = run_cli(args({"calibrate", path, "--cluster", "dgx-h100", "--dtype", "bf16", "--out", out, "--json"}));
        QVERIFY2(r.exit_code == 0, (r.out + r.err).constData());
        const auto j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["fit"]["achieved_flops_per_s"].get<double>(), 5e14);
        const double eff = j["fit"]["gemm_efficiency"].get<double>();
        QVERIFY(eff > 0.3 && eff < 0.8);  // 500 TFLOP/s of H100's ~989 dense bf16
        QVERIFY(j["fit"]["intra_node"]["latency_fitted"].get<bool>());
        QVERIFY(std::fabs(j["fit"]["intra_node"]["bus_bandwidth_bytes_per_s"].get<double>() / 200e9 - 1) < 0.01);
        // The model's latency is per ring step: an all-reduce over 8 ranks takes 2·7 of them.
        QVERIFY(std::fabs(14 * j["fit"]["intra_node"]["latency_s"].get<double>() / 10e-6 - 1) <
                0.05);
        QCOMPARE(j["cluster"]["efficiency"]["gemm"].get<double>(), eff);
        QVERIFY(j["error_before"].is_null());  // no layout given
        // The written file is a cluster JSON that the cluster reader accepts.
        QVERIFY_THROWS_NO_EXCEPTION(load_cluster(out));
        QVERIFY(!run_cli(args({"calibrate", path, "--out", out})).err.isEmpty());  // no cluster known: exit 2
        QCOMPARE(run_cli(args({"calibrate", path, "--out", out})).exit_code, 2);
    }

    void cli_calibrate_shows_error_before_and_after_with_a_layout() {
        const std::string layout = std::string(MESHWORK_RESOURCES_DIR) + "/layouts/tiny-cpu.json";
        const auto sim = temp_path(dir_, "sim.sqlite");
        auto r = run_cli(args({"simulate", layout, "--trace", sim}));
        if (r.exit_code != 0) QSKIP(("simulate is not available: " + r.err).constData());
        const auto out = temp_path(dir_, "cal2.json");
        r = run_cli(args({"calibrate", sim, "--layout", layout, "--out", out, "--json"}));
        QVERIFY2(r.exit_code == 0, (r.out + r.err).constData());
        const auto j = nlohmann::json::parse(r.out.toStdString());
        QVERIFY(j["error_before"].is_object());
        QVERIFY(j["error_after"].is_object());
        // Predicted against its own simulation: no error before calibration.
        QVERIFY(std::fabs(j["error_before"]["categories"][0]["error"].get<double>()) < 1e-9);
        r = run_cli(args({"compare", sim, sim, "--max-error", "0", "--json"}));
        QCOMPARE(r.exit_code, 0);
        QCOMPARE(nlohmann::json::parse(r.out.toStdString())["stage_mapping"].get<std::string>(), std::string("layout"));
    }

    // Ranks sharing a host's cores, in an older trace (no scheduler counters): a
    // "measurement" simulated on a host with one core for four ranks, calibrated from a
    // cluster that does not describe the host, gives about that one core back (ranks x a
    // rank's compute / the step) and the measured step; a GPU cluster (ranks on devices of
    // their own) fits no host cores.
    void calibrate_fits_the_host_cores_a_run_got() {
        Layout layout = load_layout(std::string(MESHWORK_RESOURCES_DIR) + "/layouts/tiny-cpu.json");
        QCOMPARE(layout.cluster.host_cores, 0.0);
        Layout one_core = layout;
        one_core.cluster.host_cores = 1;
        const auto path = temp_path(dir_, "one-core.sqlite");
        {
            auto w = TraceWriter::create(path);
            simulate_layout(one_core, w.get());
            w->close();
        }
        const double measured_step = simulate_layout(one_core).estimate.step_time_s;
        QVERIFY(measured_step > simulate_layout(layout).estimate.step_time_s * 1.5);
        const auto trace = TraceReader::open(path);
        const CalibrationFit fit = fit_calibration(trace, layout.cluster, layout.training.dtype, &layout);
        QVERIFY(!fit.sched.recorded);
        QCOMPARE(fit.recorded_host_cores, 1.0);
        // The one core's throughput bound: the simulated step is a little longer (its waits
        // inside collectives do not all overlap another rank's compute).
        QVERIFY2(fit.host_cores > 0.8 && fit.host_cores <= 1.0, qPrintable(QString::number(fit.host_cores)));
        // A rank's step in the trace runs from its first event: later stages start a little
        // after the step does.
        QVERIFY2(std::fabs(fit.measured_step_s - measured_step) < 0.03 * measured_step,
                 qPrintable(QString("%1 vs %2 s, cores %3").arg(fit.measured_step_s).arg(measured_step).arg(fit.host_cores)));
        Layout calibrated = layout;
        calibrated.cluster = apply_calibration(layout.cluster, fit);
        const double predicted = simulate_layout(calibrated).estimate.step_time_s;
        QVERIFY2(std::fabs(predicted / measured_step - 1) < 0.15,
                 qPrintable(QString("%1 vs %2 s").arg(predicted).arg(measured_step)));
        // Ranks on devices of their own do not share the host's cores.
        ClusterSpec gpus = layout.cluster;
        gpus.gpu.kind = "h100-sxm";
        QCOMPARE(fit_calibration(trace, gpus, layout.training.dtype, &layout).host_cores, 0.0);
    }

    // A CPU run's scheduler counters (the engine's "scheduler" track): the compute is fitted
    // on the rank threads' CPU time inside compute ops (not on the spans, which also hold
    // their waits for a core), and the host cores are the recorded ones less what other
    // processes used during the steps. Synthetic: the tiny layout simulated on a 2-core
    // host (its compute spans are the model's, its run info records 2 cores), with counters
    // written as the engine writes them for 3 steps of 10 ms: each rank computing 80 % of
    // its spans' time, the process using 1.5 cores, and others 0 (quiet), 1.2, or 3 cores.
    void calibrate_fits_host_cores_from_the_scheduler_counters() {
        Layout layout = load_layout(std::string(MESHWORK_RESOURCES_DIR) + "/layouts/tiny-cpu.json");
        Layout two_cores = layout;
        two_cores.cluster.host_cores = 2;
        const double span_compute = [&] {
            RecordingSink sink;
            simulate_layout(two_cores, &sink);
            std::map<int, double> per_rank;
            for (const auto& e : sink.events) {
                if (e.kind == EventKind::Compute) per_rank[e.rank] += static_cast<double>(e.end_ns - e.start_ns) * 1e-9;
            }
            double sum = 0;
            for (const auto& [rank, v] : per_rank) sum += v;
            return sum / static_cast<double>(per_rank.size());
        }();
        auto fit_with = [&](const std::string& name, double others_cores, bool host_accounting, double niced_cores = 0,
                            bool comm_cpu = false) {
            const auto path = temp_path(dir_, name + ".sqlite");
            {
                auto w = TraceWriter::create(path);
                simulate_layout(two_cores, w.get());
                for (int rank : {0, 1}) {  // the simulated trace's ranks (one a stage)
                    const int track = w->add_track({rank, TrackKind::Host, 0, "scheduler"});
                    for (int step = 1; step <= 3; ++step) {
                        const std::int64_t at = step * 10'000'000;
                        w->add_counter(rank, track, "thread.on_cpu_s", at, 0.9 * span_compute);
                        w->add_counter(rank, track, "thread.run_queue_wait_s", at, 0.4 * span_compute);
                        w->add_counter(rank, track, "thread.timeslices", at, 50);
                        w->add_counter(rank, track, "thread.compute_on_cpu_s", at, 0.8 * span_compute);
                        if (comm_cpu) w->add_counter(rank, track, "thread.comm_on_cpu_s", at, 0.04 * span_compute);
                        if (rank == 0 && host_accounting) {
                            const double t = step * 0.010;
                            w->add_counter(rank, track, "process.cpu_s", at, 1.0 + 1.5 * t);
                            w->add_counter(rank, track, "host.busy_cpu_s", at,
                                           500.0 + (1.5 + others_cores + niced_cores) * t);
                            w->add_counter(rank, track, "host.niced_cpu_s", at, 100.0 + niced_cores * t);
                        }
                    }
                }
                w->close();
            }
            const auto trace = TraceReader::open(path);
            return fit_calibration(trace, layout.cluster, layout.training.dtype, &layout);
        };
        const CalibrationFit quiet = fit_with("quiet", 0.0, true);
        QVERIFY(quiet.sched.recorded && quiet.sched.schedstat && quiet.sched.host_recorded);
        QCOMPARE(quiet.recorded_host_cores, 2.0);
        QCOMPARE(quiet.host_cores, 2.0);  // nobody else used the cores: the host keeps them all
        QVERIFY(std::fabs(quiet.sched.interval_s - 0.020) < 1e-9);  // from the first step's end
        QVERIFY(std::fabs(quiet.sched.process_cores - 1.5) < 1e-9);
        QVERIFY(quiet.sched.others_cores < 1e-9);
        QCOMPARE(quiet.sched.steps, 4);  // 2 ranks x 2 steps after the first
        QVERIFY(std::fabs(quiet.measured_compute_s - 0.8 * span_compute) < 1e-9 * span_compute);
        QVERIFY(std::fabs(quiet.sched.compute_span_s - span_compute) < 0.02 * span_compute);
        QVERIFY(std::fabs(quiet.sched.compute_core_wait_s - (quiet.sched.compute_span_s - quiet.measured_compute_s)) < 1e-12);
        QVERIFY(std::fabs(quiet.sched.run_queue_wait_s - 0.4 * span_compute) < 1e-9 * span_compute);
        QVERIFY(quiet.sched.predicted_core_wait_s > 0);  // 4 threads on 2 cores wait for each other
        // Compute was fitted on the CPU time: the calibrated pace is 1/0.8 of the span-based one.
        QVERIFY(!quiet.gemm_sizes.fitted);  // the simulator's spans are not the engine's operations
        QVERIFY2(std::fabs(quiet.compute_scale - quiet.predicted_compute_s / (0.8 * span_compute)) < 1e-9,
                 qPrintable(QString::number(quiet.compute_scale)));

        const CalibrationFit loaded = fit_with("loaded", 1.2, true);
        QVERIFY(std::fabs(loaded.sched.others_cores - 1.2) < 1e-6);
        QVERIFY2(std::fabs(loaded.host_cores - 0.8) < 1e-6, qPrintable(QString::number(loaded.host_cores)));
        QCOMPARE(apply_calibration(layout.cluster, loaded).host_cores, loaded.host_cores);
        // The loaded host predicts a slower step than the quiet one.
        Layout q = layout, l = layout;
        q.cluster = apply_calibration(layout.cluster, quiet);
        l.cluster = apply_calibration(layout.cluster, loaded);
        QVERIFY(simulate_layout(l).estimate.step_time_s > simulate_layout(q).estimate.step_time_s);

        QCOMPARE(fit_with("swamped", 3.0, true).host_cores, 0.05);  // at least a sliver
        // Processes at a positive nice (builds at nice 19) yield to the run: not others' use.
        const CalibrationFit niced = fit_with("niced", 0.0, true, 0.45);
        QVERIFY(std::fabs(niced.sched.niced_cores - 0.45) < 1e-6);
        QVERIFY(niced.sched.others_cores < 1e-6);
        QCOMPARE(niced.host_cores, 2.0);
        QVERIFY2(std::fabs(fit_with("niced-and-others", 0.5, true, 0.45).host_cores - 1.5) < 1e-6, "nice 0 others count");
        // Scheduler counters without the host's accounting: no evidence of others.
        const CalibrationFit no_host = fit_with("no-host", 0.0, false);
        QVERIFY(no_host.sched.recorded && !no_host.sched.host_recorded);
        QCOMPARE(no_host.host_cores, 2.0);

        // The threads' CPU outside compute ops (on a core 0.9 of the spans, computing 0.8) per
        // layer-pass: a TP2 x PP2 rank runs 2 layers x 4 micro-batches a step.
        QCOMPARE(layout.model.num_layers / layout.parallel.mesh.pp * layout.num_micro_batches(), 8);
        QVERIFY2(std::fabs(quiet.host_cpu_per_layer_pass_s - 0.1 * span_compute / 8) < 1e-9 * span_compute,
                 qPrintable(QString::number(quiet.host_cpu_per_layer_pass_s)));
        QCOMPARE(q.cluster.host_cpu_per_layer_pass_s, quiet.host_cpu_per_layer_pass_s);
        // The CPU inside collectives (thread.comm_on_cpu_s, 0.04 of the spans) is in the
        // collectives' spans, which the links are fitted on: not counted again per layer-pass.
        const CalibrationFit with_comm = fit_with("comm-cpu", 0.0, true, 0, true);
        QVERIFY(with_comm.sched.comm_recorded && !quiet.sched.comm_recorded);
        QVERIFY(std::fabs(with_comm.sched.comm_on_cpu_s - 0.04 * span_compute) < 1e-9 * span_compute);
        QVERIFY2(std::fabs(with_comm.host_cpu_per_layer_pass_s - 0.06 * span_compute / 8) < 1e-9 * span_compute,
                 qPrintable(QString::number(with_comm.host_cpu_per_layer_pass_s)));
        QCOMPARE(calibration_to_json(with_comm)["scheduler"]["comm_on_cpu_s"].get<double>(), with_comm.sched.comm_on_cpu_s);
        Layout q_no_overhead = q;
        q_no_overhead.cluster.host_cpu_per_layer_pass_s = 0;
        QVERIFY(simulate_layout(q).estimate.step_time_s > simulate_layout(q_no_overhead).estimate.step_time_s);

        const auto j = calibration_to_json(loaded);
        QCOMPARE(j["host_cpu_per_layer_pass_s"].get<double>(), loaded.host_cpu_per_layer_pass_s);
        QCOMPARE(j["scheduler"]["others_cores"].get<double>(), loaded.sched.others_cores);
        QCOMPARE(j["scheduler"]["compute_on_cpu_s"].get<double>(), loaded.sched.compute_on_cpu_s);
        QVERIFY(j["scheduler"]["recorded"].get<bool>());
    }

    // calibrate fits the GEMM efficiency curve: a "measurement" of the tiny model's GEMM
    // operations, named as the CPU engine names them, timed on a device whose curve is known
    // (gemm 0.3, gemm_half_dim 24: t = F / (peak · 0.3 · d/(d + 24))), with a spread of ±5 %
    // and one preempted instance in eleven (3x), is fitted back: gemm within 5 %, the half
    // size within 15 %. The shapes are written out here by hand from the model's sizes
    // (hidden 64, 4 heads of 16 and 2 KV heads, SwiGLU 128, vocabulary 256; micro-batch 2 x
    // sequence 32 = 64 rows), not taken from the cost model's shape code the fit uses. At
    // tp 1 every operation's GEMMs have d = 64: one size, no curve; calibrate says so and
    // falls back to one scale, leaving gemm_half_dim as it was.
    void calibrate_fits_the_gemm_efficiency_curve() {
        const double gemm = 0.3, half = 24, peak = 200e9;  // cpu.json's fp32 peak
        struct Gemm {
            double m, n, k;
        };
        struct Op {
            std::string name;  // without "block.N." and ".fwd"
            std::vector<Gemm> gemms;
            bool per_block;
        };
        auto ops_at = [](double tp) {
            return std::vector<Op>{
                {"attention.qkv", {{64, (64 + 2 * 32) / tp, 64}}, true},
                {"attention.proj", {{64, 64, 64 / tp}}, true},
                {"mlp", {{64, 2 * 128 / tp, 64}, {64, 64, 128 / tp}}, true},
                {"lm_head", {{64, 256 / tp, 64}}, false},
            };
        };
        auto write = [&](const std::string& path, double tp) {
            auto w = TraceWriter::create(path);
            const int c = w->add_track({0, TrackKind::ComputeStream, 0, "compute"});
            std::int64_t at = 0;
            int instance = 0;
            const double spread[] = {1.0, 0.95, 1.05, 0.97, 1.03};
            for (int step = 0; step < 4; ++step) {
                for (int mb = 0; mb < 4; ++mb) {
                    for (const char* dir : {".fwd", ".bwd"}) {
                        const double passes = std::string(dir) == ".bwd" ? 2.0 : 1.0;
                        for (const auto& op : ops_at(tp)) {
                            for (int block = 0; block < (op.per_block ? 2 : 1); ++block) {
                                double flops = 0, seconds = 0;
                                for (const auto& g : op.gemms) {
                                    const double f = 2 * g.m * g.n * g.k * passes;
                                    const double d = std::min({g.m, g.n, g.k});
                                    flops += f;
                                    seconds += f / (peak * gemm * d / (d + half));
                                }
                                seconds *= spread[instance % 5] * (instance % 11 == 10 ? 3.0 : 1.0);
                                ++instance;
                                const std::string name =
                                    (op.per_block ? "block." + std::to_string(block) + "." : std::string()) +
                                    op.name + dir;
                                auto e = make_event(c, EventKind::Compute, name, at,
                                                    at + static_cast<std::int64_t>(seconds * 1e9));
                                e.flops = flops;
                                e.step = step;
                                e.micro_batch = mb;
                                w->add_event(e);
                                at = e.end_ns + 1000;
                            }
                        }
                    }
                }
            }
            w->close();
        };
        Layout layout = load_layout(std::string(MESHWORK_RESOURCES_DIR) + "/layouts/tiny-cpu.json");
        QCOMPARE(layout.parallel.mesh.tp, 2);
        QCOMPARE(layout.cluster.gpu.peak_flops(layout.training.dtype), peak);
        const auto path = temp_path(dir_, "gemm-curve.sqlite");
        write(path, 2);
        const auto trace = TraceReader::open(path);
        const GemmSizeFit sizes = fit_gemm_sizes(trace, layout, layout.training.dtype, -1);
        QVERIFY2(sizes.fitted, sizes.reason.c_str());
        QCOMPARE(sizes.sizes, 2);  // d = 64 (QKV, MLP, head) and 32 (output projection)
        QCOMPARE(sizes.unmatched, std::int64_t{0});
        QCOMPARE(sizes.op_events, std::int64_t{4 * 4 * 2 * 7});
        QVERIFY2(std::fabs(sizes.gemm_efficiency / gemm - 1) < 0.05,
                 qPrintable(QString::number(sizes.gemm_efficiency)));
        QVERIFY2(std::fabs(sizes.gemm_half_dim / half - 1) < 0.15,
                 qPrintable(QString::number(sizes.gemm_half_dim)));
        // Through calibrate: the curve goes into the calibrated cluster and its JSON.
        const CalibrationFit fit = fit_calibration(trace, layout.cluster, layout.training.dtype, &layout);
        QVERIFY(fit.gemm_sizes.fitted);
        const ClusterSpec calibrated = apply_calibration(layout.cluster, fit);
        QCOMPARE(calibrated.efficiency.gemm, sizes.gemm_efficiency);
        QCOMPARE(calibrated.efficiency.gemm_half_dim, sizes.gemm_half_dim);
        QCOMPARE(cluster_to_json(calibrated)["efficiency"]["gemm_half_dim"].get<double>(), sizes.gemm_half_dim);
        QCOMPARE(calibration_to_json(fit)["gemm_size_fit"]["fitted"].get<bool>(), true);

        // One size only (tp 1): not fitted, with the reason, and one scale instead.
        Layout tp1 = layout;
        tp1.parallel.mesh.tp = 1;
        tp1.parallel.mesh.dp = 2;
        const auto path1 = temp_path(dir_, "gemm-one-size.sqlite");
        write(path1, 1);
        const auto trace1 = TraceReader::open(path1);
        const CalibrationFit one = fit_calibration(trace1, tp1.cluster, tp1.training.dtype, &tp1);
        QVERIFY(!one.gemm_sizes.fitted);
        QCOMPARE(one.gemm_sizes.sizes, 1);
        QVERIFY2(one.gemm_sizes.reason.find("distinct size") != std::string::npos, one.gemm_sizes.reason.c_str());
        QVERIFY(one.compute_scale > 0);
        const ClusterSpec scaled = apply_calibration(tp1.cluster, one);
        QCOMPARE(scaled.efficiency.gemm_half_dim, tp1.cluster.efficiency.gemm_half_dim);
        QCOMPARE(scaled.efficiency.gemm, std::clamp(tp1.cluster.efficiency.gemm * one.compute_scale, 1e-3, 1.0));

        // With a curve measured on the host (calibrate --measure-gemm): its half size wins over
        // the trace's size fit (24 above), and one scale fitted to the trace sets the level, so
        // that the calibrated cluster re-predicts the trace's compute.
        cost::GemmCurve host;
        host.fitted = true;
        host.gemm_efficiency = 0.44;
        host.gemm_half_dim = 6;
        const CalibrationFit measured_curve =
            fit_calibration(trace, layout.cluster, layout.training.dtype, &layout, kDefaultWarmupSteps, &host);
        QVERIFY(!measured_curve.gemm_sizes.fitted);
        QVERIFY2(measured_curve.gemm_sizes.reason.find("--measure-gemm") != std::string::npos,
                 measured_curve.gemm_sizes.reason.c_str());
        QVERIFY(measured_curve.compute_scale > 0);
        const ClusterSpec on_host = apply_calibration(layout.cluster, measured_curve);
        QCOMPARE(on_host.efficiency.gemm_half_dim, 6.0);
        QCOMPARE(on_host.efficiency.gemm, std::clamp(0.44 * measured_curve.compute_scale, 1e-3, 1.0));
        QCOMPARE(calibration_to_json(measured_curve)["gemm_curve"]["gemm_half_dim"].get<double>(), 6.0);
        // Not fitted: the cluster keeps its half size.
        cost::GemmCurve none;
        const CalibrationFit without =
            fit_calibration(trace, layout.cluster, layout.training.dtype, &layout, kDefaultWarmupSteps, &none);
        QVERIFY(without.gemm_sizes.fitted);
        QCOMPARE(apply_calibration(layout.cluster, without).efficiency.gemm_half_dim, sizes.gemm_half_dim);
    }

    // The loop closes on this machine: a CPU run of the tiny model as TP2 x PP2 records its
    // collectives with bytes and group sizes, calibrate fits the in-process link and the
    // compute pace, and the calibrated prediction of a layout that never ran before
    // (DP2 x TP2: no pipeline, a data-parallel gradient all-reduce) is compared with a run
    // of it. Each layout runs five times and the fastest run counts (best of N, as timeit
    // does): this host is 2 shared cores under other builds, and one run of a layout can
    // take 2.5x as long as the next. On a host with fewer usable cores than the 4 ranks,
    // calibrate also fits the cores the ranks got (host_cores). Without calibration the
    // prediction is 60-85 % short; the calibrated errors of five layouts, and why no fixed
    // bound is asserted here, are in docs/BENCHMARKS.md.
    void cli_calibration_predicts_another_layout() {
        const std::string layout = std::string(MESHWORK_RESOURCES_DIR) + "/layouts/tiny-cpu.json";
        // One run of `extra`: its trace and mean step over ranks (0 when it failed).
        auto one_run = [&](const std::string& name, int i, const QStringList& extra) {
            const auto path = temp_path(dir_, name + "-" + std::to_string(i) + ".sqlite");
            QStringList a = args({"run", layout, "--steps", "8", "--profile", path});
            a += extra;
            auto r = run_cli(a);
            if (r.exit_code != 0) {
                qWarning("run failed: %s", r.err.constData());
                return std::pair<std::string, double>{path, 0.0};
            }
            r = run_cli(args({"stats", path, "--json"}));
            if (r.exit_code != 0) return std::pair<std::string, double>{path, 0.0};
            double step = 0;
            const auto ranks = nlohmann::json::parse(r.out.toStdString())["ranks"];
            for (const auto& k : ranks) step += k["step_s"].get<double>();
            return std::pair<std::string, double>{path, step / std::max<std::size_t>(1, ranks.size())};
        };
        // Five rounds of both layouts, alternating, so that a change in the machine's load
        // (other tests under ctest -j2) falls on both alike; the fastest run of each is kept.
        const QStringList other{"--tp", "2", "--pp", "1", "--dp", "2"};
        std::string measured, other_run;
        double best_source = 1e9, best_other = 1e9;
        for (int i = 0; i < 5; ++i) {
            const auto [source_path, source_step] = one_run("tp2pp2", i, {});
            if (source_step > 0 && source_step < best_source) best_source = source_step, measured = source_path;
            const auto [other_path, other_step] = one_run("dp2tp2", i, other);
            if (other_step > 0 && other_step < best_other) best_other = other_step, other_run = other_path;
        }
        QVERIFY(!measured.empty());
        // Every collective of the run carries bytes and a group size.
        auto r = run_cli(args({"stats", measured, "--json"}));
        QCOMPARE(r.exit_code, 0);
        for (const auto& c : nlohmann::json::parse(r.out.toStdString())["collectives"]) {
            QVERIFY(c["group_size"].get<int>() >= 2);
            QVERIFY(c["bytes"].get<std::int64_t>() > 0);
        }
        const auto cluster = temp_path(dir_, "cpu-calibrated.json");
        r = run_cli(args({"calibrate", measured, "--out", cluster, "--json"}));
        QVERIFY2(r.exit_code == 0, (r.out + r.err).constData());
        const auto fit = nlohmann::json::parse(r.out.toStdString())["fit"];
        QVERIFY(fit["intra_node"]["fitted"].get<bool>());
        QVERIFY(fit["compute_scale"].get<double>() > 0);
        // The GEMM curve is fitted to the run's operations (their FLOPs match the model's
        // shapes: every GEMM operation is matched), or declined with the reason; a fitted
        // curve is what the written cluster carries.
        const auto sizes = fit["gemm_size_fit"];
        QVERIFY(sizes["op_events"].get<std::int64_t>() > 0);
        QCOMPARE(sizes["unmatched_events"].get<std::int64_t>(), std::int64_t{0});
        QVERIFY(sizes["left_out_events"].get<std::int64_t>() > 0);  // core attention
        QCOMPARE(sizes["sizes"].get<int>(), 2);  // d = 64 and 32 (the output projection at tp 2)
        const auto written = nlohmann::json::parse(std::ifstream(cluster));
        if (sizes["fitted"].get<bool>()) {
            QCOMPARE(written["efficiency"]["gemm_half_dim"].get<double>(), fit["gemm_half_dim"].get<double>());
        } else {
            QVERIFY(!sizes["reason"].get<std::string>().empty());
            QCOMPARE(written["efficiency"]["gemm_half_dim"].get<double>(), 64.0);  // cpu-local's, kept
        }
        // The run records the cores it could use; with fewer than its 4 rank threads the
        // ranks shared them, and calibrate takes those less what other processes used
        // meanwhile, from the engine's counters: every rank thread's CPU time inside its
        // compute ops (never more than its compute spans' wall time), and on Linux its
        // scheduler statistics and the host's CPU accounting.
        const double recorded = fit["recorded_host_cores"].get<double>();
        QVERIFY(recorded >= 1);
        const auto sched = fit["scheduler"];
        QVERIFY(sched["recorded"].get<bool>());
        QCOMPARE(sched["rank_steps"].get<int>(), 4 * 7);  // 4 ranks, 8 steps, the first left out
        const double cpu = sched["compute_on_cpu_s"].get<double>(), span = sched["compute_span_s"].get<double>();
        QVERIFY2(cpu > 0 && cpu <= span * 1.02, qPrintable(QString("compute on a core %1 s, spans %2 s").arg(cpu).arg(span)));
        QCOMPARE(fit["measured_compute_s"].get<double>(), cpu);
#ifdef __linux__
        QVERIFY(sched["schedstat"].get<bool>());
        // Compute is part of its time on a core; schedstat's figure for a running thread lags
        // by its current slice's unaccounted time (up to a scheduler tick), hence the margin.
        QVERIFY(sched["on_cpu_s"].get<double>() >= cpu * 0.7);
        QVERIFY(sched["run_queue_wait_s"].get<double>() >= 0);
        QVERIFY(sched["host_recorded"].get<bool>());
        QVERIFY(sched["process_cores"].get<double>() > 0);
#endif
        if (recorded < 4) {
            const double expect = sched["host_recorded"].get<bool>()
                                      ? std::clamp(recorded - sched["others_cores"].get<double>(), 0.05, recorded)
                                      : recorded;
            QCOMPARE(fit["host_cores"].get<double>(), expect);
            QCOMPARE(written["host_cores"].get<double>(), expect);
        } else {
            QCOMPARE(fit["host_cores"].get<double>(), 0.0);
        }

        QVERIFY(!other_run.empty());
        // The step error of a prediction of `layout_args` on `cluster_arg` against `run`.
        auto step_error = [&](const std::string& cluster_arg, const QStringList& layout_args,
                              const std::string& run) {
            const auto predicted = temp_path(dir_, "predicted.sqlite");
            std::filesystem::remove(predicted);
            QStringList a =
                args({"simulate", layout, "--cluster", cluster_arg, "--trace", predicted});
            a += layout_args;
            auto s = run_cli(a);
            if (s.exit_code != 0) return 99.0;
            s = run_cli(args({"compare", predicted, run, "--json"}));
            if (s.exit_code != 0) return 99.0;
            return nlohmann::json::parse(s.out)["categories"][0]["error"].get<double>();
        };
        const double source_before = step_error("cpu-local", {}, measured);
        const double source_after = step_error(cluster, {}, measured);
        const double before = step_error("cpu-local", other, other_run);
        const double after = step_error(cluster, other, other_run);
        qInfo(
            "TP2xPP2 re-predicted: %+.1f%% -> %+.1f%%; DP2xTP2 step (fastest of 5 runs): error %+.1f%% "
            "uncalibrated, %+.1f%% calibrated on TP2xPP2 "
            "(link latency %.1f us per step, busbw %.3f GB/s, compute x%.3f, host cores %.2f of %.0f)",
            100 * source_before, 100 * source_after, 100 * before, 100 * after,
            1e6 * fit["intra_node"]["latency_s"].get<double>(),
            fit["intra_node"]["bus_bandwidth_bytes_per_s"].get<double>() / 1e9,
            fit["compute_scale"].get<double>(), fit["host_cores"].get<double>(), recorded);
        QVERIFY(after != 99.0 && before != 99.0);
        // The errors are figures of one run on a shared machine, printed above, not asserted:
        // how close a calibrated prediction comes (to its own layout and to others) is
        // measured over paired rounds by bench/cpu-calibration-loop.sh (docs/BENCHMARKS.md,
        // "Calibration on the CPU engine"); a bound here would test the machine's load.
        QVERIFY(source_before != 99.0 && source_after != 99.0);
    }

    void cli_bad_input_exits_2_and_leaves_nothing() {
        const auto text = temp_path(dir_, "bad.sqlite");
        std::ofstream(text) << "not a trace";
        auto r = run_cli(args({"stats", text}));
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains(QByteArray::fromStdString(text)), r.err.constData());

        const auto hostile = temp_path(dir_, "hostile.json");
        std::ofstream(hostile) << "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"k\",\"ts\":1e999,\"dur\":1}]}";
        const auto out = temp_path(dir_, "hostile_out.sqlite");
        r = run_cli(args({"import-trace", hostile, "--out", out}));
        QCOMPARE(r.exit_code, 2);
        // nlohmann refuses 1e999 as a number overflow: either way the message names the file.
        QVERIFY2(r.err.contains(QByteArray::fromStdString(hostile)) && r.err.contains("1e999"),
                 r.err.constData());
        // Neither the output nor a temporary file is left behind.
        for (const auto& f : std::filesystem::directory_iterator(dir_.path().toStdString())) {
            QVERIFY2(f.path().filename().string().find("hostile_out") == std::string::npos,
                     f.path().string().c_str());
        }
        r = run_cli(args({"export-trace", temp_path(dir_, "missing.sqlite"), "--out", temp_path(dir_, "x.json")}));
        QCOMPARE(r.exit_code, 2);
        QVERIFY(!std::filesystem::exists(temp_path(dir_, "x.json")));
    }
};

QTEST_GUILESS_MAIN(TraceToolsTest)
#include "tst_trace_tools.moc"
