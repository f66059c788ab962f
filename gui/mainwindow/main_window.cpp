#include "gui/mainwindow/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLineEdit>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QScreen>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QStackedWidget>
#include <QStyle>
#include <QTabWidget>
#include <QToolBar>
#include <QUndoView>

#include "gui/app/keyboard_conventions.h"
#include "gui/app/theme.h"
#include "core/common/error.h"
#include "core/common/resources.h"
#include "gui/dialogs/export_dialog.h"
#include "gui/dialogs/run_dialog.h"
#include "gui/dialogs/search_dialog.h"
#include "gui/document/layout_document.h"
#include "gui/estimate/estimate_panel.h"
#include "gui/mainwindow/dropped_files.h"
#include "gui/mainwindow/new_layout_dialog.h"
#include "gui/mainwindow/recent_files.h"
#include "gui/mainwindow/shortcuts_dialog.h"
#include "gui/mainwindow/start_page.h"
#include "gui/mainwindow/trace_menu.h"
#include "gui/ranks/rank_overview_panel.h"
#include "gui/ranks/rank_steps_loader.h"
#include "gui/mesh/axis_editor.h"
#include "gui/mesh/mesh_canvas.h"
#include "gui/mesh/mesh_geometry.h"
#include "gui/model/model_palette.h"
#include "gui/timeline/step_locator.h"
#include "gui/timeline/timeline_panel.h"
#include "gui/timeline/timeline_view.h"
#include "gui/timeline/trace_opener.h"
#include "gui/timeline/trace_reader_source.h"
#include "gui/trace/remote_trace_source.h"
#include "gui/training/training_editor.h"
#include "profiler/import/import_trace.h"

// The icons are compiled into the static meshwork_gui library; Q_INIT_RESOURCE keeps the
// linker from dropping them and must be called outside any namespace.
static void init_meshwork_resources() { Q_INIT_RESOURCE(meshwork); }

