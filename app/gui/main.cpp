// meshwork: the GUI. Opens the layout given on the command line, or shows its start page.
// --screenshot FILE renders the window offscreen to a PNG and exits (documentation, checks);
// --trace, --compare-trace, --compare-tab, --view, --dock, --theme and --size choose what it shows.
#include <QApplication>
#include <QByteArray>
#include <QCoreApplication>
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
#include "gui/mainwindow/dropped_files.h"
#include "gui/mainwindow/trace_menu.h"
#include "gui/compare/compare_panel.h"
#include "gui/timeline/timeline_panel.h"
#include "gui/timeline/timeline_view.h"

namespace {

// The command line, described once for both the GUI start and --help / --version.
struct Options {
    QCommandLineOption layout{"layout", "Layout file to open", "FILE"};
    QCommandLineOption trace{"trace",
                             "Trace file to open in the timeline: a Meshwork trace, a Kineto / PyTorch profiler "
                             "JSON (.json, .json.gz) or an nsys SQLite export (imported on the fly); host:/path "
                             "opens a trace on that host, served through ssh by its meshwork-cli (an scp copy when "
                             "it cannot serve it); given several times, the files are the ranks of one job, "
                             "merged into one view",
                             "FILE"};
    QCommandLineOption screenshot{"screenshot", "Render the window to FILE (PNG) and exit", "FILE"};
    QCommandLineOption view{"view",
                            "Central view: canvas, timeline or ranks (the rank overview of "
                            "--trace; with --screenshot rendered once it is computed)",
                            "VIEW", "canvas"};
    QCommandLineOption theme{"theme", "dark or light (default: the saved choice)", "THEME"};
    QCommandLineOption size{"size", "Window size for --screenshot, WIDTHxHEIGHT", "SIZE", "1600x960"};
    QCommandLineOption tool{"tool",
                            "Open a tool dialog: search (and run the search), run (and run the "
                            "layout for 10 steps), or export; with --screenshot the dialog is "
                            "rendered once its work is done", "TOOL"};
    QCommandLineOption ready{"quit-when-ready",
                             "Exit as soon as the window is shown with its first estimate, printing "
                             "the time since start (start-up benchmark)"};
    QCommandLineOption compare{"compare-trace",
                               "Trace to show beside --trace (predicted beside measured), with the comparison "
                               "table; a simulated trace is the prediction whichever of the two it is", "FILE"};
    QCommandLineOption compare_tab{"compare-tab",
                                   "With --compare-trace: the tab raised below the timelines: table, memory "
                                   "(predicted memory by kind beside the measured peak per rank), memory-timeline "
                                   "(measured memory over time beside the predicted peaks), "
                                   "predicted-stats or measured-stats", "TAB"};
    QCommandLineOption find{"find",
                            "With --trace: list the events whose name contains TEXT below the timeline and "
                            "select the first (its flow arrow drawn)", "TEXT"};
    QCommandLineOption select{"select",
                              "With --trace: select the time range START:END (ms from the trace's start) over "
                              "every lane, with its statistics per event name", "START:END"};
    QCommandLineOption flags{"flags",
                             "With --trace: timestamp flags at T1,T2,... (ms from the trace's start), as M sets "
                             "them", "T1,T2"};
    QCommandLineOption dock{"dock",
                            "Show and raise a dock: model, parallelism, training, estimate or history "
                            "(the Training dock shares its place with the Model dock)", "DOCK"};
};

void describe(QCommandLineParser& parser, const Options& o) {
    parser.setApplicationDescription("Design, predict, run and profile model-parallel layouts");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("files", "A layout file to open and/or trace files (several: the ranks of one job, "
                                          "merged into one view)", "[LAYOUT] [TRACE...]");
    parser.addOptions({o.layout, o.trace, o.screenshot, o.view, o.theme, o.size, o.tool, o.ready, o.compare, o.compare_tab, o.dock, o.find, o.select, o.flags});
}

void name_application() {
    QCoreApplication::setApplicationName("Meshwork");
    QCoreApplication::setOrganizationName("Meshwork");
    QCoreApplication::setApplicationVersion(MESHWORK_VERSION);
}

// --help and --version print and exit: they must work where no display can be opened (a
// login node, ssh without X), so they are answered before QApplication connects to one.
bool asks_for_help_or_version(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "--") break;
        if (a == "-h" || a == "--help" || a == "-?" || a == "--help-all" || a == "-v" || a == "--version") {
            return true;
        }
    }
    return false;
}

// --find TEXT, --select START:END and --flags T1,T2 (ms) on the trace just opened.
void show_find_and_select(meshwork::gui::MainWindow& window, const QString& find, const QString& range,
                          const QString& flags) {
    auto* panel = window.timeline();
    if (!flags.isEmpty() && panel->view()->source()) {
        const double begin = static_cast<double>(panel->view()->source()->begin_ns());
        for (const QString& at : flags.split(',', Qt::SkipEmptyParts)) panel->view()->toggle_flag(begin + at.toDouble() * 1e6);
    }
    if (!find.isEmpty()) {
        panel->list_matches(find);
        panel->find_next(find);
    }
    const QStringList ends = range.split(':');
    if (ends.size() == 2 && panel->view()->source()) {
        const double begin = static_cast<double>(panel->view()->source()->begin_ns());
        const double t0 = begin + ends[0].toDouble() * 1e6, t1 = begin + ends[1].toDouble() * 1e6;
        panel->view()->set_visible_window(t0 - 0.05 * (t1 - t0), t1 + 0.05 * (t1 - t0));
        panel->view()->select_range(t0, t1);
    }
}

}  // namespace

