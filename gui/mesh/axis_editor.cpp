#include "gui/mesh/axis_editor.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QSpinBox>

#include "gui/app/theme.h"
#include "gui/document/layout_document.h"
#include "gui/document/layout_edits.h"
#include "gui/mesh/axis_spin_box.h"
#include "gui/training/choice_box.h"
#include "core/layout/layout_rules.h"
#include "core/mesh/device_mesh.h"

namespace meshwork::gui {

namespace {
struct AxisRow {
    const char* axis;
    const char* label;
    const char* tip;
};
const AxisRow kAxes[] = {
    {"tp", "Tensor (TP)", "Tensor-parallel ranks per layer (usually inside a node)"},
    {"pp", "Pipeline (PP)", "Pipeline stages"},
    {"cp", "Context (CP)", "Context-parallel ranks splitting the sequence"},
    {"ep", "Expert (EP)", "Expert-parallel ranks (MoE models)"},
    {"etp", "Expert TP", "Tensor parallelism inside each expert"},
    {"vpp", "Virtual stages", "Model chunks per pipeline rank (interleaved schedule)"},
};
// Orders seen in practice; any permutation can be typed.
const char* const kOrders[] = {"tp-cp-ep-dp-pp", "tp-cp-dp-pp-ep", "tp-dp-cp-pp-ep", "tp-pp-cp-ep-dp",
                               "dp-tp-cp-ep-pp"};
// parallel.tp_comm_overlap (docs/cost-model.md, "TP communication overlap").
struct OverlapItem {
    TpOverlap mode;
    const char* label;
    const char* tip;
};
const OverlapItem kOverlaps[] = {
    {TpOverlap::None, "None", "The SP all-gathers and reduce-scatters run between the GEMMs, exposed"},
    {TpOverlap::Pipe, "Pipelined (pipe)",
     "Each collective split into tp chunks beside its GEMM; the first chunk's transfer stays exposed"},
    {TpOverlap::Ring, "Ring exchange (ring)",
     "Each collective split into tp chunks beside its GEMM, nothing exposed but the interference "
     "(Megatron-LM's --tp-comm-overlap)"},
};
// parallel.moe_dispatcher and moe_flex_backend (docs/cost-model.md, "Expert dispatch").
struct DispatchItem {
    MoeDispatcher dispatcher;
    MoeFlexBackend backend;
    const char* data;
    const char* label;
    const char* tip;
};
const DispatchItem kDispatches[] = {
    {MoeDispatcher::AllGather, MoeFlexBackend::DeepEP, "allgather", "All-gather",
     "Every EP rank gathers all tokens and keeps those of its experts (--moe-token-dispatcher-type allgather)"},
    {MoeDispatcher::AllToAll, MoeFlexBackend::DeepEP, "alltoall", "All-to-all",
     "Each token copy sent to the rank of its expert, top-k copies per token (alltoall, the default)"},
    {MoeDispatcher::Flex, MoeFlexBackend::DeepEP, "flex:deepep", "Flex · DeepEP",
     "A token crosses the network once per destination node and fans out over NVLink there "
     "(--moe-token-dispatcher-type flex, DeepEP)"},
    {MoeDispatcher::Flex, MoeFlexBackend::HybridEP, "flex:hybridep", "Flex · HybridEP",
     "Per-node dispatch as DeepEP, with NVIDIA's HybridEP kernels (--moe-flex-dispatcher-backend hybridep)"},
};
QString dispatch_data(const ParallelConfig& p) {
    if (p.moe_dispatcher != MoeDispatcher::Flex) return QString::fromStdString(to_string(p.moe_dispatcher));
    return QString::fromStdString("flex:" + to_string(p.moe_flex_backend));
}
}  // namespace

AxisEditor::AxisEditor(LayoutDocument* document, QWidget* parent) : QWidget(parent), document_(document) {
    auto* form = new QFormLayout(this);
    form->setContentsMargins(8, 8, 8, 8);
    form->setLabelAlignment(Qt::AlignRight);
    for (const auto& row : kAxes) {
        auto* spin = new AxisSpinBox(this);
        spin->setRange(1, 16384);
        spin->setKeyboardTracking(false);
        spin->setToolTip(tr(row.tip));
        spin->setAccessibleName(row.axis);
        spins_[row.axis] = spin;
        form->addRow(tr(row.label), spin);
        const std::string axis = row.axis;
        // The arrows step through the values the layout accepts (divisors of the GPUs for
        // tp, pp and cp; whatever validation allows for the others).
        spin->set_accepts([this, axis](int v) {
            return document_->has_layout() && document_->check(set_mesh_axis(document_->layout(), axis, v)).accepted;
        });
        connect(spin, &QSpinBox::valueChanged, this, [this, axis](int v) { axis_changed(axis, v); });
    }
    dp_ = new QLabel(this);
    dp_->setToolTip(tr("Data-parallel replicas: the GPUs divided by tp×pp×cp"));
    form->addRow(tr("Data (DP)"), dp_);
    world_ = new QLabel(this);
    form->addRow(tr("World"), world_);
    order_ = new QComboBox(this);
    order_->setEditable(true);
    order_->setInsertPolicy(QComboBox::NoInsert);
    for (const char* o : kOrders) order_->addItem(o);
    order_->setToolTip(tr("Rank order, fastest-varying axis first (Megatron's convention)"));
    form->addRow(tr("Rank order"), order_);
    connect(order_, &QComboBox::textActivated, this, &AxisEditor::order_changed);
    sp_ = new QCheckBox(this);
    sp_->setToolTip(tr("Sequence parallelism (parallel.sequence_parallel): activations outside "
                       "the GEMMs are split over the TP ranks; needed for TP overlap"));
    sp_->setAccessibleName("sequence_parallel");
    form->addRow(tr("Sequence parallel"), sp_);
    connect(sp_, &QCheckBox::toggled, this, &AxisEditor::sequence_parallel_changed);
    tp_overlap_ = new QComboBox(this);
    tp_overlap_->setAccessibleName("tp_comm_overlap");
    for (const auto& item : kOverlaps) {
        add_choice(tp_overlap_, tr(item.label), spelt(to_string(item.mode)), tr(item.tip));
    }
    form->addRow(tr("TP comm overlap"), tp_overlap_);
    connect(tp_overlap_, &QComboBox::activated, this, &AxisEditor::tp_overlap_changed);
    dp_overlap_ = new QCheckBox(this);
    dp_overlap_->setAccessibleName("dp_comm_overlap");
    dp_overlap_->setToolTip(tr("Each model chunk's gradient reduction beside the backward and the parameter "
                               "gather beside the forwards (parallel.overlap_grad_reduce, "
                               "overlap_param_gather; Megatron-LM's --overlap-grad-reduce --overlap-param-gather)"));
    form->addRow(tr("DP comm overlap"), dp_overlap_);
    connect(dp_overlap_, &QCheckBox::toggled, this, &AxisEditor::dp_overlap_changed);
    moe_dispatch_ = new QComboBox(this);
    moe_dispatch_->setAccessibleName("moe_dispatch");
    for (const auto& item : kDispatches) add_choice(moe_dispatch_, tr(item.label), QString(item.data), tr(item.tip));
    form->addRow(tr("MoE dispatch"), moe_dispatch_);
    connect(moe_dispatch_, &QComboBox::activated, this, &AxisEditor::moe_dispatch_changed);
    moe_a2a_overlap_ = new QCheckBox(this);
    moe_a2a_overlap_->setAccessibleName("moe_a2a_overlap");
    form->addRow(tr("MoE A2A overlap"), moe_a2a_overlap_);
    connect(moe_a2a_overlap_, &QCheckBox::toggled, this, &AxisEditor::moe_a2a_overlap_changed);
    message_ = new QLabel(this);
    message_->setWordWrap(true);
    message_->hide();
    form->addRow(message_);
    connect(document_, &LayoutDocument::changed, this, &AxisEditor::sync_from_document);
    sync_from_document();
}

QSpinBox* AxisEditor::spin_box(const std::string& axis) const {
    const auto it = spins_.find(axis);
    return it == spins_.end() ? nullptr : it->second;
}

QString AxisEditor::last_refusal() const { return message_->isVisible() ? message_->text() : QString(); }

void AxisEditor::sync_from_document() {
    setEnabled(document_->has_layout());  // a trace alone has no layout to edit
    if (!document_->has_layout()) return;
    const Layout& l = document_->layout();
    syncing_ = true;
    const auto& m = l.parallel.mesh;
    const std::map<std::string, int> values{{"tp", m.tp}, {"pp", m.pp}, {"cp", m.cp},
                                            {"ep", m.ep}, {"etp", m.etp}, {"vpp", l.parallel.vpp}};
    for (auto& [axis, spin] : spins_) {
        // No axis can exceed the GPUs, nor vpp the layers: this also bounds the arrows' search.
        spin->setMaximum(std::max(values.at(axis), axis == "vpp" ? std::max(1, l.model.num_layers) : std::max(1, l.gpus)));
        spin->setValue(values.at(axis));
        static_cast<AxisSpinBox*>(spin)->invalidate();
    }
    spins_["ep"]->setEnabled(l.model.is_moe());
    spins_["etp"]->setEnabled(l.model.is_moe());
    dp_->setText(QString::number(m.dp));
    world_->setText(tr("%1 GPUs · %2 per node").arg(l.gpus).arg(l.cluster.gpus_per_node));
    order_->setCurrentText(QString::fromStdString(m.order));
    sp_->setChecked(l.parallel.sequence_parallel);
    sp_->setEnabled(m.tp > 1 || l.parallel.sequence_parallel);
    tp_overlap_->setCurrentIndex(tp_overlap_->findData(QString::fromStdString(to_string(l.parallel.tp_comm_overlap))));
    // Pipe and ring tile the SP collectives: with tp 1 or without SP there are none (the
    // layout may still say so, then validation names it; the chooser stays open to undo it).
    const bool can_overlap = rules::tp_overlap_needs_sp(TpOverlap::Ring, m.tp, l.parallel.sequence_parallel);
    tp_overlap_->setEnabled(can_overlap || l.parallel.tp_comm_overlap != TpOverlap::None);
    tp_overlap_->setToolTip(can_overlap ? tr("Tiled overlap of the SP collectives with the GEMMs beside them "
                                             "(parallel.tp_comm_overlap)")
                                        : tr("Needs sequence parallelism with tp > 1"));
    dp_overlap_->setChecked(l.parallel.overlap_grad_reduce && l.parallel.overlap_param_gather);
    // Without data parallelism there is nothing to reduce or gather.
    dp_overlap_->setEnabled(m.dp > 1 || !dp_overlap_->isChecked());
    const auto& p = l.parallel;
    moe_dispatch_->setCurrentIndex(moe_dispatch_->findData(dispatch_data(p)));
    const bool default_dispatch = p.moe_dispatcher == ParallelConfig{}.moe_dispatcher;
    moe_dispatch_->setEnabled(l.model.is_moe() || !default_dispatch);
    moe_dispatch_->setToolTip(l.model.is_moe() ? tr("How tokens reach their experts' ranks (parallel.moe_dispatcher, "
                                                   "moe_flex_backend; Megatron-LM's --moe-token-dispatcher-type)")
                                               : tr("Only MoE models dispatch tokens"));
    moe_a2a_overlap_->setChecked(p.moe_a2a_overlap);
    // Open where Megatron-LM runs it (or to clear it where a file set it).
    const bool runs = rules::moe_a2a_overlap_runs(m.ep, p.moe_dispatcher, m.pp, p.vpp, l.training.recompute,
                                                  l.training.dtype, l.model.mtp_layers);
    moe_a2a_overlap_->setEnabled(runs || p.moe_a2a_overlap);
    moe_a2a_overlap_->setToolTip(
        runs ? tr("One micro-batch's dispatch and combine beside another's compute (parallel.moe_a2a_overlap; "
                  "Megatron-LM's --overlap-moe-expert-parallel-comm)")
             : tr("Megatron-LM runs it only with ep > 1, the alltoall or flex dispatcher, virtual stages when "
                  "pp > 1, no full recompute, 16-bit or fp8 training and at most one MTP layer"));
    syncing_ = false;
}

void AxisEditor::axis_changed(const std::string& axis, int value) {
    if (syncing_ || !document_->has_layout()) return;
    apply_edit(set_mesh_axis(document_->layout(), axis, value), tr("%1 = %2").arg(QString::fromStdString(axis)).arg(value));
}

void AxisEditor::order_changed(const QString& order) {
    if (syncing_ || !document_->has_layout()) return;
    if (!is_axis_order(order.toStdString())) {
        show_refusal(tr("“%1” is not an order of tp, cp, ep, dp, pp").arg(order));
        sync_from_document();
        return;
    }
    apply_edit(set_axis_order(document_->layout(), order.toStdString()), tr("Order"));
}

void AxisEditor::sequence_parallel_changed(bool on) {
    if (syncing_ || !document_->has_layout()) return;
    apply_edit(set_sequence_parallel(document_->layout(), on), tr("Sequence parallelism"));
}

void AxisEditor::tp_overlap_changed(int index) {
    if (syncing_ || !document_->has_layout() || index < 0) return;
    TpOverlap mode = TpOverlap::None;
    if (!parse_tp_overlap(tp_overlap_->itemData(index).toString().toStdString(), mode)) return;
    if (mode == document_->layout().parallel.tp_comm_overlap) return;
    apply_edit(set_tp_comm_overlap(document_->layout(), mode), tr("TP overlap"));
}

void AxisEditor::dp_overlap_changed(bool on) {
    if (syncing_ || !document_->has_layout()) return;
    apply_edit(set_dp_overlap(document_->layout(), on), tr("DP overlap"));
}

void AxisEditor::moe_dispatch_changed(int index) {
    if (syncing_ || !document_->has_layout() || index < 0) return;
    const QString chosen = moe_dispatch_->itemData(index).toString();
    for (const auto& item : kDispatches) {
        if (chosen == item.data) apply_edit(set_moe_dispatch(document_->layout(), item.dispatcher, item.backend), tr("MoE dispatch"));
    }
}

void AxisEditor::moe_a2a_overlap_changed(bool on) {
    if (syncing_ || !document_->has_layout()) return;
    apply_edit(set_moe_a2a_overlap(document_->layout(), on), tr("MoE all-to-all overlap"));
}

// Applies `edit`; a refusal shows "<what> refused: <reason>" and the dock snaps back.
void AxisEditor::apply_edit(const ProposedEdit& edit, const QString& what) {
    const auto outcome = document_->apply(edit);
    show_refusal(outcome.accepted ? QString() : tr("%1 refused: %2").arg(what, outcome.reason));
    if (!outcome.accepted) sync_from_document();
}

void AxisEditor::show_refusal(const QString& text) {
    message_->setVisible(!text.isEmpty());
    message_->setText(text);
    message_->setStyleSheet(QString("color: %1").arg(view_colours().error.name()));
}

}  // namespace meshwork::gui
