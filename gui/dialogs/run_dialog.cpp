#include "gui/dialogs/run_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QToolButton>
#include <QVBoxLayout>

#include "core/engine/backend_registry.h"
#include "core/engine/precision.h"
#include "core/engine/run_session.h"
#include "gui/app/format.h"
#include "gui/app/theme.h"
#include "gui/dialogs/loss_plot.h"

namespace meshwork::gui {

namespace {
QString default_profile_path(const Layout& layout) {
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::CacheLocation) + "/runs";
    QDir().mkpath(dir);
    const QString stem = QString::fromStdString(layout.name.empty() ? "run" : layout.name);
    return dir + "/" + stem + "-" + QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss") + ".sqlite";
}
}  // namespace

RunDialog::RunDialog(const Layout& layout, QWidget* parent)
    : QDialog(parent), layout_(layout), worker_(new RunWorker(this)) {
    setWindowTitle(tr("Run %1 on this machine").arg(QString::fromStdString(layout.name)));
    auto* outer = new QVBoxLayout(this);
    outer->addLayout(build_form());
    memory_ = new QLabel(this);
    memory_->setWordWrap(true);
    outer->addWidget(memory_);
    outer->addLayout(build_run_row());
    status_ = new QLabel(tr("Ready."), this);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    outer->addWidget(status_);
    loss_ = new LossPlot(this);
    outer->addWidget(loss_, 1);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    outer->addWidget(buttons);

    connect(buttons, &QDialogButtonBox::rejected, this, &RunDialog::reject);
    connect(run_, &QPushButton::clicked, this, &RunDialog::start_run);
    connect(stop_, &QPushButton::clicked, this, &RunDialog::stop_run);
    connect(profile_, &QCheckBox::toggled, profile_path_, &QWidget::setEnabled);
    connect(check_, &QCheckBox::toggled, tolerance_, &QWidget::setEnabled);
    connect(check_, &QCheckBox::toggled, this, &RunDialog::update_memory_note);
    connect(backend_, &QComboBox::currentIndexChanged, this, &RunDialog::update_memory_note);
    connect_worker();
    resize(760, 560);
    update_memory_note();
    probe_backends();
}

void RunDialog::probe_backends() {
    std::vector<engine::BackendKind> kinds;
    for (engine::BackendKind kind : engine::backend_kinds()) {
        if (kind != engine::BackendKind::Cpu) kinds.push_back(kind);
    }
    if (kinds.empty()) {
        probed_ = true;
        return;
    }
    const int gpus = layout_.gpus;
    probes_.start(
        [kinds, gpus](const JobControl&) {
            std::vector<engine::BackendInfo> infos;
            for (engine::BackendKind kind : kinds) infos.push_back(engine::probe_backend(kind, gpus));
            return infos;
        },
        [this](std::vector<engine::BackendInfo> infos) {
            for (const auto& info : infos) {
                backend_reasons_[info.kind] = QString::fromStdString(info.reason);
                mark_backend(info.kind);
            }
            probed_ = true;
            update_memory_note();
        },
        [this](const QString& message) {
            for (engine::BackendKind kind : engine::backend_kinds()) {
                if (kind == engine::BackendKind::Cpu) continue;
                backend_reasons_[kind] = message;
                mark_backend(kind);
            }
            probed_ = true;
            update_memory_note();
        });
}

void RunDialog::mark_backend(engine::BackendKind kind) {
    const QString name = QString::fromStdString(engine::to_string(kind));
    const int index = backend_->findData(name);
    if (index < 0) return;
    const QString& why = backend_reasons_[kind];
    if (why.isEmpty()) {
        backend_->setItemData(index, tr("Can run here"), Qt::ToolTipRole);
        return;
    }
    // Kept selectable, with the reason beside it: users look for it.
    backend_->setItemData(index, why, Qt::ToolTipRole);
    backend_->setItemText(index, tr("%1 — unavailable: %2").arg(name.toUpper(), why));
}

