// The run session shared by meshwork-cli run and the GUI (core/engine/run_session.h): the
// refusals before any rank starts, the one host-memory policy, the backend registry and
// the enums of the edge, a stop through the caller's std::stop_source, and the profile
// written through the profiler's opener and closed on every way out.
#include <QtTest>

#include <QTemporaryDir>

#include <filesystem>

#include "core/common/error.h"
#include "core/engine/backend_registry.h"
#include "core/engine/cuda_plugin.h"
#include "core/engine/reference_layouts.h"
#include "core/engine/run_session.h"
#include "core/engine/stop.h"
#include "profiler/collect/run_profile.h"
#include "profiler/store/trace_reader.h"

using namespace meshwork;
using namespace meshwork::engine;

namespace {
RunRequest tp2_request() {
    RunRequest r;
    r.layout = build_layout(std::nullopt, overrides_of(reference_layouts()[1]));
    r.options.steps = 2;
    return r;
}

std::string field_of(const InputError& e) { return e.issues().empty() ? "" : e.issues().front().field; }

RankMemory rank(int r, std::size_t state, std::size_t peak) {
    RankMemory m;
    m.rank = r;
    m.params_bytes = state;
    m.peak_bytes = peak;
    return m;
}
}  // namespace

class TestRunSession : public QObject {
    Q_OBJECT
private slots:
    void names_are_parsed_once_at_the_edge();
    void registry_says_why_a_backend_cannot_run();
    void host_memory_counts_what_this_process_holds();
    void refusals_name_their_field();
    void check_passes_and_the_profile_is_complete();
    void stop_from_the_callers_source_closes_the_profile();
};

void TestRunSession::names_are_parsed_once_at_the_edge() {
    for (BackendKind k : backend_kinds()) QCOMPARE(parse_backend(to_string(k)), std::optional<BackendKind>(k));
    QCOMPARE(parse_backend("cuda"), std::optional<BackendKind>(BackendKind::Cuda));
    QVERIFY(!parse_backend("gpu"));
    QCOMPARE(parse_launcher("mpi"), std::optional<Launcher>(Launcher::Mpi));
    QVERIFY(!parse_launcher("slurm"));
    QCOMPARE(parse_fault_kind("hang"), std::optional<FaultKind>(FaultKind::Hang));
    QVERIFY(!parse_fault_kind("crash"));
}

void TestRunSession::registry_says_why_a_backend_cannot_run() {
    const auto backends = available_backends(2);
    QCOMPARE(backends.size(), backend_kinds().size());
    for (const BackendInfo& b : backends) {
        QVERIFY(!b.description.empty());
        QCOMPARE(b.available, b.reason.empty());
    }
    QVERIFY(backends.front().kind == BackendKind::Cpu && backends.front().available);
    // CUDA: exactly what the plugin loader says (here, without a GPU: the missing plugin,
    // library or device).
    const BackendInfo cuda = probe_backend(BackendKind::Cuda, 2);
    QCOMPARE(cuda.reason, cuda_backend_unavailable(2));
    if (!cuda.available) {
        try {
            require_backend(BackendKind::Cuda, 2);
            QFAIL("CUDA accepted where it cannot run");
        } catch (const InputError& e) {
            QCOMPARE(field_of(e), std::string("--backend"));
        }
    }
}

void TestRunSession::host_memory_counts_what_this_process_holds() {
    const std::vector<RankMemory> mem{rank(0, 100, 300), rank(1, 100, 500)};
    // Local launcher, CPU: every rank of this process.
    QCOMPARE(host_memory_need(mem, BackendKind::Cpu, Launcher::Local, false).need_bytes, 800.0);
    // MPI: one rank per process, the largest.
    QCOMPARE(host_memory_need(mem, BackendKind::Cpu, Launcher::Mpi, false).need_bytes, 500.0);
    // A check adds the reference's model state, on the host.
    QCOMPARE(host_memory_need(mem, BackendKind::Cpu, Launcher::Local, true).need_bytes, 1000.0);
    // CUDA: the ranks are on the GPUs; only the reference counts.
    QCOMPARE(host_memory_need(mem, BackendKind::Cuda, Launcher::Local, false).need_bytes, 0.0);
    const HostMemoryNeed cuda = host_memory_need(mem, BackendKind::Cuda, Launcher::Local, true);
    QCOMPARE(cuda.need_bytes, 200.0);
    QCOMPARE(cuda.scope, std::string("the --check reference"));
}

