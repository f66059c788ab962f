// The model palette: the layer list as a tree (blocks → attention, MLP/MoE, norms) with
// parameter counts and forward FLOPs per token.
#pragma once

#include <QTreeWidget>

#include "model/model_spec.h"

namespace meshwork::gui {

class ModelTree : public QTreeWidget {
    Q_OBJECT
public:
    explicit ModelTree(QWidget* parent = nullptr);
    void set_model(const ModelSpec& model, int seq_length);
};

}  // namespace meshwork::gui
