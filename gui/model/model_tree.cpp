#include "model/model_tree.h"

#include <QHeaderView>
#include <QLocale>

#include "model/layer_graph.h"

namespace meshwork::gui {

namespace {
QString count_text(double n) {
    const char* units[] = {"", "K", "M", "B", "T"};
    int i = 0;
    while (n >= 1000 && i < 4) {
        n /= 1000;
        ++i;
    }
    return QString::number(n, 'f', i == 0 ? 0 : 2) + units[i];
}
}  // namespace

ModelTree::ModelTree(QWidget* parent) : QTreeWidget(parent) {
    setColumnCount(3);
    setHeaderLabels({tr("Layer"), tr("Params"), tr("FLOPs/token")});
    header()->setSectionResizeMode(0, QHeaderView::Stretch);
    setSelectionMode(QAbstractItemView::ExtendedSelection);
    setDragEnabled(true);
    setUniformRowHeights(true);
    setAlternatingRowColors(true);
}

void ModelTree::set_model(const ModelSpec& model, int seq_length) {
    clear();
    const LayerGraph g = build_layer_graph(model);
    auto* root = new QTreeWidgetItem(this, {QString::fromStdString(model.name),
                                            count_text(static_cast<double>(g.params_total)),
                                            count_text(g.forward_flops_per_token(seq_length, true))});
    QTreeWidgetItem* block_item = nullptr;
    int current_block = -2;
    for (const auto& l : g.layers) {
        const double ctx = seq_length / 2.0;
        const double flops = l.gemm_flops_per_token + l.attention_flops_per_token_per_context * ctx;
        QTreeWidgetItem* parent_item = root;
        if (l.block >= 0) {
            if (l.block != current_block) {
                current_block = l.block;
                block_item = new QTreeWidgetItem(
                    root, {tr("Block %1").arg(l.block),
                           count_text(0), count_text(g.block_forward_flops_per_token(l.block, seq_length, true))});
                block_item->setData(0, Qt::UserRole, l.block);
            }
            parent_item = block_item;
        }
        QString name = QString::fromStdString(l.name);
        if (l.block >= 0) name = QString::fromStdString(to_string(l.kind));
        if (l.kind == LayerKind::Moe) {
            name += tr(" (%1 experts, top-%2)").arg(model.moe.num_experts).arg(model.moe.top_k);
        }
        new QTreeWidgetItem(parent_item, {name, count_text(static_cast<double>(l.params)),
                                          count_text(flops)});
        if (l.block >= 0 && block_item) {
            // Accumulate the block's parameter count as its children are added.
            const double prev = block_item->data(1, Qt::UserRole).toDouble();
            block_item->setData(1, Qt::UserRole, prev + static_cast<double>(l.params));
            block_item->setText(1, count_text(prev + static_cast<double>(l.params)));
        }
    }
    root->setExpanded(true);
}

}  // namespace meshwork::gui
