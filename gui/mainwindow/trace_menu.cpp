#include "gui/mainwindow/trace_menu.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QProgressDialog>
#include <QSettings>
#include <QStatusBar>

#include <exception>

#include "gui/app/format.h"
#include "gui/compare/compare_panel.h"
#include "gui/compare/comparison_loader.h"
#include "gui/compare/trace_roles.h"
#include "profiler/import/import_trace.h"
#include "gui/timeline/timeline_panel.h"
#include "gui/timeline/timeline_view.h"
#include "gui/timeline/trace_reader_source.h"
#include "gui/trace/remote_fetch.h"
#include "gui/trace/remote_trace_source.h"
#include "gui/trace/trace_cache.h"
#include "gui/trace/trace_import_job.h"

namespace meshwork::gui {

TraceMenu::TraceMenu(WindowHooks hooks, QMenu* file)
    : QObject(hooks.window), hooks_(std::move(hooks)), window_(hooks_.window) {
    loader_ = new ComparisonLoader(this);
    import_ = new TraceImportJob(this);
    fetch_ = new RemoteFetch(this);

    auto* compare = file->addAction(tr("Open Trace for &Comparison…"), this, &TraceMenu::choose_comparison);
    compare->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    compare->setStatusTip(tr("Show another trace beside the open one on the same time axis, with the "
                             "predicted-vs-measured table"));
    auto* import_menu = file->addMenu(tr("&Import"));
    auto* nsys = import_menu->addAction(tr("&Nsight Systems SQLite…"), this, [this] {
        choose_import(tr("Import an Nsight Systems export"),
                      tr("nsys SQLite exports (*.sqlite *.db);;All files (*)"));
    });
    nsys->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_I));
    nsys->setStatusTip(tr("A report exported with nsys export --type sqlite"));
    auto* kineto = import_menu->addAction(tr("&PyTorch Profiler Trace…"), this, [this] {
        choose_import(tr("Import a PyTorch profiler trace"),
                      tr("PyTorch / Kineto traces (*.json *.json.gz *.pt.trace.json);;All files (*)"));
    });
    kineto->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
    kineto->setStatusTip(tr("A Chrome-trace JSON written by torch.profiler (plain or gzip)"));
    auto* remote = file->addAction(tr("Open &Remote Trace…"), this, &TraceMenu::choose_remote);
    remote->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    remote->setStatusTip(tr("Open host:path served through ssh by that host's meshwork-cli (only what is drawn "
                            "crosses the network), or copy it with scp when the host cannot serve it"));

    connect(loader_, &ComparisonLoader::loaded, this, [this](std::shared_ptr<const ComparisonData> data) {
        hooks_.timeline->show_comparison(std::move(data));
        hooks_.show_timeline();
        window_->statusBar()->showMessage(tr("Comparison ready"), 4000);
        emit comparison_shown();
    });
    connect(loader_, &ComparisonLoader::failed, this,
            [this](const QString& message) { show_error(tr("Cannot compare traces"), message); });
    if (auto* panel = hooks_.timeline->comparison()) {
        connect(panel, &ComparePanel::swap_requested, this, &TraceMenu::compare);
        connect(panel, &ComparePanel::calibrate_requested, this, &TraceMenu::calibrate);
        connect(panel, &ComparePanel::warmup_changed, this, &TraceMenu::compare);
    }

    connect(import_, &TraceImportJob::progress, this, [this](qint64 events) {
        if (progress_) {
            // Importers read the whole input before writing the first event.
            progress_->setLabelText(events == 0 ? tr("Importing %1…\nreading the file").arg(QFileInfo(importing_).fileName())
                                                : tr("Importing %1…\n%2 events written")
                                                      .arg(QFileInfo(importing_).fileName(),
                                                           format_count(static_cast<double>(events))));
        }
    });
    connect(import_, &TraceImportJob::finished, this, [this](const QString& output, const QString& summary) {
        hide_progress();
        window_->statusBar()->showMessage(tr("Imported %1 (%2)").arg(QFileInfo(importing_).fileName(), summary), 6000);
        hooks_.open_trace(output);
        emit import_finished(output);
    });
    connect(import_, &TraceImportJob::failed, this, [this](const QString& input, const QString& message) {
        show_error(tr("Cannot import trace"), tr("%1\n\n%2").arg(input, message));
    });
    connect(import_, &TraceImportJob::cancelled, this, [this](const QString& input) {
        hide_progress();
        window_->statusBar()->showMessage(tr("Import of %1 cancelled").arg(input), 4000);
        emit failed(tr("cancelled"));
    });

    connect(fetch_, &RemoteFetch::progress, this, [this](qint64 bytes) {
        if (progress_) {
            progress_->setLabelText(tr("Fetching %1 with scp…\n%2 received")
                                        .arg(fetching_, format_bytes(static_cast<double>(bytes))));
        }
    });
    connect(fetch_, &RemoteFetch::finished, this, [this](const QString& local) {
        hide_progress();
        emit remote_fetched(local);
        open_fetched(local);
    });
    connect(fetch_, &RemoteFetch::failed, this, [this](const QString& message) {
        show_error(tr("Cannot fetch remote trace"),
                   not_served_.isEmpty() ? message
                                         : tr("%1\n\nIt could not be served either: %2").arg(message, not_served_));
    });
    connect(fetch_, &RemoteFetch::cancelled, this, [this] {
        hide_progress();
        window_->statusBar()->showMessage(tr("Fetch of %1 cancelled").arg(fetching_), 4000);
        emit failed(tr("cancelled"));
    });
}

