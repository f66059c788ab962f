#include "gui/dialogs/export_dialog.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include "gui/app/theme.h"
#include "core/export/exporter.h"
#include "core/export/text_file.h"

namespace meshwork::gui {

namespace {
struct FormatEntry {
    ExportFormat format;
    const char* label;
    const char* extension;
};
constexpr FormatEntry kFormats[] = {
    {ExportFormat::Megatron, "Megatron-LM arguments", "megatron.sh"},
    {ExportFormat::DeepSpeed, "DeepSpeed config (JSON)", "deepspeed.json"},
    {ExportFormat::Torchtitan, "torchtitan config module (Python, main)", "torchtitan.py"},
    {ExportFormat::TorchtitanToml, "torchtitan v0.2 job config (TOML)", "torchtitan.toml"},
    {ExportFormat::Slurm, "SLURM batch script", "sbatch"},
    {ExportFormat::Layout, "Meshwork layout (JSON)", "layout.json"},
};
constexpr SlurmTrainer kTrainers[] = {SlurmTrainer::Megatron, SlurmTrainer::Torchtitan, SlurmTrainer::Meshwork};
}  // namespace

ExportDialog::ExportDialog(const Layout& layout, const QString& layout_path, QWidget* parent)
    : QDialog(parent), layout_(layout), layout_path_(layout_path) {
    setWindowTitle(tr("Export layout"));
    auto* outer = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    format_ = new QComboBox(this);
    for (const auto& f : kFormats) format_->addItem(tr(f.label));
    form->addRow(tr("&Format:"), format_);
    trainer_ = new QComboBox(this);
    trainer_->addItems({tr("Megatron-LM (pretrain_gpt.py)"), tr("torchtitan"), tr("meshwork-cli run (MPI)")});
    trainer_label_ = new QLabel(tr("&Trainer:"), this);
    trainer_label_->setBuddy(trainer_);
    form->addRow(trainer_label_, trainer_);
    outer->addLayout(form);

    lost_label_ = new QLabel(this);
    lost_label_->setWordWrap(true);
    lost_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    outer->addWidget(lost_label_);

    preview_ = new QPlainTextEdit(this);
    preview_->setReadOnly(true);
    preview_->setLineWrapMode(QPlainTextEdit::NoWrap);
    preview_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    outer->addWidget(preview_, 1);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    auto* copy = buttons->addButton(tr("&Copy"), QDialogButtonBox::ActionRole);
    save_ = buttons->addButton(tr("&Save…"), QDialogButtonBox::AcceptRole);
    save_->setDefault(true);
    connect(copy, &QPushButton::clicked, this, &ExportDialog::copy_to_clipboard);
    // Save opens a file chooser and keeps the dialog open (the user may export another format).
    disconnect(buttons, &QDialogButtonBox::accepted, nullptr, nullptr);
    connect(save_, &QPushButton::clicked, this, [this] {
        const QString dir = QSettings().value("files/last_export_dir", QFileInfo(layout_path_).absolutePath()).toString();
        const QString path = QFileDialog::getSaveFileName(this, tr("Save export"), dir + "/" + suggested_file_name());
        if (path.isEmpty()) return;
        QSettings().setValue("files/last_export_dir", QFileInfo(path).absolutePath());
        if (!save_to(path)) lost_label_->setText(last_error_);
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    outer->addWidget(buttons);

    connect(format_, &QComboBox::currentIndexChanged, this, &ExportDialog::refresh);
    connect(trainer_, &QComboBox::currentIndexChanged, this, &ExportDialog::refresh);
    format_->setCurrentIndex(QSettings().value("export/format", 0).toInt());
    resize(860, 620);
    refresh();
}

ExportFormat ExportDialog::format() const {
    return kFormats[std::clamp(format_->currentIndex(), 0, static_cast<int>(std::size(kFormats)) - 1)].format;
}

void ExportDialog::set_format(ExportFormat format) {
    for (int i = 0; i < static_cast<int>(std::size(kFormats)); ++i) {
        if (kFormats[i].format == format) format_->setCurrentIndex(i);
    }
    refresh();
}

QString ExportDialog::suggested_file_name() const {
    const QString stem = layout_path_.isEmpty() ? QString::fromStdString(layout_.name.empty() ? "layout" : layout_.name)
                                                : QFileInfo(layout_path_).completeBaseName();
    return stem + "." + kFormats[format_->currentIndex()].extension;
}

void ExportDialog::refresh() {
    const bool slurm = format() == ExportFormat::Slurm;
    trainer_->setVisible(slurm);
    trainer_label_->setVisible(slurm);
    QSettings().setValue("export/format", format_->currentIndex());
    ExportOptions options;
    options.slurm_trainer = kTrainers[std::clamp(trainer_->currentIndex(), 0, 2)];
    const auto& c = view_colours();
    lost_.clear();
    try {
        const ExportResult r = export_layout(layout_, format(), options);
        preview_->setPlainText(QString::fromStdString(r.text));
        for (const auto& l : r.lost) lost_ << QString::fromStdString(l);
        save_->setEnabled(true);
        if (lost_.isEmpty()) {
            lost_label_->setText(tr("Lossless: every setting of the layout is expressed."));
            lost_label_->setStyleSheet(QString("color: %1").arg(c.ok.name()));
        } else {
            QString items;
            for (const auto& l : lost_) items += "<li>" + l.toHtmlEscaped() + "</li>";
            lost_label_->setText(tr("<b>Not expressible in this format</b> (the export drops it):<ul>%1</ul>").arg(items));
            lost_label_->setStyleSheet(QString("color: %1").arg(c.warning.name()));
        }
    } catch (const std::exception& e) {
        preview_->clear();
        save_->setEnabled(false);
        lost_label_->setText(tr("Cannot export: %1").arg(QString::fromUtf8(e.what())));
        lost_label_->setStyleSheet(QString("color: %1").arg(c.error.name()));
    }
}

QString ExportDialog::preview_text() const { return preview_->toPlainText(); }

void ExportDialog::copy_to_clipboard() { QApplication::clipboard()->setText(preview_->toPlainText()); }

bool ExportDialog::save_to(const QString& path) {
    try {
        save_text_file(preview_->toPlainText().toStdString(), path.toStdString());
        last_error_.clear();
        return true;
    } catch (const std::exception& e) {
        last_error_ = tr("Cannot save %1: %2").arg(path, QString::fromUtf8(e.what()));
        return false;
    }
}

}  // namespace meshwork::gui
