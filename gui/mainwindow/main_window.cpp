#include "mainwindow/main_window.h"

#include <QApplication>
#include <QDockWidget>
#include <QFileDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QTextBrowser>
#include <QToolBar>

#include "common/error.h"
#include "layout/layout_json.h"
#include "layout/layout_summary.h"
#include "layout/layout_validate.h"
#include "mesh/mesh_canvas.h"
#include "model/model_tree.h"

namespace meshwork::gui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(tr("Meshwork"));
    canvas_ = new MeshCanvas(this);
    setCentralWidget(canvas_);

    model_tree_ = new ModelTree(this);
    auto* model_dock = new QDockWidget(tr("Model"), this);
    model_dock->setObjectName("model_dock");
    model_dock->setWidget(model_tree_);
    addDockWidget(Qt::LeftDockWidgetArea, model_dock);

    summary_ = new QTextBrowser(this);
    auto* summary_dock = new QDockWidget(tr("Layout"), this);
    summary_dock->setObjectName("summary_dock");
    summary_dock->setWidget(summary_);
    addDockWidget(Qt::RightDockWidgetArea, summary_dock);

    status_ = new QLabel(this);
    statusBar()->addPermanentWidget(status_);
    build_menus();
    resize(1400, 820);
}

void MainWindow::build_menus() {
    auto* file = menuBar()->addMenu(tr("&File"));
    auto* open = file->addAction(tr("&Open Layout…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open layout"), QString(),
                                                          tr("Layouts (*.json)"));
        if (!path.isEmpty()) open_layout(path);
    });
    open->setShortcut(QKeySequence::Open);
    file->addSeparator();
    auto* quit = file->addAction(tr("&Quit"), qApp, &QApplication::quit);
    quit->setShortcut(QKeySequence::Quit);
    auto* tools = addToolBar(tr("Main"));
    tools->setObjectName("main_toolbar");
    tools->addAction(open);
}

bool MainWindow::open_layout(const QString& path) {
    try {
        const Layout layout = load_layout(path.toStdString());
        set_layout(layout, path);
        return true;
    } catch (const InputError& e) {
        QMessageBox::warning(this, tr("Cannot open layout"), QString::fromStdString(e.what()));
    }
    return false;
}

void MainWindow::set_layout(const Layout& layout, const QString& path) {
    layout_ = layout;
    layout_path_ = path;
    setWindowTitle(tr("Meshwork — %1").arg(QString::fromStdString(layout.name)));
    canvas_->set_layout(layout);
    model_tree_->set_model(layout.model, layout.training.seq_length);
    refresh_summary();
}

void MainWindow::refresh_summary() {
    const auto result = validate_layout(layout_, layout_path_.toStdString());
    const auto model = model_summary_json(layout_.model, layout_.training.seq_length);
    QString html;
    html += tr("<h3>%1</h3>").arg(QString::fromStdString(layout_.name));
    html += tr("<p><b>%1</b> on %2 × %3 (%4)</p>")
                .arg(QString::fromStdString(layout_.model.name))
                .arg(layout_.gpus)
                .arg(QString::fromStdString(layout_.cluster.gpu.kind))
                .arg(QString::fromStdString(layout_.cluster.name));
    const auto& m = layout_.parallel.mesh;
    html += tr("<p>TP %1 · PP %2 · DP %3 · CP %4 · EP %5 · VPP %6<br>SP %7 · ZeRO %8 · %9 · %10</p>")
                .arg(m.tp).arg(m.pp).arg(m.dp).arg(m.cp).arg(m.ep).arg(layout_.parallel.vpp)
                .arg(layout_.parallel.sequence_parallel ? tr("on") : tr("off"))
                .arg(layout_.training.zero_stage)
                .arg(QString::fromStdString(to_string(layout_.training.schedule)))
                .arg(QString::fromStdString(to_string(layout_.training.recompute)));
    html += tr("<p>Batch %1 × seq %2, micro-batch %3 (%4 per step)</p>")
                .arg(layout_.training.global_batch_size).arg(layout_.training.seq_length)
                .arg(layout_.training.micro_batch_size).arg(layout_.num_micro_batches());
    html += tr("<p>Parameters: %1 B total, %2 B active</p>")
                .arg(model["params_total"].get<double>() / 1e9, 0, 'f', 2)
                .arg(model["params_active"].get<double>() / 1e9, 0, 'f', 2);
    if (result.valid()) {
        html += tr("<p style='color:#2e7d32'>Valid layout</p>");
    } else {
        html += tr("<p style='color:#c62828'><b>Invalid:</b></p><ul>");
        for (const auto& e : result.errors) {
            html += "<li>" + QString::fromStdString(e.field + ": " + e.message).toHtmlEscaped() + "</li>";
        }
        html += "</ul>";
    }
    for (const auto& w : result.warnings) {
        html += "<p style='color:#ef6c00'>" +
                QString::fromStdString(w.field + ": " + w.message).toHtmlEscaped() + "</p>";
    }
    summary_->setHtml(html);
    status_->setText(tr("%1 ranks").arg(layout_.gpus));
}

}  // namespace meshwork::gui
