// Predicted memory beside measured (issue 32): a short CPU run of the bundled tiny layout
// records its own allocations by kind (run --profile), `stats` reads them back, `compare`
// puts the cost model's per-kind prediction beside the measured peak per rank, `calibrate`
// fits the memory reserve and the calibrated cluster's prediction agrees with the measured
// peak within 10 %.
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "core/layout/layout_json.h"
#include "profiler/analysis/memory_compare.h"
#include "profiler/analysis/memory_series.h"
#include "profiler/analysis/memory_stats.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_writer.h"
#include "tests/profiler/trace_test_util.h"
#include "tests/support/run_cli.h"

using namespace meshwork;
using namespace meshwork::profiler;
using meshwork::test::run_cli;
using meshwork::test::temp_path;

namespace {

QStringList args(std::initializer_list<std::string> a) {
    QStringList l;
    for (const auto& s : a) l << QString::fromStdString(s);
    return l;
}

nlohmann::json json_of(const test::CliResult& r) {
    if (r.exit_code != 0) qWarning("meshwork-cli: %s", r.err.constData());
    return nlohmann::json::parse(r.out.toStdString());
}

const std::string kLayout = std::string(MESHWORK_RESOURCES_DIR) + "/layouts/tiny-cpu.json";

}  // namespace

class TestMemoryCompare : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string run_, predicted_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        run_ = temp_path(dir_, "run.sqlite");
        predicted_ = temp_path(dir_, "predicted.sqlite");
        // Two steps: the second reuses the first's freed blocks (the backend's cache).
        auto r = run_cli(args({"run", kLayout, "--steps", "2", "--profile", run_}));
        QVERIFY2(r.exit_code == 0, r.err.constData());
        r = run_cli(args({"simulate", kLayout, "--trace", predicted_}));
        QVERIFY2(r.exit_code == 0, r.err.constData());
    }

    // Every rank's allocations come back by kind; weights, gradients and optimizer state are
    // allocated once and live through the peak, so their measured bytes are exactly what the
    // engine holds, and equal to the cost model's fp32 state (4 + 4 + 8 bytes a parameter)
    // for this layout (no ZeRO, no padding).
    void run_profile_records_allocations_by_kind() {
        const auto trace = TraceReader::open(run_);
        QVERIFY(trace.has_memory_tables());
        const MemoryStats stats = memory_stats(trace);
        QCOMPARE(static_cast<int>(stats.devices.size()), 4);
        const Layout layout = load_layout(kLayout);
        const MemoryComparison c = compare_memory(layout, trace);
        QVERIFY(c.has_memory);
        for (const auto& r : c.ranks) {
            QVERIFY(r.measured);
            QCOMPARE(r.at_peak_by_category.at("weights"), r.predicted.weights);
            QCOMPARE(r.at_peak_by_category.at("gradients"), r.predicted.gradients);
            QCOMPARE(r.at_peak_by_category.at("optimizer"), r.predicted.optimizer);
            QVERIFY(r.at_peak_by_category.at("activations") > 0);
            QVERIFY(r.reserved_peak_bytes >= r.allocated_peak_bytes);
            std::int64_t sum = 0;
            for (const auto& [category, bytes] : r.at_peak_by_category) sum += bytes;
            QCOMPARE(sum, r.allocated_peak_bytes);  // nothing allocated outside the history
        }
    }

    // The series for the memory timeline: reduced to at most the points asked for, each
    // device's largest allocated total kept (the peak memory_stats finds).
    void memory_series_keep_the_peaks() {
        const auto trace = TraceReader::open(run_);
        const MemoryStats stats = memory_stats(trace);
        const auto series = memory_series(trace, 50);
        QCOMPARE(series.size(), stats.devices.size());
        for (std::size_t i = 0; i < series.size(); ++i) {
            QVERIFY(series[i].points.size() <= 50);
            QVERIFY(series[i].points.size() >= 2);
            std::int64_t most = 0;
            for (const auto& p : series[i].points) most = std::max(most, p.allocated_bytes);
            QCOMPARE(most, stats.devices[i].allocated_peak_bytes);
            QVERIFY(std::is_sorted(series[i].points.begin(), series[i].points.end(),
                                   [](const auto& a, const auto& b) { return a.time_ns < b.time_ns; }));
        }
    }

    // compare: the memory part in text and JSON; calibrate fits the reserve, and compare on
    // the calibrated cluster agrees within 10 % on every rank.
    void calibrate_then_compare_agrees_within_ten_percent() {
        auto r = run_cli(args({"compare", predicted_, run_, "--json"}));
        QCOMPARE(r.exit_code, 0);
        const auto before = json_of(r).at("memory");
        QVERIFY(before.at("has_memory").get<bool>());
        QCOMPARE(before.at("ranks").size(), std::size_t{4});
        const double error_before = before.at("max_abs_error").get<double>();

        const auto cluster = temp_path(dir_, "calibrated.json");
        r = run_cli(args({"calibrate", run_, "--out", cluster, "--json"}));
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const auto fit = json_of(r).at("memory");
        QVERIFY(fit.at("fitted").get<bool>());
        QCOMPARE(fit.at("ranks").get<int>(), 4);
        QVERIFY(fit.at("max_abs_error_after").get<double>() <= 0.10);

        r = run_cli(args({"compare", predicted_, run_, "--cluster", cluster, "--json"}));
        QCOMPARE(r.exit_code, 0);
        const auto after = json_of(r).at("memory");
        for (const auto& rank : after.at("ranks")) {
            QVERIFY2(std::abs(rank.at("error").get<double>()) <= 0.10, rank.dump().c_str());
        }
        QVERIFY(after.at("max_abs_error").get<double>() < error_before);
        // The calibrated cluster is the one estimate reads: its reserve is the fitted one.
        r = run_cli(args({"compare", predicted_, run_, "--cluster", cluster}));
        QVERIFY(r.out.contains("memory per rank"));
        QVERIFY(r.out.contains("measured at the peak: activations"));
    }

    // A trace without memory events: compare says so in words, calibrate keeps the reserve.
    void no_memory_events_is_said_in_words() {
        auto r = run_cli(args({"compare", predicted_, predicted_, "--json"}));
        QCOMPARE(r.exit_code, 0);
        const auto memory = json_of(r).at("memory");
        QVERIFY(!memory.at("has_memory").get<bool>());
        QVERIFY(memory.at("note").get<std::string>().find("no memory events") != std::string::npos);
        r = run_cli(args({"compare", predicted_, predicted_}));
        QVERIFY(r.out.contains("not compared: the measured trace has no memory events"));
        // --cluster needs a layout to predict with: a bad file is named.
        r = run_cli(args({"compare", predicted_, run_, "--cluster", temp_path(dir_, "missing.json")}));
        QCOMPARE(r.exit_code, 2);
        QVERIFY(r.err.contains("missing.json"));
    }
};

QTEST_GUILESS_MAIN(TestMemoryCompare)
#include "tst_memory_compare.moc"