namespace meshwork::gui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    init_meshwork_resources();
    setWindowIcon(QIcon(":/icons/meshwork.svg"));
    setAcceptDrops(true);  // files dropped anywhere on the window (open_files)
    // Before any child exists: the conventions see every widget's first polish.
    install_keyboard_conventions(this);
    document_ = new LayoutDocument(this);
    views_ = new QTabWidget(this);
    views_->setDocumentMode(true);
    canvas_ = new MeshCanvas(document_, this);
    timeline_ = new TimelinePanel(this);
    trace_opener_ = new TraceOpener(this);
    connect(trace_opener_, &TraceOpener::opened, this,
            [this](std::shared_ptr<const TimelineSource> source, const QString& path) {
                trace_path_ = path;
                ranks_path_.clear();  // the overview is of the previous trace
                ranks_->set_data(nullptr);
                if (const auto* remote = dynamic_cast<const RemoteTraceSource*>(source.get())) {
                    // Reported while the view paints: shown once that is over.
                    remote->on_lost([this, path](const QString& why) {
                        QMetaObject::invokeMethod(this, [this, path, why] {
                            show_error(tr("Remote trace lost"),
                                       tr("%1\n\nThe timeline keeps what it had drawn; open the trace again to "
                                          "continue.").arg(why));
                            emit remote_trace_lost(path, why);
                        }, Qt::QueuedConnection);
                    });
                }
                if (const auto* local = dynamic_cast<const TraceReaderSource*>(source.get())) {
                    local->on_error([this, path](const QString& why) {
                        QMetaObject::invokeMethod(this, [this, path, why] {
                            show_error(tr("Cannot read trace"), tr("%1\n\n%2").arg(path, why));
                            emit trace_failed(path, why);
                        }, Qt::QueuedConnection);
                    });
                }
                RemoteSpec remote;
                const bool served = is_remote_trace(path, remote);
                timeline_->set_source(std::move(source), served ? remote.host + ':' + QFileInfo(remote.path).fileName()
                                                                : QFileInfo(path).fileName());
                show_view(View::Timeline);
                statusBar()->showMessage(tr("Opened trace %1").arg(path), 4000);
                emit trace_opened(path);
            });
    connect(trace_opener_, &TraceOpener::serve_unavailable, this, [this](const QString& spec, const QString& reason) {
        // An older Meshwork or none on that host: copy the file as before, saying why.
        statusBar()->showMessage(tr("%1 — copying the trace with scp instead").arg(reason), 8000);
        emit remote_serve_unavailable(spec, reason);
        trace_menu_->fetch_remote(spec, reason);
    });
    connect(trace_opener_, &TraceOpener::failed, this, [this](const QString& path, const QString& message) {
        show_error(tr("Cannot open trace"), tr("%1\n\n%2").arg(path, message));
        emit trace_failed(path, message);
    });
    views_->addTab(canvas_, tr("Mesh"));
    views_->addTab(timeline_, tr("Timeline"));
    ranks_ = new RankOverviewPanel(this);
    views_->addTab(ranks_, tr("Ranks"));
    rank_loader_ = new RankStepsLoader(this);
    connect(rank_loader_, &RankStepsLoader::progress, ranks_, &RankOverviewPanel::show_progress);
    connect(rank_loader_, &RankStepsLoader::loaded, this,
            [this](std::shared_ptr<const RankOverviewData> overview, const QString&) {
                ranks_->set_data(std::move(overview));
                emit rank_overview_ready();
            });
    connect(rank_loader_, &RankStepsLoader::failed, this, [this](const QString& path, const QString& message) {
        ranks_path_.clear();  // a later visit tries again
        ranks_->show_error(message);
        statusBar()->showMessage(tr("Cannot compute the rank overview of %1").arg(path), 8000);
        emit rank_overview_failed(message);
    });
    connect(ranks_, &RankOverviewPanel::ranks_requested, this, &MainWindow::show_ranks_in_timeline);
    // Computed when first looked at: most traces opened are never viewed by rank.
    connect(views_, &QTabWidget::currentChanged, this, [this] {
        if (views_->currentWidget() == ranks_) load_rank_overview();
    });
    // Until a layout or a trace is open, the start page says what can be done.
    central_ = new QStackedWidget(this);
    start_page_ = new StartPage(QString::fromStdString(resource_dir() + "/layouts"), central_);
    central_->addWidget(start_page_);
    central_->addWidget(views_);
    setCentralWidget(central_);
    connect(start_page_, &StartPage::example_chosen, this, [this](const QString& path) { open_layout(path); });
    connect(document_, &LayoutDocument::reset_done, this, [this] { central_->setCurrentWidget(views_); });
    build_docks();
    build_actions();
    build_menus_and_toolbar();
    connect(start_page_, &StartPage::new_requested, new_, &QAction::trigger);
    connect(start_page_, &StartPage::open_requested, open_, &QAction::trigger);
    connect(start_page_, &StartPage::open_trace_requested, open_trace_, &QAction::trigger);

    busy_ = new QProgressBar(this);
    busy_->setRange(0, 0);
    busy_->setMaximumWidth(140);
    busy_->setMaximumHeight(14);
    busy_->setTextVisible(false);
    busy_->hide();
    statusBar()->addPermanentWidget(busy_);
    status_ = new QLabel(this);
    statusBar()->addPermanentWidget(status_);
    connect(this, &MainWindow::trace_opened, busy_, &QWidget::hide);
    connect(this, &MainWindow::trace_failed, busy_, &QWidget::hide);
    connect(trace_menu_, &TraceMenu::failed, busy_, &QWidget::hide);
    connect(this, &MainWindow::step_shown, busy_, &QWidget::hide);
    connect(step_locator_, &StepLocator::failed, busy_, &QWidget::hide);
    connect(canvas_, &MeshCanvas::edit_refused, this,
            [this](const QString& reason) { statusBar()->showMessage(tr("Refused: %1").arg(reason), 8000); });
    connect(canvas_, &MeshCanvas::edit_done, this,
            [this](const QString& what) { statusBar()->showMessage(what, 4000); });
    connect(document_, &LayoutDocument::changed, this, &MainWindow::update_title);
    connect(document_, &LayoutDocument::path_changed, this, &MainWindow::update_title);
    connect(document_->undo_stack(), &QUndoStack::cleanChanged, this, &MainWindow::update_title);
    connect(estimate_, &EstimatePanel::assessed, this, [this] {
        const auto& a = estimate_->current();
        if (!a) return;
        std::vector<StageMemoryUse> memory;
        for (const auto& [used, capacity] : a->stage_memory_bytes) memory.push_back({used, capacity});
        canvas_->set_stage_memory(std::move(memory));
        // The same GPU count as the mesh's legend, and the same verdict as the Estimate dock.
        status_->setText(tr("%1 · %2").arg(gpu_count_text(document_->layout()), verdict_text(*a, false)));
    });
    // A first start on a small screen (1280×720) must not open past its edges.
    QSize first_size(1500, 900);
    if (const QScreen* s = screen()) first_size = first_size.boundedTo(s->availableGeometry().size());
    resize(first_size);
    restore_settings();
    update_title();
}

