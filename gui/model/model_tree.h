// The model's layers as a tree (blocks → attention, MLP/MoE, norms; routed experts) with
// parameter counts, forward FLOPs per token and where each block or expert is placed.
// Selected blocks or experts drag onto the mesh canvas.
#pragma once

#include <QTreeWidget>

#include "core/layout/layout.h"

namespace meshwork::gui {

class ModelTree : public QTreeWidget {
    Q_OBJECT
public:
    enum Column { NameColumn, ParamsColumn, FlopsColumn, PlaceColumn };
    enum ItemKind { OtherItem = 0, BlockItem = 1, ExpertItem = 2 };
    static constexpr int kKindRole = Qt::UserRole + 1;
    static constexpr int kIndexRole = Qt::UserRole + 2;

    explicit ModelTree(QWidget* parent = nullptr);
    // Rebuilds the tree when the model changed, else only refreshes the placement column.
    void set_layout(const Layout& layout);

    [[nodiscard]] QTreeWidgetItem* block_item(int block) const;
    [[nodiscard]] QTreeWidgetItem* expert_item(int expert) const;
    // The blocks (or, when experts are selected, the experts) a drag would carry.
    [[nodiscard]] std::vector<int> selected_blocks() const;
    [[nodiscard]] std::vector<int> selected_experts() const;

protected:
    QMimeData* mimeData(const QList<QTreeWidgetItem*>& items) const override;
    QStringList mimeTypes() const override;

private:
    void rebuild(const Layout& layout);
    void refresh_placement(const Layout& layout);

    ModelSpec model_;
    int seq_length_ = 0;
    std::vector<QTreeWidgetItem*> blocks_;
    std::vector<QTreeWidgetItem*> experts_;
};

}  // namespace meshwork::gui