QString TraceMenu::current_trace_path() const {
    const auto* source = dynamic_cast<const TraceReaderSource*>(hooks_.timeline->view()->source());
    return source ? QString::fromStdString(source->reader().path()) : QString();
}

void TraceMenu::choose_comparison() {
    const QString dir = QSettings().value("files/last_trace_dir").toString();
    const QString current = current_trace_path();
    // With a trace open, one file to set beside it; otherwise pick both. Either way the
    // simulated trace is the prediction, and the title says which role the choice takes.
    const auto* open = dynamic_cast<const TraceReaderSource*>(hooks_.timeline->view()->source());
    const QString title =
        current.isEmpty() || !open
            ? tr("Choose two traces to compare: the simulated one is the prediction (of two measured runs, "
                 "the first is the reference)")
            : comparison_prompt(QFileInfo(current).fileName(), role_of(open->reader().run_info()));
    const QStringList paths = QFileDialog::getOpenFileNames(window_, title, dir,
                                                            tr("Meshwork traces (*.sqlite *.db);;All files (*)"));
    if (paths.isEmpty()) return;
    QSettings().setValue("files/last_trace_dir", QFileInfo(paths.front()).absolutePath());
    if (paths.size() >= 2) compare_by_role(paths[0], paths[1]);
    else compare_with_current(paths[0]);
}

void TraceMenu::compare_with_current(const QString& path) {
    const QString current = current_trace_path();
    if (dynamic_cast<const RemoteTraceSource*>(hooks_.timeline->view()->source())) {
        show_error(tr("Cannot compare traces"),
                   tr("The trace in the timeline is served from another machine; comparing reads both traces "
                      "whole, so choose two local files (or copy it with scp first)."));
        return;
    }
    if (current.isEmpty()) {
        show_error(tr("Cannot compare traces"),
                   tr("Open a trace first (File → Open Trace), or choose two traces to compare."));
        return;
    }
    compare_by_role(current, path);
}

void TraceMenu::compare_by_role(const QString& first_path, const QString& second_path) {
    window_->statusBar()->showMessage(tr("Comparing %1 with %2…")
                                          .arg(QFileInfo(first_path).fileName(), QFileInfo(second_path).fileName()));
    loader_->load(first_path, second_path, profiler::kDefaultWarmupSteps, RoleOrder::FromTraces);
}

void TraceMenu::compare(const QString& predicted_path, const QString& measured_path, int warmup_steps) {
    window_->statusBar()->showMessage(tr("Comparing %1 with %2…")
                                          .arg(QFileInfo(predicted_path).fileName(), QFileInfo(measured_path).fileName()));
    loader_->load(predicted_path, measured_path, warmup_steps);
}

void TraceMenu::calibrate(const QString& predicted_path, const QString& measured_path, int warmup_steps) {
    window_->statusBar()->showMessage(
        tr("Calibrating on %1 and predicting again…").arg(QFileInfo(measured_path).fileName()));
    loader_->calibrate(predicted_path, measured_path, trace_cache_dir("calibrated"), warmup_steps);
}

void TraceMenu::choose_import(const QString& title, const QString& filter) {
    const QString dir = QSettings().value("files/last_import_dir").toString();
    const QString path = QFileDialog::getOpenFileName(window_, title, dir, filter);
    if (path.isEmpty()) return;
    QSettings().setValue("files/last_import_dir", QFileInfo(path).absolutePath());
    import_trace(path);
}

void TraceMenu::import_trace(const QString& path) {
    if (import_->running()) {
        show_error(tr("Cannot import trace"), tr("An import is already running (%1).").arg(importing_));
        return;
    }
    const QString output = import_cache_path(path);
    if (output.isEmpty()) {
        show_error(tr("Cannot import trace"), tr("The trace cache folder cannot be created."));
        return;
    }
    importing_ = path;
    if (QFileInfo::exists(output)) {
        // Imported before, and the input is unchanged (the cache key holds its size and time).
        window_->statusBar()->showMessage(tr("Opening the earlier import of %1").arg(QFileInfo(path).fileName()), 4000);
        hooks_.open_trace(output);
        emit import_finished(output);
        return;
    }
    show_progress(tr("Importing %1…").arg(QFileInfo(path).fileName()), [this] { import_->cancel(); });
    import_->start(path, output);
}

