#include "gui/model/model_tree.h"

#include <QHeaderView>

#include <set>

#include "gui/app/format.h"
#include "gui/document/layout_mime.h"
#include "core/model/layer_graph.h"

namespace meshwork::gui {

namespace {
// Forward FLOPs per token of one layer, causal (seq/2 keys, fewer in windowed blocks).
double layer_flops(const Layer& l, int seq_length) {
    return l.gemm_flops_per_token + l.attention_flops_per_token_per_context * l.context(seq_length, true) +
           l.full_context_flops_per_token_per_context * Layer{}.context(seq_length, true);
}

QTreeWidgetItem* add_item(QTreeWidgetItem* parent, const QString& name, double params, double flops) {
    auto* item = new QTreeWidgetItem(parent, {name, format_count(params), format_count(flops), {}});
    item->setTextAlignment(ModelTree::ParamsColumn, Qt::AlignRight | Qt::AlignVCenter);
    item->setTextAlignment(ModelTree::FlopsColumn, Qt::AlignRight | Qt::AlignVCenter);
    item->setFlags(item->flags() & ~Qt::ItemIsDragEnabled);
    return item;
}
}  // namespace

ModelTree::ModelTree(QWidget* parent) : QTreeWidget(parent) {
    setColumnCount(4);
    setHeaderLabels({tr("Layer"), tr("Params"), tr("FLOPs/tok"), tr("Place")});
    header()->setSectionResizeMode(NameColumn, QHeaderView::Stretch);
    for (int c : {ParamsColumn, FlopsColumn, PlaceColumn}) {
        header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    }
    header()->setStretchLastSection(false);
    setSelectionMode(QAbstractItemView::ExtendedSelection);
    setDragEnabled(true);
    setDragDropMode(QAbstractItemView::DragOnly);
    setUniformRowHeights(true);
    setAlternatingRowColors(true);
    setToolTip(tr("Select blocks or experts (Shift/Ctrl for several) and drag them onto a "
                  "pipeline stage or an EP rank of the mesh"));
}

void ModelTree::set_layout(const Layout& layout) {
    if (!(layout.model == model_) || layout.training.seq_length != seq_length_ || blocks_.empty()) {
        rebuild(layout);
    }
    refresh_placement(layout);
}

void ModelTree::rebuild(const Layout& layout) {
    clear();
    blocks_.clear();
    experts_.clear();
    model_ = layout.model;
    seq_length_ = layout.training.seq_length;
    const LayerGraph g = build_layer_graph(model_);
    auto* root = add_item(nullptr, QString::fromStdString(model_.name),
                          static_cast<double>(g.params_total),
                          g.forward_flops_per_token(seq_length_, true));
    addTopLevelItem(root);
    QFont bold = root->font(NameColumn);
    bold.setBold(true);
    root->setFont(NameColumn, bold);
    blocks_.assign(static_cast<std::size_t>(model_.num_layers), nullptr);
    std::vector<double> block_params(blocks_.size(), 0);
    for (const auto& l : g.layers) {
        if (l.block < 0) {
            add_item(root, QString::fromStdString(l.name), static_cast<double>(l.params),
                     layer_flops(l, seq_length_));
            continue;
        }
        auto& block = blocks_[static_cast<std::size_t>(l.block)];
        if (!block) {
            // The block's kind as Megatron-LM's hybrid pattern spells it (M Mamba-2,
            // * attention, G Gated DeltaNet, S sparse attention; - MLP, E MoE).
            const QString kind = model_.is_hybrid() || model_.has_mixer(MixerKind::SparseAttention)
                                     ? QStringLiteral(" [%1]").arg(QString::fromStdString(model_.block_letters(l.block)))
                                     : QString();
            block = add_item(root, tr("Block %1").arg(l.block) + kind, 0,
                             g.block_forward_flops_per_token(l.block, seq_length_, true));
            block->setData(NameColumn, kKindRole, BlockItem);
            block->setData(NameColumn, kIndexRole, l.block);
            block->setFlags(block->flags() | Qt::ItemIsDragEnabled);
        }
        QString name = QString::fromStdString(to_string(l.kind));
        if (l.kind == LayerKind::Moe) {
            name += tr(" · %1 experts, top-%2").arg(model_.moe.num_experts).arg(model_.moe.top_k);
        }
        auto* child = add_item(block, name, static_cast<double>(l.params), layer_flops(l, seq_length_));
        // A layer inside a block drags its whole block: placement is per block.
        child->setFlags(child->flags() | Qt::ItemIsDragEnabled);
        child->setData(NameColumn, kKindRole, BlockItem);
        child->setData(NameColumn, kIndexRole, l.block);
        block_params[static_cast<std::size_t>(l.block)] += static_cast<double>(l.params);
    }
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
        if (blocks_[b]) blocks_[b]->setText(ParamsColumn, format_count(block_params[b]));
    }
    if (model_.is_moe()) {
        const auto& moe = model_.moe;
        // Parameters of one routed expert in one MoE block (gated: gate, up, down).
        const double per_expert = static_cast<double>(model_.hidden_size) *
                                  static_cast<double>(moe.expert_ffn_hidden) *
                                  (model_.mlp == MlpKind::Gated ? 3.0 : 2.0);
        auto* group = add_item(root, tr("Routed experts · %1 × %2 MoE blocks")
                                         .arg(moe.num_experts).arg(model_.num_moe_blocks()),
                               per_expert * moe.num_experts * model_.num_moe_blocks(), 0);
        group->setText(FlopsColumn, {});
        for (int e = 0; e < moe.num_experts; ++e) {
            auto* item = add_item(group, tr("Expert %1").arg(e), per_expert * model_.num_moe_blocks(), 0);
            item->setText(FlopsColumn, {});
            item->setFlags(item->flags() | Qt::ItemIsDragEnabled);
            item->setData(NameColumn, kKindRole, ExpertItem);
            item->setData(NameColumn, kIndexRole, e);
            experts_.push_back(item);
        }
    }
    root->setExpanded(true);
}

