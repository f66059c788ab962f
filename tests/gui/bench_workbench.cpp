// Latency of the live estimate: from a drop on the mesh canvas (an edit of the layout) to
// the estimate dock showing the new figures, as EstimatePanel::assessed reports it, on the
// bundled 70B (64 GPUs) and 405B (16,384 GPUs) layouts; and the time to a usable main
// window (constructed, layout opened, shown, first estimate on screen) inside a process.
// Run: bench_gui_workbench -median 9 (figures in docs/BENCHMARKS.md, "GUI").
#include <QtTest>

#include <algorithm>
#include <vector>

#include "core/layout/layout_json.h"
#include "gui/document/layout_document.h"
#include "gui/document/layout_edits.h"
#include "gui/estimate/estimate_panel.h"
#include "gui/mainwindow/main_window.h"

using namespace meshwork;
using namespace meshwork::gui;

namespace {
QString bundled(const char* name) { return QString(MESHWORK_RESOURCES_DIR) + "/layouts/" + name + ".json"; }

// Alternates the first transformer block between stage 0 and stage 1, as dragging it back
// and forth across the boundary does, and records the edit-to-screen latency of each.
// `path` defaults to the bundled layout of that name.
void measure_drops(const char* layout, int drops, const QString& path = {}) {
    MainWindow w;
    QSignalSpy assessed(w.estimate_panel(), &EstimatePanel::assessed);
    QVERIFY(w.open_layout(path.isEmpty() ? bundled(layout) : path));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(assessed.count() > 0 || assessed.wait(10000));
    std::vector<double> latencies_ms;
    const auto first_stage_layers = w.document()->layout().stage_layers().front();
    for (int i = 0; i < drops; ++i) {
        assessed.clear();
        // Stage 1's first block onto stage 0, then the same block back onto stage 1.
        const int block = first_stage_layers;
        const int stage = i % 2 == 0 ? 0 : 1;
        const auto edit = move_blocks_to_stage(w.document()->layout(), {block}, stage);
        QVERIFY2(w.document()->apply(edit).accepted, edit.refused.c_str());
        QVERIFY(assessed.wait(10000) || assessed.count() > 0);
        latencies_ms.push_back(assessed.takeLast().at(0).toDouble());
    }
    std::sort(latencies_ms.begin(), latencies_ms.end());
    qInfo("%s: %d drops, edit-to-screen latency median %.2f ms, p90 %.2f ms, max %.2f ms", layout, drops,
          latencies_ms[latencies_ms.size() / 2], latencies_ms[latencies_ms.size() * 9 / 10], latencies_ms.back());
}
}  // namespace

class BenchWorkbench : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("MeshworkTests");
        QCoreApplication::setApplicationName("bench_gui_workbench");
    }

    void estimate_latency_after_drop_70b() { measure_drops("llama3-70b-h100-64", 40); }
    void estimate_latency_after_drop_405b() {
        // The bundled layout runs the paper's chunks of one layer each, which any drag
        // between stages would empty: drag on its 1F1B form (7, 8 × 14, 7) instead.
        Layout l = load_layout(bundled("llama3.1-405b-h100-16384").toStdString());
        l.parallel.vpp = 1;
        l.training.schedule = Schedule::OneFOneB;
        l.placement.layers_per_stage.assign(16, 8);
        l.placement.layers_per_stage.front() = l.placement.layers_per_stage.back() = 7;
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath("llama3.1-405b-h100-16384-1f1b.json");
        save_layout(l, path.toStdString());
        measure_drops("llama3.1-405b-h100-16384 (1F1B form)", 40, path);
    }

    void time_to_usable_window() {
        QBENCHMARK {
            MainWindow w;
            QSignalSpy assessed(w.estimate_panel(), &EstimatePanel::assessed);
            QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            QVERIFY(assessed.count() > 0 || assessed.wait(10000));
        }
    }
};

QTEST_MAIN(BenchWorkbench)
#include "bench_workbench.moc"