QFormLayout* RunDialog::build_form() {
    auto* form = new QFormLayout;
    backend_ = new QComboBox(this);
    // The backends of this build (engine/backend_registry.h). Whether one can run here is
    // asked on a worker thread as the dialog opens (probe_backends): an entry that cannot
    // says why before it is chosen, and opening the dialog never waits for the CUDA library.
    for (engine::BackendKind kind : engine::backend_kinds()) {
        const QString name = QString::fromStdString(engine::to_string(kind));
        backend_->addItem(name.toUpper() + QString::fromUtf8(" — ") +
                              QString::fromStdString(engine::backend_description(kind)),
                          name);
    }
    form->addRow(tr("&Backend:"), backend_);

    steps_ = new QSpinBox(this);
    steps_->setRange(1, 100000);
    steps_->setValue(5);
    form->addRow(tr("&Steps:"), steps_);
    seed_ = new QSpinBox(this);
    seed_->setRange(0, 1 << 30);
    seed_->setValue(1234);
    form->addRow(tr("S&eed:"), seed_);

    auto* check_row = new QHBoxLayout;
    check_ = new QCheckBox(tr("&Check against the unsharded reference, relative tolerance"), this);
    check_->setChecked(true);
    tolerance_ = new QDoubleSpinBox(this);
    tolerance_->setDecimals(7);
    tolerance_->setRange(1e-7, 1);
    tolerance_->setSingleStep(1e-5);
    // 1e-4 for an fp32 layout, 2e-2 for bf16 (engine/precision.h, docs/engine.md).
    tolerance_->setValue(engine::default_check_tolerance(engine::precision_of(layout_)).weights);
    check_row->addWidget(check_);
    check_row->addWidget(tolerance_);
    check_row->addStretch();
    form->addRow(QString(), check_row);

    auto* profile_row = new QHBoxLayout;
    profile_ = new QCheckBox(tr("&Profile to"), this);
    profile_->setChecked(true);
    profile_path_ = new QLineEdit(default_profile_path(layout_), this);
    auto* browse = new QToolButton(this);
    browse->setText(QString::fromUtf8("…"));
    browse->setToolTip(tr("Choose the trace file"));
    profile_row->addWidget(profile_);
    profile_row->addWidget(profile_path_, 1);
    profile_row->addWidget(browse);
    form->addRow(QString(), profile_row);
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Profile to"), profile_path_->text(),
                                                          tr("Meshwork traces (*.sqlite)"));
        if (!path.isEmpty()) profile_path_->setText(path);
    });
    return form;
}

QHBoxLayout* RunDialog::build_run_row() {
    auto* run_row = new QHBoxLayout;
    run_ = new QPushButton(tr("&Run"), this);
    run_->setDefault(true);
    stop_ = new QPushButton(tr("S&top"), this);
    stop_->setEnabled(false);
    progress_ = new QProgressBar(this);
    progress_->setRange(0, steps_->value());
    progress_->setValue(0);
    progress_->setFormat(tr("step %v of %m"));
    run_row->addWidget(run_);
    run_row->addWidget(stop_);
    run_row->addWidget(progress_, 1);
    return run_row;
}

void RunDialog::connect_worker() {
    connect(worker_, &RunWorker::phase, this, [this](const QString& text) { show_status(text, view_colours().text); });
    connect(worker_, &RunWorker::step_done, this, [this](int step, double loss, double step_time_s, double tokens_per_s) {
        progress_->setValue(step);
        loss_->add(step, loss);
        show_status(tr("Step %1 of %2: loss %3, %4 per step, %5 tokens/s")
                        .arg(step)
                        .arg(steps_->value())
                        .arg(loss, 0, 'f', 5)
                        .arg(format_duration_ns(step_time_s * 1e9), format_count(tokens_per_s)),
                    view_colours().text);
    });
    connect(worker_, &RunWorker::finished, this, &RunDialog::show_outcome);
    connect(worker_, &RunWorker::failed, this, [this](const QString& message) {
        set_running(false);
        show_status(tr("Run failed: %1").arg(message), view_colours().error);
        emit run_done(false);
    });
}

void RunDialog::show_outcome(const RunOutcome& o) {
    outcome_ = o;
    set_running(false);
    const auto& c = view_colours();
    QString text = o.cancelled ? tr("Stopped after %n step(s).", "", o.steps_done)
                               : tr("Finished %n step(s); peak %1 on the largest rank.", "", o.steps_done)
                                     .arg(format_bytes(o.peak_bytes));
    QColor colour = o.cancelled ? c.warning : c.ok;
    if (o.check_ran) {
        text += o.check_passed ? tr(" Check passed: losses and weights match the reference within %1.")
                                     .arg(tolerance_->value())
                               : tr(" Check FAILED: %1").arg(o.check_text);
        if (!o.check_passed) colour = c.error;
    }
    if (!o.profile_path.isEmpty()) text += tr(" Profile: %1").arg(o.profile_path);
    show_status(text, colour);
    emit run_done(!o.cancelled && (!o.check_ran || o.check_passed));
    if (!o.profile_path.isEmpty()) emit profile_ready(o.profile_path);
}