void MainWindow::build_docks() {
    auto add_dock = [this](const QString& title, const char* name, QWidget* widget, Qt::DockWidgetArea area) {
        auto* dock = new QDockWidget(title, this);
        dock->setObjectName(name);
        dock->setWidget(widget);
        addDockWidget(area, dock);
        dock_toggles_ << dock->toggleViewAction();
        return dock;
    };
    palette_ = new ModelPalette(document_, this);
    auto* model_dock = add_dock(tr("Model"), "model_dock", palette_, Qt::LeftDockWidgetArea);
    axis_editor_ = new AxisEditor(document_, this);
    auto* axes_dock = add_dock(tr("Parallelism"), "axes_dock", axis_editor_, Qt::LeftDockWidgetArea);
    splitDockWidget(model_dock, axes_dock, Qt::Vertical);
    // The training settings share the tall upper place with the model tree: both are long
    // lists, and the parallelism below stays in view beside either.
    training_ = new TrainingEditor(document_, this);
    auto* training_dock = add_dock(tr("Training"), "training_dock", training_, Qt::LeftDockWidgetArea);
    tabifyDockWidget(model_dock, training_dock);
    model_dock->raise();
    estimate_ = new EstimatePanel(document_, this);
    auto* estimate_dock = add_dock(tr("Estimate"), "estimate_dock", estimate_, Qt::RightDockWidgetArea);
    auto* history = new QUndoView(document_->undo_stack(), this);
    history->setEmptyLabel(tr("<opened layout>"));
    auto* history_dock = add_dock(tr("History"), "history_dock", history, Qt::RightDockWidgetArea);
    splitDockWidget(estimate_dock, history_dock, Qt::Vertical);
    resizeDocks({model_dock, estimate_dock}, {360, 380}, Qt::Horizontal);
    resizeDocks({model_dock, axes_dock}, {560, 300}, Qt::Vertical);
    resizeDocks({estimate_dock, history_dock}, {640, 220}, Qt::Vertical);
}

bool MainWindow::raise_dock(const QString& name) {
    auto* dock = findChild<QDockWidget*>(name == "parallelism" ? QString("axes_dock") : name + "_dock");
    if (!dock) return false;
    dock->show();
    dock->raise();
    return true;
}

