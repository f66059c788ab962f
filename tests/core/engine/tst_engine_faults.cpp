// Fault handling of engine runs: a failing or stalled rank stops every rank with one clear
// error in bounded time; Ctrl-C stops at the next op and the trace keeps what ran; bad
// token files are refused naming the file; what the engine does not run is refused.
#include <QtTest>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <set>

#include "core/common/error.h"
#include "core/engine/engine_run.h"
#include "core/engine/stop.h"
#include "core/engine/reference_layouts.h"

using namespace meshwork;
using namespace meshwork::engine;

namespace {
Layout tp2_pp2() {
    return build_layout(std::nullopt, overrides_of(reference_layouts()[11]));  // 8 ranks
}

class MemorySink : public TraceSink {
public:
    void set_run_info(const TraceRunInfo&) override {}
    int add_track(const TrackInfo&) override { return tracks_++; }
    void add_event(const TraceEvent& e) override {
        std::lock_guard lk(mu_);
        events.push_back(e);
    }
    void add_counter(int, int, const std::string&, std::int64_t, double) override {}
    void close() override {}
    std::mutex mu_;
    std::vector<TraceEvent> events;
    std::atomic<int> tracks_{0};
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

class TestEngineFaults : public QObject {
    Q_OBJECT
private slots:
    void exception_on_one_rank_stops_all();
    void stalled_rank_times_out();
    void interrupt_stops_at_next_op();
    void trace_has_ops_and_collectives();
    void token_file_missing_or_malformed();
    void token_file_is_used();
    void unsupported_model_is_refused();
};

void TestEngineFaults::exception_on_one_rank_stops_all() {
    EngineOptions o;
    o.steps = 3;
    o.fault_rank = 5;
    o.fault_step = 2;
    o.comm_timeout_s = 30;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        run_in_process(tp2_pp2(), o, {});
        QFAIL("the run did not fail");
    } catch (const RuntimeError& e) {
        QCOMPARE(std::string(e.what()), std::string("rank 5: injected fault at step 2"));
    }
    QVERIFY2(seconds_since(t0) < 10, "not stopped promptly");
}

void TestEngineFaults::stalled_rank_times_out() {
    EngineOptions o;
    o.steps = 2;
    o.fault_rank = 1;
    o.fault_step = 1;
    o.fault_kind = FaultKind::Hang;
    o.comm_timeout_s = 0.5;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        run_in_process(tp2_pp2(), o, {});
        QFAIL("the run did not fail");
    } catch (const RuntimeError& e) {
        QVERIFY2(std::string(e.what()).find("timed out after") != std::string::npos, e.what());
    }
    QVERIFY2(seconds_since(t0) < 6, "not stopped in bounded time");
}

void TestEngineFaults::interrupt_stops_at_next_op() {
    MemorySink sink;
    RunHooks hooks;
    hooks.sink = &sink;
    std::stop_source stop;  // the caller's: a signal handler or a Stop button requests it
    hooks.stop = stop.get_token();
    int steps_seen = 0;
    hooks.on_step = [&](const StepResult&) {
        ++steps_seen;
        stop.request_stop();
    };
    EngineOptions o;
    o.steps = 3;
    bool stopped = false;
    try {
        run_in_process(tp2_pp2(), o, hooks);
    } catch (const StopRequested&) {
        stopped = true;
    }
    QVERIFY(stopped);
    QCOMPARE(steps_seen, 1);
    bool step1 = false;
    for (const auto& e : sink.events) step1 = step1 || e.step == 1;
    QVERIFY(step1);
}

void TestEngineFaults::trace_has_ops_and_collectives() {
    MemorySink sink;
    RunHooks hooks;
    hooks.sink = &sink;
    EngineOptions o;
    o.steps = 1;
    run_in_process(tp2_pp2(), o, hooks);
    bool attn = false, allreduce = false, p2p = false;
    std::set<int> ranks;
    for (const auto& e : sink.events) {
        QVERIFY(e.end_ns >= e.start_ns);
        ranks.insert(e.rank);
        attn = attn || (e.name == "block.1.attention.core.fwd" && e.kind == EventKind::Compute && e.micro_batch >= 0);
        allreduce = allreduce || (e.name == "all_reduce(tp)" && e.kind == EventKind::Communication && e.bytes > 0);
        p2p = p2p || e.name == "send(pp)";
    }
    QVERIFY(attn);
    QVERIFY(allreduce);
    QVERIFY(p2p);
    QCOMPARE(static_cast<int>(ranks.size()), 8);
    QCOMPARE(sink.tracks_.load(), 16);
}

void TestEngineFaults::token_file_missing_or_malformed() {
    EngineOptions o;
    o.tokens_file = "/nonexistent/tokens.txt";
    const Layout layout = tp2_pp2();
    try {
        run_in_process(layout, o, {});
        QFAIL("missing file accepted");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.issues()[0].file), QString("/nonexistent/tokens.txt"));
    }
    const QString path = QDir::temp().filePath("meshwork_bad_tokens.txt");
    {
        std::ofstream f(path.toStdString());
        f << "1 2 3\n4 five 6\n";
    }
    o.tokens_file = path.toStdString();
    try {
        run_in_process(layout, o, {});
        QFAIL("malformed file accepted");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.issues()[0].field), QString("line 2"));
        QVERIFY(e.issues()[0].message.find("five") != std::string::npos);
    }
    {
        std::ofstream f(path.toStdString());
        f << "1 2 3 999\n";
    }
    try {
        run_in_process(layout, o, {});
        QFAIL("out-of-range token accepted");
    } catch (const InputError& e) {
        QVERIFY(e.issues()[0].message.find("999") != std::string::npos);
    }
}

void TestEngineFaults::token_file_is_used() {
    const QString path = QDir::temp().filePath("meshwork_tokens.txt");
    {
        std::ofstream f(path.toStdString());
        for (int i = 0; i < 500; ++i) f << (i * 7) % 256 << (i % 20 == 19 ? "\n" : " ");
    }
    EngineOptions o;
    o.steps = 1;
    o.tokens_file = path.toStdString();
    const Layout layout = tp2_pp2();
    const ReferenceState ref = run_reference(layout, o);
    RunHooks hooks;
    hooks.reference = &ref;
    const RunResult r = run_in_process(layout, o, hooks);
    QVERIFY(!r.mismatch);
    EngineOptions synthetic_options;
    synthetic_options.steps = 1;
    const RunResult synthetic = run_in_process(layout, synthetic_options, {});
    QVERIFY(r.steps[0].loss != synthetic.steps[0].loss);
}

void TestEngineFaults::unsupported_model_is_refused() {
    LayoutOverrides ov = overrides_of(reference_layouts()[0]);
    Layout layout = build_layout(std::nullopt, ov);
    layout.model.tie_embeddings = true;
    try {
        run_in_process(layout, {}, {});
        QFAIL("tied embeddings accepted");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.issues()[0].field), QString("model.tie_word_embeddings"));
    }
}

QTEST_APPLESS_MAIN(TestEngineFaults)
#include "tst_engine_faults.moc"
