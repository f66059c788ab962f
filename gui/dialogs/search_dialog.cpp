#include "gui/dialogs/search_dialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QShortcut>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

#include "gui/app/format.h"
#include "gui/app/theme.h"
#include "gui/dialogs/search_results_model.h"
#include "gui/dialogs/search_runner.h"
#include "core/search/search_options.h"

namespace meshwork::gui {

namespace {
QSpinBox* spin(QWidget* parent, int min, int max, int value) {
    auto* s = new QSpinBox(parent);
    s->setRange(min, max);
    s->setValue(value);
    s->setGroupSeparatorShown(true);
    return s;
}
}  // namespace

SearchDialog::SearchDialog(const Layout& current, QWidget* parent)
    : QDialog(parent), current_(current), runner_(new SearchRunner(this)), results_(new SearchResultsModel(this)) {
    setWindowTitle(tr("Search layouts — %1 on %2").arg(QString::fromStdString(current.model.name),
                                                       QString::fromStdString(current.cluster.name)));
    auto* outer = new QVBoxLayout(this);

    auto* job = new QHBoxLayout;
    auto* left = new QFormLayout;
    auto* right = new QFormLayout;
    gpus_ = spin(this, 1, 1 << 22, current.gpus);
    gbs_ = spin(this, 1, 1 << 24, current.training.global_batch_size);
    seq_ = spin(this, 1, 1 << 24, current.training.seq_length);
    left->addRow(tr("&GPUs:"), gpus_);
    left->addRow(tr("Global &batch (sequences):"), gbs_);
    left->addRow(tr("Se&quence length:"), seq_);
    top_ = spin(this, 1, 1000, 20);
    max_tp_ = spin(this, 0, 1 << 16, 0);
    max_tp_->setSpecialValueText(tr("node size"));
    min_mfu_ = new QDoubleSpinBox(this);
    min_mfu_->setRange(0, 100);
    min_mfu_->setSuffix(" %");
    min_mfu_->setDecimals(1);
    right->addRow(tr("Show the &top:"), top_);
    right->addRow(tr("Max &TP:"), max_tp_);
    right->addRow(tr("Min &MFU:"), min_mfu_);
    job->addLayout(left);
    job->addLayout(right);
    outer->addLayout(job);

    auto* constraints = new QFormLayout;
    fixed_ = new QLineEdit(this);
    fixed_->setPlaceholderText(tr("e.g. tp=8 pp=4 recompute=selective   (keys: %1)").arg(search::fix_keys()));
    constraints->addRow(tr("&Fixed settings:"), fixed_);
    simulate_ = new QCheckBox(tr("Re-rank the front-runners with the discrete-event &simulator"), this);
    simulate_->setChecked(true);
    constraints->addRow(QString(), simulate_);
    outer->addLayout(constraints);

    auto* run_row = new QHBoxLayout;
    search_ = new QPushButton(tr("&Search"), this);
    search_->setDefault(true);
    search_->setToolTip(tr("Ctrl+Return"));
    cancel_ = new QPushButton(tr("&Cancel search"), this);
    cancel_->setEnabled(false);
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1000);
    progress_->setValue(0);
    progress_->setFormat("%p%");
    run_row->addWidget(search_);
    run_row->addWidget(cancel_);
    run_row->addWidget(progress_, 1);
    outer->addLayout(run_row);

    status_ = new QLabel(tr("Set the job and press Search."), this);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    outer->addWidget(status_);

    sorted_ = new QSortFilterProxyModel(this);
    sorted_->setSourceModel(results_);
    sorted_->setSortRole(SearchResultsModel::kSortRole);
    table_ = new QTableView(this);
    table_->setModel(sorted_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(SearchResultsModel::Rank, Qt::AscendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setAlternatingRowColors(true);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    outer->addWidget(table_, 1);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    apply_ = buttons->addButton(tr("&Apply to layout"), QDialogButtonBox::ApplyRole);
    apply_->setEnabled(false);
    outer->addWidget(buttons);

    connect(search_, &QPushButton::clicked, this, &SearchDialog::start_search);
    connect(new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), this), &QShortcut::activated, this,
            &SearchDialog::start_search);
    connect(cancel_, &QPushButton::clicked, this, &SearchDialog::cancel_search);
    connect(buttons, &QDialogButtonBox::rejected, this, &SearchDialog::reject);
    connect(apply_, &QPushButton::clicked, this, [this] {
        const auto rows = table_->selectionModel()->selectedRows();
        if (!rows.isEmpty()) apply_row(rows.front().row());
    });
    connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) { apply_row(index.row()); });
    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { apply_->setEnabled(table_->selectionModel()->hasSelection()); });
    connect(runner_, &SearchRunner::progress, this, [this](qint64 done, qint64 total) {
        progress_->setValue(total > 0 ? static_cast<int>(1000.0 * static_cast<double>(done) / static_cast<double>(total)) : 0);
        progress_->setFormat(tr("%p%  (%1 of %2 layouts)").arg(format_count(static_cast<double>(done)),
                                                             format_count(static_cast<double>(total))));
    });
    connect(runner_, &SearchRunner::finished, this, [this](const std::shared_ptr<const search::SearchResult>& r) {
        set_running(false);
        show_result(*r);
        emit search_done(r->cancelled);
    });
    connect(runner_, &SearchRunner::failed, this, [this](const QString& message) {
        set_running(false);
        status_->setText(tr("Cannot search: %1").arg(message));
        status_->setStyleSheet(QString("color: %1").arg(view_colours().error.name()));
        emit search_done(false);
    });
    resize(1100, 640);
}