void ModelTree::refresh_placement(const Layout& layout) {
    const auto split = layout.stage_layers();
    const int pp = layout.parallel.mesh.pp;
    int at = 0;
    for (std::size_t c = 0; c < split.size(); ++c) {
        const int stage = static_cast<int>(c) % pp;
        const QString text = layout.parallel.vpp > 1
                                 ? tr("S%1.%2").arg(stage).arg(static_cast<int>(c) / pp)
                                 : tr("S%1").arg(stage);
        for (int b = at; b < at + split[c] && b < static_cast<int>(blocks_.size()); ++b) {
            if (blocks_[static_cast<std::size_t>(b)]) blocks_[static_cast<std::size_t>(b)]->setText(PlaceColumn, text);
        }
        at += split[c];
    }
    const auto placed = layout.ep_experts();
    for (std::size_t r = 0; r < placed.size(); ++r) {
        for (int e : placed[r]) {
            if (e >= 0 && e < static_cast<int>(experts_.size())) {
                experts_[static_cast<std::size_t>(e)]->setText(PlaceColumn, tr("EP%1").arg(r));
            }
        }
    }
}

QTreeWidgetItem* ModelTree::block_item(int block) const {
    return block >= 0 && block < static_cast<int>(blocks_.size()) ? blocks_[static_cast<std::size_t>(block)] : nullptr;
}

QTreeWidgetItem* ModelTree::expert_item(int expert) const {
    return expert >= 0 && expert < static_cast<int>(experts_.size()) ? experts_[static_cast<std::size_t>(expert)] : nullptr;
}

namespace {
std::vector<int> indices_of(const QList<QTreeWidgetItem*>& items, int kind) {
    std::set<int> out;
    for (const auto* item : items) {
        if (item->data(ModelTree::NameColumn, ModelTree::kKindRole).toInt() == kind) {
            out.insert(item->data(ModelTree::NameColumn, ModelTree::kIndexRole).toInt());
        }
    }
    return {out.begin(), out.end()};
}
}  // namespace

std::vector<int> ModelTree::selected_blocks() const { return indices_of(selectedItems(), BlockItem); }

std::vector<int> ModelTree::selected_experts() const { return indices_of(selectedItems(), ExpertItem); }

QStringList ModelTree::mimeTypes() const { return {kBlocksMime, kExpertsMime}; }

QMimeData* ModelTree::mimeData(const QList<QTreeWidgetItem*>& items) const {
    const auto experts = indices_of(items, ExpertItem);
    if (!experts.empty()) return make_index_mime(kExpertsMime, experts);
    const auto blocks = indices_of(items, BlockItem);
    if (!blocks.empty()) return make_index_mime(kBlocksMime, blocks);
    return nullptr;
}

}  // namespace meshwork::gui
