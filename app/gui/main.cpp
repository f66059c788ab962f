// meshwork: the GUI. Opens the layout given on the command line, or the bundled example.
// --screenshot FILE renders the window to a PNG and exits (documentation, checks).
#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include <filesystem>

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
    QCommandLineOption screenshot("screenshot", "Render the window to FILE (PNG) and exit", "FILE");
    parser.addOption(screenshot);
    parser.process(app);

    meshwork::gui::MainWindow window;
    QString path = parser.positionalArguments().value(0);
    if (path.isEmpty()) {
        path = QString::fromStdString(meshwork::resource_dir() + "/layouts/llama3-70b-h100-64.json");
    }
    if (!window.open_layout(path)) return 2;
    window.show();
    if (parser.isSet(screenshot)) {
        const QString out = parser.value(screenshot);
        QTimer::singleShot(200, &window, [&window, out] {
            const bool ok = window.grab().save(out);
            QApplication::exit(ok ? 0 : 1);
        });
    }
    return app.exec();
}