void SearchDialog::set_world(int gpus, int global_batch_size, int seq_length, int top_k) {
    gpus_->setValue(gpus);
    gbs_->setValue(global_batch_size);
    seq_->setValue(seq_length);
    top_->setValue(top_k);
}

void SearchDialog::set_fixed(const QString& assignments) { fixed_->setText(assignments); }

search::SearchRequest SearchDialog::build_request() const {
    search::SearchRequest req;
    req.model = current_.model;
    req.model_ref = current_.model_ref;
    req.cluster = current_.cluster;
    req.cluster_ref = current_.cluster_ref;
    auto& o = req.options;
    o.gpus = gpus_->value();
    o.global_batch_size = gbs_->value();
    o.seq_length = seq_->value();
    // The job's framework settings, like its precision, come from the open layout: the
    // gradients' type and how its FSDP keeps ZeRO-3 shards (search --grad-reduce-dtype,
    // --fsdp-fp32-shards).
    o.dtype = current_.training.dtype;
    o.grad_reduce_in_bf16 = current_.training.grad_reduce_in_bf16;
    o.fsdp_fp32_shards = current_.training.fsdp_fp32_shards;
    o.order = current_.parallel.mesh.order;
    o.top_k = top_->value();
    o.max_tp = max_tp_->value();
    o.min_mfu = min_mfu_->value() / 100.0;
    // Throws InputError naming "--fix" for an unknown key or a bad value.
    for (const QString& a : fixed_->text().split(QRegularExpression("[\\s,]+"), Qt::SkipEmptyParts)) {
        search::apply_fix(a.toStdString(), o.fixed);
    }
    return req;
}

bool SearchDialog::start_search() {
    if (runner_->running()) return false;
    search::SearchRequest req;
    try {
        req = build_request();
    } catch (const std::exception& e) {
        status_->setText(tr("Cannot search: %1").arg(QString::fromUtf8(e.what())));
        status_->setStyleSheet(QString("color: %1").arg(view_colours().error.name()));
        return false;
    }
    status_->setStyleSheet({});
    status_->setText(tr("Searching…"));
    progress_->setValue(0);
    set_running(true);
    runner_->start(std::move(req), simulate_->isChecked());
    return true;
}

void SearchDialog::cancel_search() { runner_->cancel(); }

bool SearchDialog::searching() const { return runner_->running(); }

QString SearchDialog::status_text() const { return status_->text(); }

void SearchDialog::set_running(bool running) {
    search_->setEnabled(!running);
    cancel_->setEnabled(running);
    for (QWidget* w : std::initializer_list<QWidget*>{gpus_, gbs_, seq_, top_, max_tp_, min_mfu_, fixed_, simulate_}) {
        w->setEnabled(!running);
    }
    if (!running) progress_->setFormat("%p%");
}

void SearchDialog::show_result(const search::SearchResult& r) {
    results_->set_hits(r.results);
    table_->sortByColumn(SearchResultsModel::Rank, Qt::AscendingOrder);
    if (!r.results.empty()) table_->selectRow(0);
    progress_->setValue(r.cancelled ? progress_->value() : 1000);
    QString rejected;
    for (const auto& [reason, n] : r.rejected) {
        rejected += (rejected.isEmpty() ? "" : ", ") + QString::fromStdString(reason) + " " + format_count(static_cast<double>(n));
    }
    QString text = tr("%1 of %2 layouts examined in %3 on %4 threads: %5 feasible; ranked by %6.")
                       .arg(format_count(static_cast<double>(r.processed)), format_count(static_cast<double>(r.space_size)),
                            format_duration_ns(r.elapsed_s * 1e9))
                       .arg(r.threads)
                       .arg(format_count(static_cast<double>(r.evaluated)), QString::fromStdString(r.ranked_by));
    if (r.cancelled) text = tr("Cancelled. ") + text;
    if (!rejected.isEmpty()) text += tr(" Rejected: %1.").arg(rejected);
    if (r.results.empty() && !r.closest.empty()) {
        text += tr(" Nothing fits; the closest needs %1 more per GPU.")
                    .arg(format_bytes(static_cast<double>(r.closest.front().overflow_bytes)));
    }
    status_->setText(text);
    status_->setStyleSheet(r.results.empty() ? QString("color: %1").arg(view_colours().warning.name()) : QString());
}

Layout SearchDialog::layout_at(int view_row) const {
    const QModelIndex source = sorted_->mapToSource(sorted_->index(view_row, 0));
    return results_->hit(source.row()).layout;
}

void SearchDialog::apply_row(int view_row) {
    if (view_row < 0 || view_row >= sorted_->rowCount()) return;
    const QModelIndex source = sorted_->mapToSource(sorted_->index(view_row, 0));
    const auto& hit = results_->hit(source.row());
    Layout layout = hit.layout;
    // Keep the document's own name; the description says where the layout came from.
    layout.name = current_.name;
    emit apply_requested(layout, tr("Apply search result #%1 (%2)")
                                     .arg(source.row() + 1)
                                     .arg(QString::fromStdString(search::candidate_label(hit.candidate))));
}

void SearchDialog::reject() {
    if (runner_->running()) {
        runner_->cancel();
        return;
    }
    QDialog::reject();
}

}  // namespace meshwork::gui