void MainWindow::build_actions() {
    auto* style = QApplication::style();
    new_ = new QAction(style->standardIcon(QStyle::SP_FileIcon), tr("&New Layout…"), this);
    new_->setShortcut(QKeySequence::New);
    connect(new_, &QAction::triggered, this, &MainWindow::new_layout);
    open_ = new QAction(style->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open Layout…"), this);
    open_->setShortcut(QKeySequence::Open);
    connect(open_, &QAction::triggered, this, &MainWindow::open_dialog);
    save_ = new QAction(style->standardIcon(QStyle::SP_DialogSaveButton), tr("&Save"), this);
    save_->setShortcut(QKeySequence::Save);
    connect(save_, &QAction::triggered, this, &MainWindow::save);
    save_as_ = new QAction(tr("Save &As…"), this);
    save_as_->setShortcut(QKeySequence::SaveAs);
    connect(save_as_, &QAction::triggered, this, &MainWindow::save_as);
    open_model_ = new QAction(tr("Open &Model config.json…"), this);
    open_model_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_M));
    connect(open_model_, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open Hugging Face config"), QString(),
                                                          tr("config.json (*.json)"));
        if (!path.isEmpty()) palette_->use_hf_config(path);
    });
    open_trace_ = new QAction(QIcon(":/icons/trace.svg"), tr("Open &Trace…"), this);
    open_trace_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    connect(open_trace_, &QAction::triggered, this, [this] {
        const QString dir = QSettings().value("files/last_trace_dir").toString();
        // Several files chosen together are the ranks of one job, merged into one view.
        const QStringList paths = QFileDialog::getOpenFileNames(
            this, tr("Open trace (several files: the ranks of one job)"), dir, trace_file_filter());
        if (paths.isEmpty()) return;
        QSettings().setValue("files/last_trace_dir", QFileInfo(paths.front()).absolutePath());
        open_traces(paths);
    });
    undo_ = document_->undo_stack()->createUndoAction(this, tr("&Undo"));
    undo_->setShortcut(QKeySequence::Undo);
    undo_->setIcon(style->standardIcon(QStyle::SP_ArrowBack));
    redo_ = document_->undo_stack()->createRedoAction(this, tr("&Redo"));
    // The platform's redo keys plus both common ones, each once: a key bound twice is
    // ambiguous to Qt and then does nothing.
    QList<QKeySequence> redo_keys = QKeySequence::keyBindings(QKeySequence::Redo);
    for (const QKeySequence& k : {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)})
        if (!redo_keys.contains(k)) redo_keys << k;
    redo_->setShortcuts(redo_keys);
    redo_->setIcon(style->standardIcon(QStyle::SP_ArrowForward));
    // The toolbar shows "Undo" / "Redo" (iconText) and the menu the whole "Undo Set recompute
    // to full": a long label must not push the toolbar's other actions off its end.
    undo_->setIconText(tr("Undo"));
    redo_->setIconText(tr("Redo"));
    auto tip = [](QAction* action) { action->setToolTip(QString(action->text()).remove('&')); };
    connect(undo_, &QAction::changed, this, [this, tip] {
        if (undo_->toolTip() != QString(undo_->text()).remove('&')) tip(undo_);
    });
    connect(redo_, &QAction::changed, this, [this, tip] {
        if (redo_->toolTip() != QString(redo_->text()).remove('&')) tip(redo_);
    });
    dark_ = new QAction(tr("&Dark Theme"), this);
    dark_->setCheckable(true);
    dark_->setChecked(current_theme() == Theme::Dark);
    dark_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L));
    connect(dark_, &QAction::toggled, this, &MainWindow::set_theme);
    search_ = new QAction(QIcon(":/icons/search.svg"), tr("&Search Layouts…"), this);
    search_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F));
    search_->setStatusTip(tr("Find the fastest layouts that fit for this model, cluster and batch"));
    connect(search_, &QAction::triggered, this, &MainWindow::open_search_dialog);
    run_ = new QAction(QIcon(":/icons/run.svg"), tr("&Run Layout…"), this);
    run_->setShortcuts({QKeySequence(Qt::Key_F5), QKeySequence(Qt::CTRL | Qt::Key_R)});
    run_->setStatusTip(tr("Execute the sharded model on this machine, check it and profile it"));
    connect(run_, &QAction::triggered, this, &MainWindow::open_run_dialog);
    export_ = new QAction(QIcon(":/icons/export.svg"), tr("&Export for Production…"), this);
    export_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    export_->setStatusTip(tr("Megatron-LM arguments, DeepSpeed config, a torchtitan config or a SLURM script"));
    connect(export_, &QAction::triggered, this, &MainWindow::open_export_dialog);
    go_to_step_ = new QAction(tr("&Go to Step…"), this);
    go_to_step_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
    go_to_step_->setStatusTip(tr("Zoom the timeline to a step, or to one micro-batch of it (3.1)"));
    connect(go_to_step_, &QAction::triggered, this, [this] {
        if (trace_path_.isEmpty()) {
            show_error(tr("Go to step"), tr("Open a trace first (File → Open Trace)."));
            return;
        }
        bool ok = false;
        const QString text = QInputDialog::getText(this, tr("Go to step"), tr("Step, or step.micro-batch (e.g. 3 or 3.1):"),
                                                   QLineEdit::Normal, QString(), &ok);
        if (!ok) return;
        int step = 0, mb = -1;
        if (!parse_step_target(text, step, mb)) {
            show_error(tr("Go to step"), tr("'%1' is not a step (3) or a step and micro-batch (3.1).").arg(text));
            return;
        }
        go_to_step(step, mb);
    });
    step_locator_ = new StepLocator(this);
    connect(step_locator_, &StepLocator::found, this, [this](qint64 t0, qint64 t1, const QString& what) {
        // A margin of 2% each side so that the first and last events are not on the edge.
        const double pad = std::max<double>(1.0, 0.02 * static_cast<double>(t1 - t0));
        show_view(View::Timeline);
        timeline_->view()->set_visible_window(static_cast<double>(t0) - pad, static_cast<double>(t1) + pad);
        statusBar()->showMessage(tr("Showing %1").arg(what), 4000);
        emit step_shown(t0, t1);
    });
    connect(step_locator_, &StepLocator::failed, this,
            [this](const QString& message) { show_error(tr("Go to step"), message); });
    view_canvas_ = new QAction(tr("&Mesh"), this);
    view_canvas_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_1));
    connect(view_canvas_, &QAction::triggered, this, [this] { show_view(View::Canvas); });
    view_timeline_ = new QAction(tr("&Timeline"), this);
    view_timeline_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_2));
    connect(view_timeline_, &QAction::triggered, this, [this] { show_view(View::Timeline); });
    view_ranks_ = new QAction(tr("&Ranks"), this);
    view_ranks_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_3));
    connect(view_ranks_, &QAction::triggered, this, [this] { show_view(View::Ranks); });
}