int main(int argc, char** argv) {
    QElapsedTimer since_start;  // for --quit-when-ready: from main() to a usable window
    since_start.start();
    const Options o;
    if (asks_for_help_or_version(argc, argv)) {
        QCoreApplication core(argc, argv);
        name_application();
        QCommandLineParser parser;
        describe(parser, o);
        parser.process(core);  // prints the help or the version and exits
        return 0;
    }
    QApplication app(argc, argv);
    name_application();
    QCommandLineParser parser;
    describe(parser, o);
    const QCommandLineOption& layout_opt = o.layout;
    const QCommandLineOption& trace_opt = o.trace;
    const QCommandLineOption& screenshot = o.screenshot;
    const QCommandLineOption& view_opt = o.view;
    const QCommandLineOption& theme_opt = o.theme;
    const QCommandLineOption& size_opt = o.size;
    const QCommandLineOption& tool_opt = o.tool;
    const QCommandLineOption& ready_opt = o.ready;
    const QCommandLineOption& compare_opt = o.compare;
    const QCommandLineOption& dock_opt = o.dock;
    parser.process(app);

    using meshwork::gui::MainWindow;
    const bool shooting = parser.isSet(screenshot);
    // Screenshots use the dark theme unless told otherwise, so that they do not depend on
    // whatever the person running them chose last.
    meshwork::gui::apply_theme(parser.isSet(theme_opt) ? meshwork::gui::theme_from_string(parser.value(theme_opt))
                               : shooting ? meshwork::gui::Theme::Dark : meshwork::gui::saved_theme());
    MainWindow window;
    // Positional files are a layout or traces, told apart by content (dropped_files.h):
    // `meshwork rank0.json.gz rank1.json.gz` opens two traces as the ranks of one view.
    const auto positional = meshwork::gui::sort_dropped_files(parser.positionalArguments());
    const QStringList traces = parser.values(trace_opt) + positional.traces;
    QString path = parser.isSet(layout_opt) ? parser.value(layout_opt) : positional.layouts.value(0);
    if (path.isEmpty() && (parser.isSet(tool_opt) || parser.isSet(ready_opt))) {
        // A tool and the start-up benchmark need a layout: the bundled example.
        path = QString::fromStdString(meshwork::resource_dir() + "/layouts/llama3-70b-h100-64.json");
    }
    // Without a layout the window opens on its start page (new, open, the examples).
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
    if (view == MainWindow::View::Ranks && traces.isEmpty()) {
        std::fprintf(stderr, "meshwork: --view ranks needs --trace (the trace whose ranks to show)\n");
        return 2;
    }
    if (!path.isEmpty() || view != MainWindow::View::Canvas) window.show_view(view);
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
        // The simulated one of --trace and --compare-trace is the prediction (trace_roles.h);
        // of two measured runs, --trace is the reference on top.
        if (traces.size() != 1) {
            std::fprintf(stderr, "meshwork: --compare-trace needs one --trace (the trace to compare it with)\n");
            return 2;
        }
        auto* menu = window.trace_menu();
        QObject::connect(menu, &meshwork::gui::TraceMenu::failed, &app, [shooting](const QString& message) {
            std::fprintf(stderr, "meshwork: %s\n", qPrintable(message));
            if (shooting) QApplication::exit(2);
        });
        if (parser.isSet(o.compare_tab)) {
            const QString tab = parser.value(o.compare_tab);
            if (!window.timeline()->comparison()->show_tab(tab)) {
                std::fprintf(stderr, "meshwork: --compare-tab: unknown tab '%s' (table, memory, memory-timeline, predicted-stats, "
                                     "measured-stats)\n", qPrintable(tab));
                return 2;
            }
        }
        if (shooting) QObject::connect(menu, &meshwork::gui::TraceMenu::comparison_shown, &app, take_screenshot);
        menu->compare_by_role(traces.front(), parser.value(compare_opt));
        return app.exec();
    }
    if (!traces.isEmpty()) {
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
        } else {
            // --find and --select act on the trace once it is open (documentation pictures, checks).
            QObject::connect(&window, &MainWindow::trace_opened, &window,
                             [&window, find = parser.value(o.find), range = parser.value(o.select),
                              flags = parser.value(o.flags)] {
                                 show_find_and_select(window, find, range, flags);
                             });
            if (shooting) QObject::connect(&window, &MainWindow::trace_opened, &app, take_screenshot);
        }
        window.open_traces(traces);
    } else if (shooting) {
        take_screenshot();
    }
    return app.exec();
}
