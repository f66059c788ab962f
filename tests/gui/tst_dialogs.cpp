// The Tools dialogs as a person uses them: search and apply a layout (undoable), run a
// layout with the reference check and open its profile, stop a run, refuse a run the
// machine cannot hold, export to every format; and the estimate dock's memory chart.
#include <QtTest>

#include <QAction>
#include <QComboBox>
#include <QPushButton>
#include <QMenuBar>
#include <QProgressBar>
#include <QTableView>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include "gui/dialogs/export_dialog.h"
#include "gui/dialogs/loss_plot.h"
#include "gui/dialogs/run_dialog.h"
#include "gui/dialogs/search_dialog.h"
#include "gui/dialogs/search_results_model.h"
#include "gui/document/layout_document.h"
#include "gui/estimate/assessment_runner.h"
#include "gui/estimate/estimate_panel.h"
#include "gui/estimate/memory_chart.h"
#include "core/layout/layout_json.h"
#include "gui/mainwindow/main_window.h"
#include "core/engine/cuda_plugin.h"
#include "core/engine/engine_run.h"
#include "core/layout/layout_json.h"
#include "profiler/store/trace_reader.h"
#include "profiler/store/trace_writer.h"
#include "gui/timeline/step_locator.h"
#include "gui/timeline/timeline_panel.h"
#include "gui/timeline/timeline_view.h"

using namespace meshwork;
using namespace meshwork::gui;

namespace {
QString bundled(const char* name) { return QString(MESHWORK_RESOURCES_DIR) + "/layouts/" + name + ".json"; }

QAction* menu_action(MainWindow& w, const QString& text) {
    for (QAction* menu : w.menuBar()->actions()) {
        if (!menu->menu()) continue;
        for (QAction* a : menu->menu()->actions()) {
            if (a->text().remove('&').startsWith(text)) return a;
        }
    }
    return nullptr;
}
}  // namespace