void MainWindow::build_menus_and_toolbar() {
    auto* file = menuBar()->addMenu(tr("&File"));
    file->addAction(new_);
    file->addAction(open_);
    auto* recent_menu = file->addMenu(tr("Open &Recent"));
    recent_ = new RecentFiles(recent_menu, "files/recent", tr("No recent layouts"), this);
    connect(recent_, &RecentFiles::open_requested, this, [this](const QString& path) {
        if (maybe_save()) open_layout(path);
    });
    file->addAction(open_model_);
    file->addAction(open_trace_);
    auto* recent_traces_menu = file->addMenu(tr("Open Recent Tra&ce"));
    recent_traces_ = new RecentFiles(recent_traces_menu, "files/recent_traces", tr("No recent traces"), this);
    connect(recent_traces_, &RecentFiles::open_requested, this, &MainWindow::open_trace);
    connect(this, &MainWindow::trace_opened, recent_traces_, &RecentFiles::add);
    trace_menu_ = new TraceMenu({this, timeline_, [this](const QString& path) { open_trace(path); },
                                 [this] { show_view(View::Timeline); }}, file);
    file->addSeparator();
    file->addAction(save_);
    file->addAction(save_as_);
    file->addSeparator();
    auto* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    auto* edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(undo_);
    edit->addAction(redo_);

    file->insertAction(quit, export_);
    file->insertSeparator(quit);

    auto* tools_menu = menuBar()->addMenu(tr("&Tools"));
    tools_menu->addAction(search_);
    tools_menu->addAction(run_);
    tools_menu->addAction(export_);

    auto* view = menuBar()->addMenu(tr("&View"));
    view->addAction(view_canvas_);
    view->addAction(view_timeline_);
    view->addAction(view_ranks_);
    view->addAction(go_to_step_);
    // The Training dock shares its place with the Model dock: this reaches it from the
    // keyboard whichever tab is in front, its first setting focused.
    auto* training = view->addAction(tr("&Training Settings"), this, [this] {
        raise_dock("training");
        training_->micro_batch_box()->setFocus(Qt::ShortcutFocusReason);
    });
    training->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T));
    view->addSeparator();
    for (auto* a : dock_toggles_) view->addAction(a);
    view->addSeparator();
    view->addAction(dark_);

    auto* help = menuBar()->addMenu(tr("&Help"));
    auto* shortcuts = help->addAction(tr("&Keyboard Shortcuts"), this, [this] { open_shortcuts_dialog(this); });
    shortcuts->setObjectName("keyboard_shortcuts");
    help->addAction(tr("&About Meshwork"), this, [this] {
        QMessageBox::about(this, tr("About Meshwork"),
                           tr("<b>Meshwork %1</b><p>Design, predict, run and profile model-parallel layouts.</p>")
                               .arg(QApplication::applicationVersion()));
    });

    auto* tools = addToolBar(tr("Main"));
    tools->setObjectName("main_toolbar");
    tools->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    tools->setMovable(false);
    tools->addAction(new_);
    tools->addAction(open_);
    tools->addAction(save_);
    tools->addAction(open_trace_);
    tools->addSeparator();
    tools->addAction(undo_);
    tools->addAction(redo_);
    tools->addSeparator();
    tools->addAction(search_);
    tools->addAction(run_);
    tools->addAction(export_);
}

