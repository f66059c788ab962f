// The model palette dock: a model preset chooser, "Open config.json…", and the layer tree.
// Choosing a model is an undoable layout edit; a refused choice shows its reason here.
#pragma once

#include <QWidget>

class QComboBox;
class QLabel;

namespace meshwork::gui {

class LayoutDocument;
class ModelTree;

class ModelPalette : public QWidget {
    Q_OBJECT
public:
    ModelPalette(LayoutDocument* document, QWidget* parent = nullptr);
    [[nodiscard]] ModelTree* tree() const { return tree_; }
    // Reads a Hugging Face config.json and proposes it as the layout's model.
    bool use_hf_config(const QString& path);

private:
    void sync_from_document();
    void use_preset(const QString& name);
    void show_message(const QString& text, bool is_error);

    LayoutDocument* document_;
    QComboBox* presets_ = nullptr;
    ModelTree* tree_ = nullptr;
    QLabel* message_ = nullptr;
    bool syncing_ = false;
};

}  // namespace meshwork::gui