class TstDialogs : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("MeshworkTests");
        QCoreApplication::setApplicationName("tst_gui_dialogs");
        QSettings().clear();
    }

    void search_ranks_layouts_and_apply_is_one_undoable_edit() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3-70b-h100-64")));
        const Layout before = w.document()->layout();
        QAction* search = menu_action(w, "Search Layouts");
        QVERIFY(search);
        search->trigger();
        SearchDialog* dialog = w.search_dialog();
        QVERIFY(dialog);
        dialog->set_world(64, 128, 8192, 15);
        QSignalSpy done(dialog, &SearchDialog::search_done);
        QVERIFY(dialog->start_search());
        QVERIFY(dialog->searching());
        QVERIFY(done.wait(120000));
        QCOMPARE(done.at(0).at(0).toBool(), false);
        QVERIFY2(dialog->results()->rowCount() > 1, qPrintable(dialog->status_text()));
        QCOMPARE(dialog->progress_bar()->value(), 1000);
        QVERIFY(dialog->status_text().contains("feasible"));

        // Best first by tokens/s; sorting by MFU (descending) keeps MFU monotone.
        const auto* first = &dialog->results()->hit(0);
        for (int i = 1; i < dialog->results()->rowCount(); ++i) {
            QVERIFY(dialog->results()->hit(i).tokens_per_s <= first->tokens_per_s + 1e-9);
        }
        dialog->results_view()->sortByColumn(SearchResultsModel::Mfu, Qt::DescendingOrder);
        auto* view_model = dialog->results_view()->model();
        double last = 1e300;
        for (int r = 0; r < view_model->rowCount(); ++r) {
            const double mfu = view_model->index(r, SearchResultsModel::Mfu).data(SearchResultsModel::kSortRole).toDouble();
            QVERIFY(mfu <= last);
            last = mfu;
        }

        // Apply a result that differs from the open layout: one edit, undone in one step.
        int row = -1;
        for (int r = 0; r < view_model->rowCount() && row < 0; ++r) {
            const Layout l = dialog->layout_at(r);
            if (l.parallel != before.parallel || l.training != before.training) row = r;
        }
        QVERIFY(row >= 0);
        const Layout chosen = dialog->layout_at(row);
        const int undo_before = w.document()->undo_stack()->count();
        dialog->apply_row(row);
        QCOMPARE(w.document()->undo_stack()->count(), undo_before + 1);
        QVERIFY(w.document()->layout().parallel == chosen.parallel);
        QVERIFY(w.document()->layout().training == chosen.training);
        QCOMPARE(w.document()->layout().name, before.name);
        QVERIFY(w.document()->is_modified());
        w.document()->undo_stack()->undo();
        QVERIFY(w.document()->layout() == before);
    }

    void search_cancel_and_bad_constraint() {
        Layout big = load_layout(bundled("llama3.1-405b-h100-16384").toStdString());
        // The job's framework settings come from the open layout.
        {
            Layout torch = big;
            torch.training.zero_stage = 3;
            torch.training.fsdp_fp32_shards = true;
            torch.training.grad_reduce_in_bf16 = true;
            const search::SearchRequest req = SearchDialog(torch).build_request();
            QVERIFY(req.options.fsdp_fp32_shards);
            QVERIFY(req.options.grad_reduce_in_bf16);
            QVERIFY(!SearchDialog(big).build_request().options.fsdp_fp32_shards);
        }
        SearchDialog dialog(big);
        dialog.set_fixed("tp=banana");
        QVERIFY(!dialog.start_search());
        QVERIFY2(dialog.status_text().contains("--fix"), qPrintable(dialog.status_text()));

        dialog.set_fixed({});
        QSignalSpy done(&dialog, &SearchDialog::search_done);
        QVERIFY(dialog.start_search());
        dialog.cancel_search();
        QVERIFY(done.wait(60000));
        QCOMPARE(done.at(0).at(0).toBool(), true);
        QVERIFY2(dialog.status_text().startsWith("Cancelled"), qPrintable(dialog.status_text()));
        QVERIFY(!dialog.searching());
    }

    void run_checks_against_the_reference_and_opens_the_profile() {
        QTemporaryDir dir;
        MainWindow w;
        QVERIFY(w.open_layout(bundled("tiny-cpu")));
        QAction* run = menu_action(w, "Run Layout");
        QVERIFY(run);
        run->trigger();
        RunDialog* dialog = w.run_dialog();
        QVERIFY(dialog);
        const QString profile = dir.filePath("run.sqlite");
        dialog->set_steps(3);
        dialog->set_check(true);
        dialog->set_profile_path(profile);
        QSignalSpy done(dialog, &RunDialog::run_done);
        QSignalSpy opened(&w, &MainWindow::trace_opened);
        QVERIFY2(dialog->start_run(), qPrintable(dialog->status_text()));
        QVERIFY(done.wait(240000));
        QVERIFY2(done.at(0).at(0).toBool(), qPrintable(dialog->status_text()));
        QVERIFY(dialog->outcome().check_ran && dialog->outcome().check_passed);
        QCOMPARE(dialog->loss_plot()->points().size(), std::size_t{3});
        QCOMPARE(dialog->progress_bar()->value(), 3);
        for (const auto& [step, loss] : dialog->loss_plot()->points()) QVERIFY(std::isfinite(loss) && loss > 0);
        QVERIFY(dialog->status_text().contains("Check passed"));
        // The profile is complete and the main window opens it in the timeline.
        QVERIFY(opened.wait(60000) || opened.count() == 1);
        QCOMPARE(opened.at(0).at(0).toString(), profile);
        auto reader = profiler::TraceReader::open(profile.toStdString());
        QVERIFY(reader.complete());
        QVERIFY(reader.event_count() > 0);
    }

    void stop_ends_the_run_and_keeps_a_readable_profile() {
        QTemporaryDir dir;
        RunDialog dialog(load_layout(bundled("tiny-cpu").toStdString()));
        const QString profile = dir.filePath("stopped.sqlite");
        dialog.set_steps(100000);
        dialog.set_check(false);
        dialog.set_profile_path(profile);
        QSignalSpy done(&dialog, &RunDialog::run_done);
        QVERIFY(dialog.start_run());
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.loss_plot()->points().empty(), 120000);
        dialog.stop_run();
        QVERIFY(done.wait(60000));
        QCOMPARE(done.at(0).at(0).toBool(), false);
        QVERIFY(dialog.outcome().cancelled);
        QVERIFY(dialog.status_text().startsWith("Stopped"));
        auto reader = profiler::TraceReader::open(profile.toStdString());
        QVERIFY(reader.complete());
    }

    // Choosing CUDA where it cannot run (here: the plugin is not beside this test, or no GPU)
    // names the reason and keeps Run disabled; the CPU backend is unaffected.
    void choosing_cuda_without_it_names_what_is_missing() {
        const Layout layout = load_layout(bundled("tiny-cpu").toStdString());
        if (engine::cuda_backend_unavailable(layout.gpus).empty()) QSKIP("CUDA can run here");
        RunDialog dialog(layout);
        QTRY_VERIFY(dialog.backends_probed());  // probed on a worker thread as the dialog opens
        auto* backend = dialog.findChild<QComboBox*>();
        QVERIFY(backend != nullptr);
        const int cuda = backend->findData("cuda");
        QVERIFY(cuda >= 0);
        backend->setCurrentIndex(cuda);
        QVERIFY(!dialog.start_run());
        QVERIFY2(dialog.status_text().contains("The CUDA backend cannot run here: "), qPrintable(dialog.status_text()));
        QVERIFY2(dialog.status_text().contains("CUDA plugin") || dialog.status_text().contains("GPU"),
                 qPrintable(dialog.status_text()));
        QVERIFY(!dialog.running());
        QPushButton* run = nullptr;
        for (auto* b : dialog.findChildren<QPushButton*>()) {
            if (b->text() == "&Run") run = b;
        }
        QVERIFY(run != nullptr);
        QVERIFY(!run->isEnabled());
        backend->setCurrentIndex(backend->findData("cpu"));
        QVERIFY(run->isEnabled());
    }

    void run_refuses_a_layout_this_machine_cannot_hold() {
        RunDialog dialog(load_layout(bundled("llama3.1-405b-h100-16384").toStdString()));
        QVERIFY(!dialog.start_run());
        QVERIFY2(dialog.status_text().contains("needs about") || dialog.status_text().contains("cannot run"),
                 qPrintable(dialog.status_text()));
        QVERIFY(!dialog.running());
    }

    void export_previews_every_format_and_saves_atomically() {
        QTemporaryDir dir;
        const Layout layout = load_layout(bundled("llama3-70b-h100-64").toStdString());
        ExportDialog dialog(layout, bundled("llama3-70b-h100-64"));
        dialog.set_format(ExportFormat::Megatron);
        QVERIFY(dialog.preview_text().contains("--tensor-model-parallel-size 8"));
        dialog.set_format(ExportFormat::Layout);
        const auto json = nlohmann::json::parse(dialog.preview_text().toStdString());
        QCOMPARE(json.at("gpus").get<int>(), layout.gpus);
        dialog.set_format(ExportFormat::DeepSpeed);
        QVERIFY(nlohmann::json::parse(dialog.preview_text().toStdString()).is_object());
        dialog.set_format(ExportFormat::Slurm);
        QVERIFY(dialog.preview_text().startsWith("#!"));
        QVERIFY(dialog.preview_text().contains("#SBATCH"));

        const QString out = dir.filePath("job.sbatch");
        QVERIFY(dialog.save_to(out));
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(f.readAll()), dialog.preview_text());
        QVERIFY(!dialog.save_to(dir.filePath("missing/dir/job.sbatch")));
        QVERIFY(dialog.last_error().contains("missing/dir/job.sbatch"));

        // A lossy export lists what it drops.
        ExportDialog tiny(load_layout(bundled("tiny-cpu").toStdString()), {});
        tiny.set_format(ExportFormat::Torchtitan);
        QVERIFY(!tiny.lost().isEmpty());
        tiny.set_format(ExportFormat::Layout);
        QVERIFY(tiny.lost().isEmpty());
    }

    void go_to_step_zooms_the_timeline_to_that_step() {
        int step = 0, mb = 0;
        QVERIFY(parse_step_target("3", step, mb) && step == 3 && mb == -1);
        QVERIFY(parse_step_target(" 2.1 ", step, mb) && step == 2 && mb == 1);
        QVERIFY(parse_step_target("4/0", step, mb) && step == 4 && mb == 0);
        QVERIFY(!parse_step_target("two", step, mb));
        QVERIFY(!parse_step_target("1.2.3", step, mb));

        // A real profile of 3 steps of the tiny layout.
        QTemporaryDir dir;
        const QString path = dir.filePath("steps.sqlite");
        const Layout layout = load_layout(bundled("tiny-cpu").toStdString());
        {
            auto writer = profiler::TraceWriter::create(path.toStdString());
            engine::EngineOptions options;
            options.steps = 3;
            engine::RunHooks hooks;
            hooks.sink = writer.get();
            engine::run_in_process(layout, options, hooks);
            writer->close();
        }
        auto reader = profiler::TraceReader::open(path.toStdString());
        const auto span2 = reader.step_span(2, -1);
        const auto span2_mb1 = reader.step_span(2, 1);
        QVERIFY(span2 && span2_mb1);
        QVERIFY(span2_mb1->first >= span2->first && span2_mb1->second <= span2->second);
        QVERIFY(!reader.step_span(99, -1));

        MainWindow w;
        QVERIFY(w.open_layout(bundled("tiny-cpu")));
        QSignalSpy opened(&w, &MainWindow::trace_opened);
        w.open_trace(path);
        QVERIFY(opened.wait(30000));
        // An opened trace joins File → Open Recent Trace.
        QCOMPARE(QSettings().value("files/recent_traces").toStringList().value(0), QFileInfo(path).absoluteFilePath());
        QSignalSpy shown(&w, &MainWindow::step_shown);
        w.go_to_step(2, -1);
        QVERIFY(shown.wait(30000));
        QCOMPARE(shown.at(0).at(0).toLongLong(), span2->first);
        QCOMPARE(shown.at(0).at(1).toLongLong(), span2->second);
        const auto [t0, t1] = w.timeline()->view()->visible_window();
        QVERIFY(t0 <= static_cast<double>(span2->first) && t1 >= static_cast<double>(span2->second));
        QVERIFY(t1 - t0 < 1.2 * static_cast<double>(span2->second - span2->first));

        w.go_to_step(99, -1);
        QTRY_VERIFY_WITH_TIMEOUT(w.last_error().contains("step 99"), 30000);
    }

    void icons_are_compiled_in_and_render() {
        MainWindow w;  // registers the resources
        for (const char* name : {"meshwork", "search", "run", "export", "trace", "compare"}) {
            const QString path = QString(":/icons/%1.svg").arg(name);
            QVERIFY2(QFile::exists(path), qPrintable(path));
            const QImage image = QIcon(path).pixmap(32, 32).toImage();
            QVERIFY2(!image.isNull(), qPrintable(path));
            int opaque = 0;
            for (int y = 0; y < image.height(); ++y) {
                for (int x = 0; x < image.width(); ++x) opaque += qAlpha(image.pixel(x, y)) > 0 ? 1 : 0;
            }
            QVERIFY2(opaque > 20, qPrintable(path + " renders empty (is the SVG icon engine installed?)"));
        }
        QVERIFY(!w.windowIcon().isNull());
    }

    void memory_chart_has_a_column_per_stage_that_matches_the_estimate() {
        MainWindow w;
        QVERIFY(w.open_layout(bundled("llama3.1-405b-h100-16384")));
        w.estimate_panel()->runner()->wait();
        QTRY_VERIFY(w.estimate_panel()->current().has_value());
        const auto& a = *w.estimate_panel()->current();
        const auto& stages = w.estimate_panel()->memory_chart()->stages();
        QCOMPARE(static_cast<int>(stages.size()), w.document()->layout().parallel.mesh.pp);
        QCOMPARE(stages.size(), a.stage_memory_bytes.size());
        bool any_over = false;
        for (std::size_t i = 0; i < stages.size(); ++i) {
            QCOMPARE(stages[i].total_bytes(), a.stage_memory_bytes[i].first);
            QCOMPARE(stages[i].capacity_bytes, a.stage_memory_bytes[i].second);
            any_over = any_over || !stages[i].fits();
        }
        // The bundled 405B example, with the settings its paper states, fits on every stage
        // (docs/cost-model.md, "Known limits").
        QVERIFY(!any_over);
        auto* chart = w.estimate_panel()->memory_chart();
        chart->resize(400, 220);
        const QImage image = chart->grab().toImage();
        QVERIFY(!image.isNull());
        QVERIFY(chart->stage_at(QPoint(-5, -5)) < 0);
    }
};

QTEST_MAIN(TstDialogs)
#include "tst_dialogs.moc"
