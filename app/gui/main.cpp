// meshwork: the GUI. Opens the layout given on the command line, or the bundled example.
// --screenshot FILE renders the window offscreen to a PNG and exits (documentation, checks);
// --trace, --view, --theme and --size choose what it shows.
#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include <cstdio>

#include "app/theme.h"
#include "common/resources.h"
#include "mainwindow/main_window.h"

int main(int argc, char** argv) {
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
    const QCommandLineOption trace_opt("trace", "Trace file to open in the timeline", "FILE");
    const QCommandLineOption screenshot("screenshot", "Render the window to FILE (PNG) and exit", "FILE");
    const QCommandLineOption view_opt("view", "Central view: canvas or timeline", "VIEW", "canvas");
    const QCommandLineOption theme_opt("theme", "dark or light (default: the saved choice)", "THEME");
    const QCommandLineOption size_opt("size", "Window size for --screenshot, WIDTHxHEIGHT", "SIZE", "1600x960");
    parser.addOptions({layout_opt, trace_opt, screenshot, view_opt, theme_opt, size_opt});
    parser.process(app);

    using meshwork::gui::MainWindow;
    const bool shooting = parser.isSet(screenshot);
    // Screenshots use the dark theme unless told otherwise, so that they do not depend on
    // whatever the person running them chose last.
    meshwork::gui::apply_theme(parser.isSet(theme_opt) ? meshwork::gui::theme_from_string(parser.value(theme_opt))
                               : shooting ? meshwork::gui::Theme::Dark : meshwork::gui::saved_theme());
    MainWindow window;
    QString path = parser.isSet(layout_opt) ? parser.value(layout_opt) : parser.positionalArguments().value(0);
    if (path.isEmpty()) {
        path = QString::fromStdString(meshwork::resource_dir() + "/layouts/llama3-70b-h100-64.json");
    }
    if (!window.open_layout(path) && shooting) {
        std::fprintf(stderr, "meshwork: %s\n", qPrintable(window.last_error()));
        return 2;
    }
    if (shooting) {
        const QStringList wh = parser.value(size_opt).split('x');
        if (wh.size() == 2) window.resize(wh[0].toInt(), wh[1].toInt());
    }
    window.show_view(parser.value(view_opt) == "timeline" ? MainWindow::View::Timeline : MainWindow::View::Canvas);
    window.show();

    auto take_screenshot = [&window, out = parser.value(screenshot)] {
        // Let the worker-thread assessment arrive and the layouts settle before grabbing.
        QTimer::singleShot(400, &window, [&window, out] {
            const bool ok = window.grab().save(out);
            if (!ok) std::fprintf(stderr, "meshwork: cannot write %s\n", qPrintable(out));
            QApplication::exit(ok ? 0 : 1);
        });
    };
    if (parser.isSet(trace_opt)) {
        QObject::connect(&window, &MainWindow::trace_failed, &app, [shooting](const QString&, const QString& message) {
            if (!shooting) return;
            std::fprintf(stderr, "meshwork: %s\n", qPrintable(message));
            QApplication::exit(2);
        });
        if (shooting) QObject::connect(&window, &MainWindow::trace_opened, &app, take_screenshot);
        window.open_trace(parser.value(trace_opt));
    } else if (shooting) {
        take_screenshot();
    }
    return app.exec();
}
