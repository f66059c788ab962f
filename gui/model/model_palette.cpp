#include "gui/model/model_palette.h"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>
#include <QVBoxLayout>

#include <filesystem>

#include "gui/app/theme.h"
#include "core/common/error.h"
#include "core/common/resources.h"
#include "gui/document/layout_document.h"
#include "gui/document/layout_edits.h"
#include "core/model/hf_config.h"
#include "gui/model/model_tree.h"

namespace meshwork::gui {

ModelPalette::ModelPalette(LayoutDocument* document, QWidget* parent)
    : QWidget(parent), document_(document) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);
    auto* row = new QHBoxLayout;
    presets_ = new QComboBox(this);
    presets_->setToolTip(tr("Model preset (resources/models)"));
    for (const auto& name : list_presets(PresetKind::Model)) presets_->addItem(QString::fromStdString(name));
    presets_->setMinimumContentsLength(12);
    auto* open = new QToolButton(this);
    open->setText(tr("config.json…"));
    open->setToolTip(tr("Open a Hugging Face config.json as the model"));
    row->addWidget(presets_, 1);
    row->addWidget(open);
    layout->addLayout(row);
    tree_ = new ModelTree(this);
    layout->addWidget(tree_, 1);
    message_ = new QLabel(this);
    message_->setWordWrap(true);
    message_->hide();
    layout->addWidget(message_);

    connect(presets_, &QComboBox::activated, this, [this](int index) { use_preset(presets_->itemText(index)); });
    connect(open, &QToolButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open Hugging Face config"), QString(),
                                                          tr("config.json (*.json)"));
        if (!path.isEmpty()) use_hf_config(path);
    });
    connect(document_, &LayoutDocument::changed, this, &ModelPalette::sync_from_document);
    sync_from_document();
}

void ModelPalette::sync_from_document() {
    // With only a trace open there is no model to show or edit: no preset pretends to be it.
    setEnabled(document_->has_layout());
    if (!document_->has_layout()) {
        presets_->setCurrentIndex(-1);
        presets_->setPlaceholderText(tr("no layout open"));
        return;
    }
    const Layout& l = document_->layout();
    tree_->set_layout(l);
    syncing_ = true;
    const int index = presets_->findText(QString::fromStdString(l.model_ref));
    if (index >= 0) {
        presets_->setCurrentIndex(index);
    } else {
        presets_->setCurrentIndex(-1);
        presets_->setPlaceholderText(QString::fromStdString(l.model.name));
    }
    syncing_ = false;
}

void ModelPalette::use_preset(const QString& name) {
    if (syncing_ || !document_->has_layout()) return;
    try {
        const ModelSpec model = load_model(name.toStdString(), "<preset>", "model");
        const auto outcome = document_->apply(set_model(document_->layout(), model, name.toStdString()));
        if (outcome.accepted) show_message({}, false);
        else show_message(tr("Cannot use %1: %2").arg(name, outcome.reason), true);
    } catch (const InputError& e) {
        show_message(QString::fromStdString(e.what()), true);
    }
    sync_from_document();
}

bool ModelPalette::use_hf_config(const QString& path) {
    try {
        const std::string p = path.toStdString();
        ModelSpec model = load_model(p, p, "model");
        // A config.json says nothing of its name: use the folder it sits in.
        const auto folder = std::filesystem::path(p).parent_path().filename().string();
        if (!folder.empty()) model.name = folder;
        const auto outcome = document_->apply(set_model(document_->layout(), model, p));
        if (!outcome.accepted) {
            show_message(tr("Cannot use %1: %2").arg(path, outcome.reason), true);
            return false;
        }
        show_message(tr("Model read from %1").arg(path), false);
        return true;
    } catch (const InputError& e) {
        show_message(QString::fromStdString(e.what()), true);
    }
    return false;
}

void ModelPalette::show_message(const QString& text, bool is_error) {
    message_->setVisible(!text.isEmpty());
    message_->setText(text);
    message_->setStyleSheet(QString("color: %1").arg((is_error ? view_colours().error : view_colours().text_dim).name()));
}

}  // namespace meshwork::gui