void TraceMenu::import_traces(const QStringList& paths) {
    if (paths.size() == 1) {
        import_trace(paths.front());
        return;
    }
    if (import_->running()) {
        show_error(tr("Cannot import traces"), tr("An import is already running (%1).").arg(importing_));
        return;
    }
    const QString output = import_cache_path(paths);
    if (output.isEmpty()) {
        show_error(tr("Cannot import traces"), tr("The trace cache folder cannot be created."));
        return;
    }
    importing_ = paths.front();
    if (QFileInfo::exists(output)) {
        hooks_.open_trace(output);
        emit import_finished(output);
        return;
    }
    show_progress(tr("Merging %n file(s) as the ranks of one trace…", "", static_cast<int>(paths.size())),
                  [this] { import_->cancel(); });
    import_->start_many(paths, output);
}

void TraceMenu::choose_remote() {
    bool ok = false;
    const QString last = QSettings().value("files/last_remote").toString();
    const QString spec = QInputDialog::getText(
        window_, tr("Open Remote Trace"),
        tr("Trace on a remote machine, as host:path (served by its meshwork-cli through ssh, or copied with scp; "
           "keys or an ssh agent, no password prompt):"),
        QLineEdit::Normal, last, &ok);
    if (!ok || spec.trimmed().isEmpty()) return;
    QSettings().setValue("files/last_remote", spec.trimmed());
    open_remote(spec);
}

void TraceMenu::open_remote(const QString& spec) {
    RemoteSpec remote;
    QString error;
    if (!parse_remote_spec(spec, remote, error)) {
        show_error(tr("Cannot open remote trace"), error);
        return;
    }
    hooks_.open_trace(remote.host + ':' + remote.path);
}

void TraceMenu::fetch_remote(const QString& spec, const QString& why_not_served) {
    RemoteSpec remote;
    QString error;
    not_served_ = why_not_served;
    if (!parse_remote_spec(spec, remote, error)) {
        show_error(tr("Cannot fetch remote trace"), error);
        return;
    }
    if (fetch_->running()) {
        show_error(tr("Cannot fetch remote trace"), tr("A fetch is already running (%1).").arg(fetching_));
        return;
    }
    fetching_ = remote.host + ':' + remote.path;
    const QString local = remote_cache_path(remote.host, remote.path);
    if (local.isEmpty()) {
        show_error(tr("Cannot fetch remote trace"), tr("The trace cache folder cannot be created."));
        return;
    }
    show_progress(tr("Fetching %1 with scp…").arg(fetching_), [this] { fetch_->cancel(); });
    fetch_->start(remote, local);
}

void TraceMenu::open_fetched(const QString& local_path) {
    // A cluster run may have left an nsys export or a PyTorch trace rather than a Meshwork
    // trace: those are imported first, by content.
    try {
        if (profiler::detect_input_format(local_path.toStdString()) != profiler::InputFormat::MeshworkTrace) {
            import_trace(local_path);
            return;
        }
    } catch (const std::exception& e) {
        show_error(tr("Cannot open remote trace"), tr("%1 (fetched from %2)\n\n%3").arg(local_path, fetching_, e.what()));
        return;
    }
    hooks_.open_trace(local_path);
}

void TraceMenu::show_progress(const QString& text, const std::function<void()>& on_cancel) {
    hide_progress();
    progress_ = new QProgressDialog(text, tr("Cancel"), 0, 0, window_);
    progress_->setWindowTitle(tr("Meshwork"));
    progress_->setAttribute(Qt::WA_DeleteOnClose);
    progress_->setMinimumDuration(300);  // quick jobs never flash a dialog
    progress_->setAutoClose(false);
    progress_->setAutoReset(false);
    connect(progress_, &QProgressDialog::canceled, this, [this, on_cancel] {
        if (progress_) progress_->setLabelText(tr("Cancelling…"));
        on_cancel();
    });
    progress_->setValue(0);
}

void TraceMenu::hide_progress() {
    if (progress_) {
        progress_->disconnect(this);
        progress_->close();
        progress_ = nullptr;
    }
}

void TraceMenu::show_error(const QString& title, const QString& text) {
    hide_progress();
    last_error_ = text;
    window_->statusBar()->showMessage(title, 8000);
    auto* box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, window_);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
    emit failed(text);
}

}  // namespace meshwork::gui