void MainWindow::restore_settings() {
    QSettings s;
    if (s.contains("window/geometry")) restoreGeometry(s.value("window/geometry").toByteArray());
    if (s.contains("window/state")) restoreState(s.value("window/state").toByteArray());
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!maybe_save()) {
        event->ignore();
        return;
    }
    QSettings s;
    s.setValue("window/geometry", saveGeometry());
    s.setValue("window/state", saveState());
    event->accept();
}

void MainWindow::update_title() {
    QString name = tr("untitled");
    if (document_->has_layout()) name = QString::fromStdString(document_->layout().name);
    if (!document_->path().isEmpty()) name = QFileInfo(document_->path()).fileName();
    setWindowTitle(tr("%1[*] — Meshwork").arg(name));
    setWindowModified(document_->is_modified());
    save_->setEnabled(document_->has_layout());
    save_as_->setEnabled(document_->has_layout());
    for (QAction* a : {search_, run_, export_}) a->setEnabled(document_->has_layout());
}

bool MainWindow::maybe_save() {
    if (!document_->is_modified()) return true;
    const auto answer = QMessageBox::warning(
        this, tr("Unsaved layout"), tr("The layout has unsaved edits. Save them?"),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Save) return save();
    return answer == QMessageBox::Discard;
}

bool MainWindow::open_layout(const QString& path) {
    try {
        document_->load(path);
        recent_->add(path);
        QSettings().setValue("files/last_dir", QFileInfo(path).absolutePath());
        statusBar()->showMessage(tr("Opened %1").arg(path), 4000);
        return true;
    } catch (const InputError& e) {
        show_error(tr("Cannot open layout"), QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        show_error(tr("Cannot open layout"), QString::fromStdString(e.what()));
    }
    return false;
}

QString trace_file_filter() {
    return QObject::tr("Traces (*.sqlite *.db *.json *.json.gz);;Meshwork traces (*.sqlite *.db);;"
                       "PyTorch / Kineto traces (*.json *.json.gz *.pt.trace.json);;"
                       "Nsight Systems SQLite exports (*.sqlite);;All files (*)");
}

namespace {
// The local files a drag carries; empty when it carries anything else (the canvas's blocks).
QStringList local_files(const QMimeData* mime) {
    QStringList paths;
    if (!mime || !mime->hasUrls()) return paths;
    for (const QUrl& url : mime->urls()) {
        if (!url.isLocalFile()) return {};
        paths << url.toLocalFile();
    }
    return paths;
}
}  // namespace

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (local_files(event->mimeData()).isEmpty()) return QMainWindow::dragEnterEvent(event);
    event->acceptProposedAction();
}

void MainWindow::dragMoveEvent(QDragMoveEvent* event) {
    if (local_files(event->mimeData()).isEmpty()) return QMainWindow::dragMoveEvent(event);
    event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QStringList paths = local_files(event->mimeData());
    if (paths.isEmpty()) return QMainWindow::dropEvent(event);
    event->acceptProposedAction();
    open_files(paths);
}