void TestRunSession::refusals_name_their_field() {
    RunRequest steps = tp2_request();
    steps.options.steps = 0;
    RunRequest limit = tp2_request();
    limit.memory_limit_bytes = 1024;
    RunRequest tokens = tp2_request();
    tokens.options.tokens_file = "/nonexistent/tokens.txt";
    RunRequest huge = tp2_request();
    huge.layout.model.hidden_size = 1 << 20;
    huge.layout.model.ffn_hidden_size = 1 << 20;
    const std::vector<std::pair<RunRequest, std::string>> cases{
        {steps, "--steps"}, {limit, "--memory-limit"}, {tokens, "--tokens"}, {huge, "model"}};
    for (const auto& [request, field] : cases) {
        try {
            RunSession session(request, profiler::open_run_profile);
            QFAIL(("not refused: " + field).c_str());
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find(field) != std::string::npos, e.what());
        }
    }
    if (!std::getenv("OMPI_COMM_WORLD_SIZE") && !std::getenv("PMI_SIZE")) {
        RunRequest mpi = tp2_request();
        mpi.launcher = Launcher::Mpi;
        try {
            RunSession session(mpi, profiler::open_run_profile);
            QFAIL("the MPI launcher outside mpirun was accepted");
        } catch (const InputError& e) {
            QCOMPARE(field_of(e), std::string("--launcher"));
        }
    }
}

void TestRunSession::check_passes_and_the_profile_is_complete() {
    QTemporaryDir dir;
    RunRequest r = tp2_request();
    r.check = true;
    r.profile_path = dir.filePath("run.sqlite").toStdString();
    RunSession session(r, profiler::open_run_profile);
    QVERIFY(session.root());
    QCOMPARE(session.predicted_memory().size(), std::size_t{2});
    std::vector<RunPhase> phases;
    int steps = 0;
    RunEvents events;
    events.on_phase = [&](RunPhase p) { phases.push_back(p); };
    events.on_step = [&](const StepResult&) { ++steps; };
    const RunReport report = session.run(std::stop_source().get_token(), events);
    QCOMPARE(steps, 2);
    QCOMPARE(phases, (std::vector<RunPhase>{RunPhase::Reference, RunPhase::Ranks}));
    QVERIFY(report.check == CheckStatus::Passed);
    QCOMPARE(report.tolerance.weights, 1e-4);
    QCOMPARE(report.profile_path, r.profile_path);
    auto reader = profiler::TraceReader::open(report.profile_path);
    QVERIFY(reader.complete());
    QVERIFY(reader.event_count() > 0);
}

void TestRunSession::stop_from_the_callers_source_closes_the_profile() {
    QTemporaryDir dir;
    RunRequest r = tp2_request();
    r.options.steps = 100000;
    r.profile_path = dir.filePath("stopped.sqlite").toStdString();
    RunSession session(r, profiler::open_run_profile);
    std::stop_source stop;
    int steps = 0;
    RunEvents events;
    events.on_step = [&](const StepResult&) {
        if (++steps == 2) stop.request_stop();
    };
    bool stopped = false;
    try {
        (void)session.run(stop.get_token(), events);
    } catch (const StopRequested&) {
        stopped = true;
    }
    QVERIFY(stopped);
    QCOMPARE(steps, 2);
    auto reader = profiler::TraceReader::open(r.profile_path);
    QVERIFY(reader.complete());
}

QTEST_GUILESS_MAIN(TestRunSession)
#include "tst_run_session.moc"
