// Tools → Search Layouts: the best layouts for the open model and cluster at a world size
// and batch, searched on a worker thread (SearchRunner) with a progress bar and Cancel;
// results in a sortable table; Apply (or a double-click) loads the chosen layout into the
// document as one undoable edit.
#pragma once

#include <QDialog>

#include <memory>

#include "core/layout/layout.h"
#include "core/search/search.h"

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;

namespace meshwork::gui {

class SearchResultsModel;
class SearchRunner;

class SearchDialog : public QDialog {
    Q_OBJECT
public:
    // The job (model, cluster, world size, batch, sequence, dtype, gradient type, FSDP shards)
    // starts from `current`.
    explicit SearchDialog(const Layout& current, QWidget* parent = nullptr);

    // Builds the request from the fields and starts; false with the reason in status_text().
    bool start_search();
    // The request the fields and the open layout make (throws InputError naming "--fix").
    [[nodiscard]] search::SearchRequest build_request() const;
    void cancel_search();
    [[nodiscard]] bool searching() const;
    [[nodiscard]] QString status_text() const;
    [[nodiscard]] QTableView* results_view() const { return table_; }
    [[nodiscard]] SearchResultsModel* results() const { return results_; }
    [[nodiscard]] QProgressBar* progress_bar() const { return progress_; }
    // The layout of the row at `view_row` (in the view's sorted order).
    [[nodiscard]] Layout layout_at(int view_row) const;
    void set_world(int gpus, int global_batch_size, int seq_length, int top_k);
    void set_fixed(const QString& assignments);  // "tp=8 pp=4"
    void apply_row(int view_row);

signals:
    void apply_requested(const meshwork::Layout& layout, const QString& description);
    void search_done(bool cancelled);

protected:
    void reject() override;  // Esc cancels a running search before it closes the dialog

private:
    void show_result(const search::SearchResult& r);
    void set_running(bool running);

    Layout current_;
    SearchRunner* runner_ = nullptr;
    SearchResultsModel* results_ = nullptr;
    QSortFilterProxyModel* sorted_ = nullptr;
    QSpinBox* gpus_ = nullptr;
    QSpinBox* gbs_ = nullptr;
    QSpinBox* seq_ = nullptr;
    QSpinBox* top_ = nullptr;
    QSpinBox* max_tp_ = nullptr;
    QDoubleSpinBox* min_mfu_ = nullptr;
    QLineEdit* fixed_ = nullptr;
    QCheckBox* simulate_ = nullptr;
    QPushButton* search_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QPushButton* apply_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* status_ = nullptr;
    QTableView* table_ = nullptr;
};

}  // namespace meshwork::gui