void RunDialog::set_steps(int steps) { steps_->setValue(steps); }
void RunDialog::set_check(bool check) { check_->setChecked(check); }
void RunDialog::set_profile_path(const QString& path) {
    profile_->setChecked(!path.isEmpty());
    profile_path_->setText(path);
}

QString RunDialog::status_text() const { return status_->text(); }

engine::RunRequest RunDialog::build_request() const {
    engine::RunRequest r;
    r.layout = layout_;
    r.options.backend = selected_backend();
    r.options.steps = steps_->value();
    r.options.seed = static_cast<std::uint64_t>(seed_->value());
    r.check = check_->isChecked();
    // The precision's default weights tolerance comes with its own loss tolerance (tighter
    // for bf16); another value sets both, as meshwork-cli run --tolerance does.
    if (tolerance_->value() != engine::default_check_tolerance(engine::precision_of(layout_)).weights) {
        r.tolerance = tolerance_->value();
    }
    if (profile_->isChecked()) r.profile_path = profile_path_->text().trimmed().toStdString();
    return r;
}

engine::BackendKind RunDialog::selected_backend() const {
    return engine::parse_backend(backend_->currentData().toString().toStdString()).value_or(engine::BackendKind::Cpu);
}

void RunDialog::show_memory_note(const QString& text, const QColor& colour) {
    memory_->setText(text);
    memory_->setStyleSheet(QString("color: %1").arg(colour.name()));
}

void RunDialog::update_memory_note() {
    const auto& c = view_colours();
    const engine::BackendKind kind = selected_backend();
    if (kind != engine::BackendKind::Cpu) {
        const QString name = backend_->currentData().toString().toUpper();
        if (!backend_reasons_.contains(kind)) {
            // Still being probed: the answer comes back here.
            fits_ = false;
            show_memory_note(tr("Checking whether the %1 backend can run here…").arg(name), c.text_dim);
            run_->setEnabled(false);
            return;
        }
        const QString& why = backend_reasons_[kind];
        if (!why.isEmpty()) {
            fits_ = false;
            show_memory_note(tr("The %1 backend cannot run here: %2").arg(name, why), c.error);
            run_->setEnabled(false);
            return;
        }
    }
    // The same checks and host-memory policy as meshwork-cli run (engine/run_session.h).
    try {
        const engine::RunRequest request = build_request();
        const auto need = engine::host_memory_need(engine::preflight(request), kind, request.launcher, request.check);
        fits_ = true;
        show_memory_note(tr("Predicted memory of the run: %1 on this machine (%2 installed).")
                             .arg(format_bytes(need.need_bytes),
                                  need.host_bytes > 0 ? format_bytes(need.host_bytes) : tr("unknown")),
                         c.text_dim);
    } catch (const std::exception& e) {
        fits_ = false;
        show_memory_note(tr("This layout cannot run in the engine: %1").arg(QString::fromUtf8(e.what())), c.error);
    }
    run_->setEnabled(fits_ && !worker_->running());
}

bool RunDialog::start_run() {
    update_memory_note();
    if (!fits_ || worker_->running()) {
        show_status(memory_->text(), view_colours().error);
        return false;
    }
    engine::RunRequest request = build_request();
    if (profile_->isChecked() && request.profile_path.empty()) {
        show_status(tr("Choose a file for the profile, or untick Profile."), view_colours().error);
        return false;
    }
    loss_->clear();
    progress_->setRange(0, request.options.steps);
    progress_->setValue(0);
    outcome_ = {};
    set_running(true);
    worker_->start(std::move(request));
    return true;
}

void RunDialog::stop_run() {
    worker_->cancel();
    show_status(tr("Stopping at the next op…"), view_colours().warning);
}

void RunDialog::set_running(bool running) {
    run_->setEnabled(!running && fits_);
    stop_->setEnabled(running);
    for (QWidget* w : std::initializer_list<QWidget*>{backend_, steps_, seed_, check_, tolerance_, profile_, profile_path_}) {
        w->setEnabled(!running);
    }
    if (!running) {
        tolerance_->setEnabled(check_->isChecked());
        profile_path_->setEnabled(profile_->isChecked());
    }
}

void RunDialog::show_status(const QString& text, const QColor& colour) {
    status_->setText(text);
    status_->setStyleSheet(QString("color: %1").arg(colour.name()));
}

void RunDialog::reject() {
    if (worker_->running()) {
        stop_run();
        return;
    }
    QDialog::reject();
}

}  // namespace meshwork::gui