void MainWindow::open_files(const QStringList& paths) {
    const DroppedFiles files = sort_dropped_files(paths);
    if (files.layouts.size() > 1) {
        show_error(tr("Cannot open layouts"),
                   tr("%n layouts were given at once; open one at a time:\n%1", "", static_cast<int>(files.layouts.size()))
                       .arg(files.layouts.join('\n')));
        return;
    }
    if (!files.layouts.isEmpty()) {
        if (!maybe_save() || !open_layout(files.layouts.front())) return;
    }
    open_traces(files.traces);
}

void MainWindow::open_traces(const QStringList& paths) {
    if (paths.isEmpty()) return;
    if (paths.size() == 1) {
        open_trace(paths.front());
        return;
    }
    // Several traces are the ranks of one job: merged into one trace (with progress), opened.
    for (const QString& path : paths) {
        RemoteSpec remote;
        if (is_remote_trace(path, remote)) {
            show_error(tr("Cannot open traces"), tr("%1: a remote trace opens alone, not as one rank of several").arg(path));
            return;
        }
    }
    trace_menu_->import_traces(paths);
}

void MainWindow::open_trace(const QString& path) {
    // A Kineto JSON or an nsys export is imported on the fly (with its progress dialog) and
    // the result opened; what it is comes from its content, not its name.
    RemoteSpec remote;
    if (!is_remote_trace(path, remote) && QFileInfo(path).isFile()) {
        try {
            if (profiler::detect_input_format(path.toStdString()) != profiler::InputFormat::MeshworkTrace) {
                trace_menu_->import_trace(path);
                return;
            }
        } catch (const std::exception&) {
            // Not a trace of any kind: the trace opener reports it in words below.
        }
    }
    statusBar()->showMessage(tr("Opening trace %1…").arg(path));
    busy_->show();
    trace_opener_->open(path);
}

