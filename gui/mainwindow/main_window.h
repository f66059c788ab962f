// The workbench window: the mesh canvas, the timeline and the rank overview as central views; the model
// palette, the axis editor, the estimate panel and the edit history as docks.
#pragma once

#include <QMainWindow>
#include <QPointer>

class QAction;
class QLabel;
class QProgressBar;
class QStackedWidget;
class QTabWidget;

namespace meshwork::gui {

class AxisEditor;
class EstimatePanel;
class ExportDialog;
class LayoutDocument;
class MeshCanvas;
class ModelPalette;
class RankOverviewPanel;
class RankStepsLoader;
class RecentFiles;
class RunDialog;
class SearchDialog;
class StartPage;
class StepLocator;
class TimelinePanel;
class TraceMenu;
class TraceOpener;
class TrainingEditor;

// The Open Trace dialog's filter: Meshwork traces, Kineto JSON (plain or gzip), nsys exports.
QString trace_file_filter();

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    enum class View { Canvas, Timeline, Ranks };

    explicit MainWindow(QWidget* parent = nullptr);
    // Loads a layout file; errors are shown to the user and returned as false.
    bool open_layout(const QString& path);
    // Shows a central view (and leaves the start page).
    void show_view(View view);
    // The page shown until a layout or a trace is open (new, open, the bundled examples).
    [[nodiscard]] StartPage* start_page() const { return start_page_; }
    [[nodiscard]] bool showing_start_page() const;
    // Opens a trace file on a worker thread; trace_opened or trace_failed follows. "host:/path"
    // is served from that host (falling back to an scp copy when it cannot serve it). A
    // Kineto JSON or an nsys export is imported first (TraceMenu::import_trace, with progress).
    void open_trace(const QString& path);
    // Several traces at once (File → Open Trace with several chosen, the command line, a
    // drop): one opens as open_trace does, several are the ranks of one job, merged with
    // progress (TraceMenu::import_traces) into one view.
    void open_traces(const QStringList& paths);
    // Files handed to the window whole (dropped on it): a layout opens as a layout
    // (dropped_files.h tells it from a Kineto JSON), the traces as open_traces does.
    void open_files(const QStringList& paths);
    // The latest error shown to the user (empty when none): for tests and --screenshot.
    [[nodiscard]] QString last_error() const { return last_error_; }

    [[nodiscard]] LayoutDocument* document() const { return document_; }
    [[nodiscard]] MeshCanvas* canvas() const { return canvas_; }
    [[nodiscard]] ModelPalette* palette() const { return palette_; }
    [[nodiscard]] AxisEditor* axis_editor() const { return axis_editor_; }
    [[nodiscard]] TrainingEditor* training_editor() const { return training_; }
    // Shows and raises a dock by its short name (model, parallelism, training, estimate,
    // history); false when there is none of that name.
    bool raise_dock(const QString& name);
    [[nodiscard]] EstimatePanel* estimate_panel() const { return estimate_; }
    [[nodiscard]] TimelinePanel* timeline() const { return timeline_; }
    // The Ranks tab: ranks × steps of the open trace, computed when the tab is first shown
    // for that trace (rank_overview_ready or rank_overview_failed follows).
    [[nodiscard]] RankOverviewPanel* rank_overview() const { return ranks_; }
    // Shows the lanes of `ranks` in the timeline, at `step` when it is >= 0.
    void show_ranks_in_timeline(const QList<int>& ranks, int step);
    // Compare, import and remote-open entries of the File menu.
    [[nodiscard]] TraceMenu* trace_menu() const { return trace_menu_; }
    // The tool dialog open now, or nullptr (tests drive them; a second request raises it).
    [[nodiscard]] SearchDialog* search_dialog() const;
    [[nodiscard]] RunDialog* run_dialog() const;
    [[nodiscard]] ExportDialog* export_dialog() const;
    // Tools: non-modal dialogs over the current layout (search applies, run profiles).
    void open_search_dialog();
    void open_run_dialog();
    void open_export_dialog();
    // Shows step `step` (micro-batch `micro_batch` when >= 0) of the open trace file in the
    // timeline, found on a worker thread; step_shown or the error follows.
    void go_to_step(int step, int micro_batch);

signals:
    void trace_opened(const QString& path);
    void trace_failed(const QString& path, const QString& message);
    // A remote trace (host:path) whose host cannot serve it: it is copied with scp instead.
    void remote_serve_unavailable(const QString& spec, const QString& reason);
    // The session of the remote trace in the timeline died (the error is shown).
    void remote_trace_lost(const QString& spec, const QString& message);
    void step_shown(qint64 start_ns, qint64 end_ns);
    void rank_overview_ready();
    void rank_overview_failed(const QString& message);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void build_docks();
    void build_actions();
    void build_menus_and_toolbar();
    void restore_settings();
    void update_title();
    // Asks whether to save an edited layout; false when the user cancels.
    bool maybe_save();
    void new_layout();
    void open_dialog();
    bool save();
    bool save_as();
    void set_theme(bool dark);
    // Non-blocking error dialog (a modal exec() would stall offscreen runs and tests).
    void show_error(const QString& title, const QString& text);
    // Computes the rank overview of the open trace unless it is current.
    void load_rank_overview();

    LayoutDocument* document_ = nullptr;
    QStackedWidget* central_ = nullptr;  // the start page, then the views
    StartPage* start_page_ = nullptr;
    QTabWidget* views_ = nullptr;
    MeshCanvas* canvas_ = nullptr;
    TimelinePanel* timeline_ = nullptr;
    RankOverviewPanel* ranks_ = nullptr;
    RankStepsLoader* rank_loader_ = nullptr;
    QString ranks_path_;  // the trace the rank overview shows or is computing
    ModelPalette* palette_ = nullptr;
    AxisEditor* axis_editor_ = nullptr;
    TrainingEditor* training_ = nullptr;
    EstimatePanel* estimate_ = nullptr;
    RecentFiles* recent_ = nullptr;
    RecentFiles* recent_traces_ = nullptr;
    QLabel* status_ = nullptr;
    QProgressBar* busy_ = nullptr;  // indeterminate, while a trace opens or a step is looked up
    TraceOpener* trace_opener_ = nullptr;
    TraceMenu* trace_menu_ = nullptr;
    QString last_error_;
    QString trace_path_;  // the trace file in the timeline, for Go to Step
    StepLocator* step_locator_ = nullptr;
    QAction* go_to_step_ = nullptr;
    QPointer<SearchDialog> search_dialog_;
    QPointer<RunDialog> run_dialog_;
    QPointer<ExportDialog> export_dialog_;

    QAction* new_ = nullptr;
    QAction* open_ = nullptr;
    QAction* save_ = nullptr;
    QAction* save_as_ = nullptr;
    QAction* open_model_ = nullptr;
    QAction* open_trace_ = nullptr;
    QAction* undo_ = nullptr;
    QAction* redo_ = nullptr;
    QAction* dark_ = nullptr;
    QAction* search_ = nullptr;
    QAction* run_ = nullptr;
    QAction* export_ = nullptr;
    QAction* view_canvas_ = nullptr;
    QAction* view_timeline_ = nullptr;
    QAction* view_ranks_ = nullptr;
    QList<QAction*> dock_toggles_;
};

}  // namespace meshwork::gui
