// meshwork: the GUI. Opens the layout given on the command line, or the bundled example
// (not when a trace is opened alone).
// --screenshot FILE renders the window offscreen to a PNG and exits (documentation, checks);
// --trace, --compare-trace, --view, --dock, --theme and --size choose what it shows.
#include <QApplication>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QTimer>

#include <cstdio>

#include "gui/app/theme.h"
#include "core/common/resources.h"
#include "gui/dialogs/export_dialog.h"
#include "gui/estimate/estimate_panel.h"
#include "gui/dialogs/run_dialog.h"
#include "gui/dialogs/search_dialog.h"
#include "gui/mainwindow/main_window.h"
#include "gui/mainwindow/trace_menu.h"

int main(int argc, char** argv) {
    QElapsedTimer since_start;  // for --quit-when-ready: from main() to a usable window
    since_start.start();
    QApplication app(argc, argv);
    QApplication::setApplicationName("Meshwork");
    QApplication::setOrganizationName("Meshwork");
    QApplication::setApplicationVersion(MESHWORK_VERSION);
    QCommandLineParser parser;
    parser.setApplicationDescription("Design, predict, run and profile model-parallel layouts");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("layout", "Layout file to open");
    const QCommandLineOption layout_opt("layout", "Layout file to open", "FILE");
    const QCommandLineOption trace_opt("trace",
                                       "Trace file to open in the timeline; host:/path opens a trace on that host, "
                                       "served through ssh by its meshwork-cli (an scp copy when it cannot serve it)",
                                       "FILE");
    const QCommandLineOption screenshot("screenshot", "Render the window to FILE (PNG) and exit", "FILE");
    const QCommandLineOption view_opt("view",
                                      "Central view: canvas, timeline or ranks (the rank overview of "
                                      "--trace; with --screenshot rendered once it is computed)",
                                      "VIEW", "canvas");
    const QCommandLineOption theme_opt("theme", "dark or light (default: the saved choice)", "THEME");
    const QCommandLineOption size_opt("size", "Window size for --screenshot, WIDTHxHEIGHT", "SIZE", "1600x960");
    const QCommandLineOption tool_opt("tool",
                                      "Open a tool dialog: search (and run the search), run (and run the "
                                      "layout for 10 steps), or export; with --screenshot the dialog is "
                                      "rendered once its work is done", "TOOL");
    const QCommandLineOption ready_opt("quit-when-ready",
                                       "Exit as soon as the window is shown with its first estimate, printing "
                                       "the time since start (start-up benchmark)");
    parser.addOptions({layout_opt, trace_opt, screenshot, view_opt, theme_opt, size_opt, tool_opt, ready_opt});
    const QCommandLineOption compare_opt("compare-trace",
                                         "Trace to show beside --trace (predicted beside measured), with "
                                         "the comparison table", "FILE");
    parser.addOption(compare_opt);
    const QCommandLineOption dock_opt("dock",
                                      "Show and raise a dock: model, parallelism, training, estimate or history "
                                      "(the Training dock shares its place with the Model dock)", "DOCK");
    parser.addOption(dock_opt);
    parser.process(app);

    using meshwork::gui::MainWindow;
    const bool shooting = parser.isSet(screenshot);
    // Screenshots use the dark theme unless told otherwise, so that they do not depend on
    // whatever the person running them chose last.
    meshwork::gui::apply_theme(parser.isSet(theme_opt) ? meshwork::gui::theme_from_string(parser.value(theme_opt))
                               : shooting ? meshwork::gui::Theme::Dark : meshwork::gui::saved_theme());
    MainWindow window;
    QString path = parser.isSet(layout_opt) ? parser.value(layout_opt) : parser.positionalArguments().value(0);
    // The bundled example when nothing else is asked for; not beside a trace opened alone,
    // where its estimate would read as the trace's prediction (a 22 s step beside an 87 ms one).
    const bool trace_alone = parser.isSet(trace_opt) && !parser.isSet(ready_opt);
    if (path.isEmpty() && !trace_alone) {
        path = QString::fromStdString(meshwork::resource_dir() + "/layouts/llama3-70b-h100-64.json");
    }
    if (!path.isEmpty() && !window.open_layout(path) && shooting) {
        std::fprintf(stderr, "meshwork: %s\n", qPrintable(window.last_error()));
        return 2;
    }
    if (shooting) {
        const QStringList wh = parser.value(size_opt).split('x');
        if (wh.size() == 2) window.resize(wh[0].toInt(), wh[1].toInt());
    }
    const QString view_name = parser.value(view_opt);
    if (view_name != "canvas" && view_name != "timeline" && view_name != "ranks") {
        std::fprintf(stderr, "meshwork: --view: unknown view '%s' (canvas, timeline, ranks)\n", qPrintable(view_name));
        return 2;
    }
    const auto view = view_name == "timeline" ? MainWindow::View::Timeline
                      : view_name == "ranks"  ? MainWindow::View::Ranks
                                              : MainWindow::View::Canvas;
    if (view == MainWindow::View::Ranks && !parser.isSet(trace_opt)) {
        std::fprintf(stderr, "meshwork: --view ranks needs --trace (the trace whose ranks to show)\n");
        return 2;
    }
    window.show_view(view);
    if (parser.isSet(dock_opt) && !window.raise_dock(parser.value(dock_opt))) {
        std::fprintf(stderr, "meshwork: --dock: unknown dock '%s' (model, parallelism, training, estimate, history)\n",
                     qPrintable(parser.value(dock_opt)));
        return 2;
    }
    if (shooting && view == MainWindow::View::Ranks) {
        // The overview's picture is about the trace: the layout's docks would crowd it.
        for (auto* dock : window.findChildren<QDockWidget*>()) dock->hide();
    }
    window.show();

    auto take_screenshot = [&window, out = parser.value(screenshot)] {
        // Let the worker-thread assessment arrive and the layouts settle before grabbing.
        QTimer::singleShot(400, &window, [&window, out] {
            const bool ok = window.grab().save(out);
            if (!ok) std::fprintf(stderr, "meshwork: cannot write %s\n", qPrintable(out));
            QApplication::exit(ok ? 0 : 1);
        });
    };
    if (parser.isSet(ready_opt)) {
        // Usable: the window is on screen and the estimate dock shows the layout's figures.
        auto report = [&since_start] {
            std::fprintf(stderr, "meshwork: ready in %.1f ms\n", static_cast<double>(since_start.nsecsElapsed()) / 1e6);
            QApplication::exit(0);
        };
        if (window.estimate_panel()->current()) {
            QTimer::singleShot(0, &app, report);
        } else {
            QObject::connect(window.estimate_panel(), &meshwork::gui::EstimatePanel::assessed, &app,
                             [report] { QTimer::singleShot(0, report); });
        }
        return app.exec();
    }
    if (parser.isSet(tool_opt)) {
        // A dialog's picture once its work is done: the search ranked, the run finished.
        auto grab_dialog = [out = parser.value(screenshot)](QWidget* dialog) {
            QTimer::singleShot(300, dialog, [dialog, out] {
                const bool ok = dialog->grab().save(out);
                if (!ok) std::fprintf(stderr, "meshwork: cannot write %s\n", qPrintable(out));
                QApplication::exit(ok ? 0 : 1);
            });
        };
        const QString tool = parser.value(tool_opt);
        if (tool == "search") {
            window.open_search_dialog();
            auto* dialog = window.search_dialog();
            if (shooting) QObject::connect(dialog, &meshwork::gui::SearchDialog::search_done, dialog, [dialog, grab_dialog] { grab_dialog(dialog); });
            dialog->start_search();
        } else if (tool == "run") {
            window.open_run_dialog();
            auto* dialog = window.run_dialog();
            dialog->set_steps(10);
            if (shooting) QObject::connect(dialog, &meshwork::gui::RunDialog::run_done, dialog, [dialog, grab_dialog] { grab_dialog(dialog); });
            if (!dialog->start_run() && shooting) grab_dialog(dialog);
        } else if (tool == "export") {
            window.open_export_dialog();
            if (shooting) grab_dialog(window.export_dialog());
        } else {
            std::fprintf(stderr, "meshwork: --tool: unknown tool '%s' (search, run, export)\n", qPrintable(tool));
            return 2;
        }
        return app.exec();
    }
    if (parser.isSet(compare_opt)) {
        // --trace on top as the prediction, --compare-trace below as the measurement.
        if (!parser.isSet(trace_opt)) {
            std::fprintf(stderr, "meshwork: --compare-trace needs --trace (the trace to compare it with)\n");
            return 2;
        }
        auto* menu = window.trace_menu();
        QObject::connect(menu, &meshwork::gui::TraceMenu::failed, &app, [shooting](const QString& message) {
            std::fprintf(stderr, "meshwork: %s\n", qPrintable(message));
            if (shooting) QApplication::exit(2);
        });
        if (shooting) QObject::connect(menu, &meshwork::gui::TraceMenu::comparison_shown, &app, take_screenshot);
        menu->compare(parser.value(trace_opt), parser.value(compare_opt));
        return app.exec();
    }
    if (parser.isSet(trace_opt)) {
        QObject::connect(&window, &MainWindow::trace_failed, &app, [shooting](const QString&, const QString& message) {
            if (!shooting) return;
            std::fprintf(stderr, "meshwork: %s\n", qPrintable(message));
            QApplication::exit(2);
        });
        // A remote trace its host cannot serve is copied; that copy's failure comes from the menu.
        QObject::connect(window.trace_menu(), &meshwork::gui::TraceMenu::failed, &app, [shooting](const QString& message) {
            if (!shooting) return;
            std::fprintf(stderr, "meshwork: %s\n", qPrintable(message));
            QApplication::exit(2);
        });
        if (view == MainWindow::View::Ranks) {
            // The overview is computed once the trace is open; the picture once it is shown.
            QObject::connect(&window, &MainWindow::trace_opened, &window, [&window] { window.show_view(MainWindow::View::Ranks); });
            QObject::connect(&window, &MainWindow::rank_overview_failed, &app, [shooting](const QString& message) {
                if (!shooting) return;
                std::fprintf(stderr, "meshwork: %s\n", qPrintable(message));
                QApplication::exit(2);
            });
            if (shooting) QObject::connect(&window, &MainWindow::rank_overview_ready, &app, take_screenshot);
        } else if (shooting) {
            QObject::connect(&window, &MainWindow::trace_opened, &app, take_screenshot);
        }
        window.open_trace(parser.value(trace_opt));
    } else if (shooting) {
        take_screenshot();
    }
    return app.exec();
}