void MainWindow::show_error(const QString& title, const QString& text) {
    last_error_ = text;
    statusBar()->showMessage(title, 8000);
    auto* box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::new_layout() {
    if (!maybe_save()) return;
    NewLayoutDialog dialog(this);
    if (dialog.exec() == QDialog::Accepted) document_->reset(dialog.layout(), QString());
}

void MainWindow::open_dialog() {
    if (!maybe_save()) return;
    const QString dir = QSettings().value("files/last_dir").toString();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open layout"), dir, tr("Layouts (*.json)"));
    if (!path.isEmpty()) open_layout(path);
}

bool MainWindow::save() {
    if (document_->path().isEmpty()) return save_as();
    try {
        document_->save(document_->path());
        statusBar()->showMessage(tr("Saved %1").arg(document_->path()), 4000);
        return true;
    } catch (const std::exception& e) {
        QMessageBox::critical(this, tr("Cannot save layout"), QString::fromStdString(e.what()));
    }
    return false;
}

bool MainWindow::save_as() {
    if (!document_->has_layout()) return false;
    QString dir = QSettings().value("files/last_dir").toString();
    const QString suggested = dir + "/" + QString::fromStdString(document_->layout().name) + ".json";
    const QString path = QFileDialog::getSaveFileName(this, tr("Save layout"), suggested, tr("Layouts (*.json)"));
    if (path.isEmpty()) return false;
    try {
        document_->save(path);
        recent_->add(path);
        QSettings().setValue("files/last_dir", QFileInfo(path).absolutePath());
        return true;
    } catch (const std::exception& e) {
        QMessageBox::critical(this, tr("Cannot save layout"), QString::fromStdString(e.what()));
    }
    return false;
}

bool MainWindow::showing_start_page() const { return central_->currentWidget() == start_page_; }

void MainWindow::show_view(View view) {
    // Focus leaves the page before it hides: a hidden focus widget hands the focus on as Tab
    // would, to the next widget in the chain (a dock's), which would raise that dock.
    if (QWidget* focused = QApplication::focusWidget(); focused && views_->isVisible() &&
                                                         views_->currentWidget()->isAncestorOf(focused))
        views_->setFocus(Qt::OtherFocusReason);
    central_->setCurrentWidget(views_);
    views_->setCurrentWidget(view == View::Canvas ? static_cast<QWidget*>(canvas_)
                             : view == View::Timeline ? static_cast<QWidget*>(timeline_)
                                                      : static_cast<QWidget*>(ranks_));
    // The view shown takes the keyboard, so its own keys (the timeline's Ctrl+F, the mesh's
    // arrows) work at once, as after a click into it.
    if (view == View::Canvas) canvas_->setFocus(Qt::OtherFocusReason);
    else if (view == View::Timeline) timeline_->view()->setFocus(Qt::OtherFocusReason);
    else ranks_->setFocus(Qt::OtherFocusReason);
}

void MainWindow::load_rank_overview() {
    if (trace_path_.isEmpty() || trace_path_ == ranks_path_) return;
    ranks_path_ = trace_path_;
    rank_loader_->load(trace_path_);
}

void MainWindow::show_ranks_in_timeline(const QList<int>& ranks, int step) {
    show_view(View::Timeline);
    if (!timeline_->view()->show_ranks(std::vector<int>(ranks.begin(), ranks.end()))) {
        statusBar()->showMessage(tr("No lanes for those ranks in the open trace"), 4000);
        return;
    }
    statusBar()->showMessage(ranks.size() == 1 ? tr("Rank %1").arg(ranks.front())
                                               : tr("%1 ranks").arg(ranks.size()), 4000);
    if (step >= 0) go_to_step(step, -1);
}

void MainWindow::set_theme(bool dark) {
    const Theme theme = dark ? Theme::Dark : Theme::Light;
    apply_theme(theme);
    save_theme(theme);
    // Custom-painted views and style sheets read view_colours() when they paint.
    emit document_->changed();
    update();
}

// A tool dialog is one per window: asking again raises it. Each works on a copy of the
// layout as it was when opened, so edits made meanwhile never race a running search or run.
template <class Dialog>
static bool raise_existing(const QPointer<Dialog>& dialog) {
    if (!dialog) return false;
    dialog->show();
    dialog->raise();
    dialog->activateWindow();
    return true;
}

SearchDialog* MainWindow::search_dialog() const { return search_dialog_.data(); }
RunDialog* MainWindow::run_dialog() const { return run_dialog_.data(); }
ExportDialog* MainWindow::export_dialog() const { return export_dialog_.data(); }

void MainWindow::go_to_step(int step, int micro_batch) {
    if (trace_path_.isEmpty()) {
        show_error(tr("Go to step"), tr("Open a trace first (File → Open Trace)."));
        return;
    }
    statusBar()->showMessage(tr("Looking for step %1…").arg(step));
    busy_->show();
    step_locator_->locate(trace_path_, step, micro_batch);
}

void MainWindow::open_search_dialog() {
    if (!document_->has_layout() || raise_existing(search_dialog_)) return;
    search_dialog_ = new SearchDialog(document_->layout(), this);
    search_dialog_->setAttribute(Qt::WA_DeleteOnClose);
    connect(search_dialog_, &SearchDialog::apply_requested, this, [this](const Layout& layout, const QString& what) {
        const EditOutcome outcome = document_->apply(ProposedEdit{layout, what.toStdString(), {}});
        if (outcome.accepted) {
            show_view(View::Canvas);
            statusBar()->showMessage(what, 6000);
        } else {
            show_error(tr("Cannot apply the search result"), outcome.reason);
        }
    });
    search_dialog_->show();
}

void MainWindow::open_run_dialog() {
    if (!document_->has_layout() || raise_existing(run_dialog_)) return;
    run_dialog_ = new RunDialog(document_->layout(), this);
    run_dialog_->setAttribute(Qt::WA_DeleteOnClose);
    connect(run_dialog_, &RunDialog::profile_ready, this, &MainWindow::open_trace);
    run_dialog_->show();
}

void MainWindow::open_export_dialog() {
    if (!document_->has_layout() || raise_existing(export_dialog_)) return;
    export_dialog_ = new ExportDialog(document_->layout(), document_->path(), this);
    export_dialog_->setAttribute(Qt::WA_DeleteOnClose);
    export_dialog_->show();
}

}  // namespace meshwork::gui
