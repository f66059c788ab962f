#include "gui/mainwindow/new_layout_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QSpinBox>

#include "gui/app/theme.h"
#include "core/common/error.h"
#include "core/common/resources.h"
#include "core/layout/layout_overrides.h"

namespace meshwork::gui {

NewLayoutDialog::NewLayoutDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("New Layout"));
    auto* form = new QFormLayout(this);
    model_ = new QComboBox(this);
    for (const auto& n : list_presets(PresetKind::Model)) model_->addItem(QString::fromStdString(n));
    model_->setCurrentText("llama3-8b");
    cluster_ = new QComboBox(this);
    for (const auto& n : list_presets(PresetKind::Cluster)) cluster_->addItem(QString::fromStdString(n));
    cluster_->setCurrentText("dgx-h100");
    auto spin = [this](int lo, int hi, int value) {
        auto* s = new QSpinBox(this);
        s->setRange(lo, hi);
        s->setValue(value);
        return s;
    };
    gpus_ = spin(1, 1 << 20, 8);
    tp_ = spin(1, 64, 1);
    pp_ = spin(1, 512, 1);
    gbs_ = spin(1, 1 << 20, 64);
    seq_ = spin(16, 1 << 20, 4096);
    form->addRow(tr("Model"), model_);
    form->addRow(tr("Cluster"), cluster_);
    form->addRow(tr("GPUs"), gpus_);
    form->addRow(tr("Tensor parallel"), tp_);
    form->addRow(tr("Pipeline stages"), pp_);
    form->addRow(tr("Global batch (sequences)"), gbs_);
    form->addRow(tr("Sequence length"), seq_);
    error_ = new QLabel(this);
    error_->setWordWrap(true);
    error_->setStyleSheet(QString("color: %1").arg(view_colours().error.name()));
    error_->hide();
    form->addRow(error_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &NewLayoutDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &NewLayoutDialog::reject);
}

void NewLayoutDialog::accept() {
    LayoutOverrides flags;
    flags.model = model_->currentText().toStdString();
    flags.cluster = cluster_->currentText().toStdString();
    flags.gpus = gpus_->value();
    flags.tp = tp_->value();
    flags.pp = pp_->value();
    flags.gbs = gbs_->value();
    flags.seq = seq_->value();
    try {
        layout_ = build_layout(std::nullopt, flags);
        layout_.name = model_->currentText().toStdString() + "-" + cluster_->currentText().toStdString() +
                       "-" + std::to_string(gpus_->value());
        QDialog::accept();
    } catch (const InputError& e) {
        error_->setText(QString::fromStdString(e.what()));
        error_->show();
    }
}

}  // namespace meshwork::gui
